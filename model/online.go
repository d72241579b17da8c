package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/trace"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/mem"
	"github.com/nmfstream/nmfstream/internal/vec"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// Online learns a factorization from a stream (docs/DESIGN.md §3): GNMF by
// default, or NMF, DGNMF, SSKNMF, N2S2L or NGE (Method). Samples enter an exact
// k-NN graph incrementally (model/graph), which also keeps the label
// graphs of the label-aware methods exact under insertion, removal and late
// labels. Each batch warm-starts the new samples' codes from their
// projection on U, runs a few multiplicative sweeps on the rows whose
// neighbourhood or label graphs changed, and takes multiplicative steps on
// U from running sufficient statistics B = XV (D×K) and A = VᵀV (K×K).
// With a Window in Graph, the oldest samples leave the graph and the
// statistics, so memory stays flat.
//
// Online has no update rule of its own: the first fit is the method's
// batch type on the stream's graphs, the sweeps are an Engine run with FixU
// on the swept rows (the method's terms restricted to them, their edges to
// the other rows as AnchorTerms towards those rows' fixed codes), the U
// step an Engine run with FixV on a Loss that reads B and A, plus the
// terms' U parts, and Refit and Objective use the method's full terms over
// the window. NGE's sweeps are its own V step instead (NGE.solveRows: one
// M-matrix solve per column on the swept rows, the edges to the other rows
// on the right-hand side), and each step ends with its column reordering
// over the window, which permutes U, V, B and A alike; its Refit is NGE's
// iteration.
//
// What is exact and what is not:
//   - the graph is exact: inserting one at a time equals a batch build;
//   - with Forget zero, B and A equal XV and VᵀV over the live window
//     exactly (every changed code is subtracted and added back), so the U
//     step is the batch method's U step;
//   - codes of samples whose neighbourhood did not change are not revisited
//     (block-coordinate descent); Refit runs the batch engine on the whole
//     window, warm-started, when an exact optimum is wanted.
//
// The label-aware methods' terms are written on a column-normalized basis
// (NormalizedGraphTerm), whose U parts U·diag(c) need the quadratic forms
// c_m = v_mᵀLv_m over the whole window: each step recomputes them from
// the current graphs and codes, O(nnz(S)·K) per label and k-NN graph, so a
// step of these methods costs O(N·k·K) besides the swept rows, where
// GNMF's costs O(N·K) (the normalization). With Forget set, B and A decay
// but these forms are the window's current ones. Labels (SetLabel) take
// effect at the next PartialFit: the nodes whose label-graph rows changed
// are swept then, and the U step reads the new graphs.
//
// DPCA (an eigenproblem) and the kernel methods (N×N kernels) are not
// learned online: PartialFit returns an error wrapping ErrNotOnline for
// them.
//
// Cost of a batch of b samples with N in the window: the exact search is
// O(b·N·D) (float32 products for dense Euclidean data, O(b·N·SearchDim)
// with SearchDim); the sweeps and statistics touch the new samples and
// every node whose edges changed, about 10–25 per new sample on MNIST
// (k = 5), at O(D·K + Sweeps·K²) each (Revisit trades this for accuracy:
// RevisitNone touches the new samples only), and read only those nodes'
// rows of the graph's weights (graph.WeightRows); normalizing U rescales the
// codes, O(N·K) per batch, which is why larger windows want larger
// batches.
//
// Online is not safe for concurrent use: one goroutine owns it.
type Online struct {
	// Rank is K. It must be positive.
	Rank int
	// Method names the algorithm as the command line does: "gnmf" (also
	// the empty string, the default), "nmf", "dgnmf", "ssknmf", "n2s2l" or
	// "nge", with the batch types' terms and defaults (GNMF, NMF, DGNMF,
	// SSKNMF, N2S2L, NGE). "kernel", "multik" and "dpca" make PartialFit
	// return an error wrapping ErrNotOnline. The label methods' k-NN graph,
	// where they have one, is the stream's (Graph.K, Weighting); their
	// label graphs use Graph.IntraK, InterK and PenaltyPairs, IntraK
	// defaulting to 5 for DGNMF and SSKNMF and to 3 for NGE (their batch
	// defaults) and to 10 for N2S2L (whose batch default, every same-class
	// labeled sample, has no bound on a stream).
	Method string
	// Alpha is the method's α. If zero, it defaults to
	// DefaultOnlineGraphWeight for GNMF (a negative value disables the
	// graph: plain NMF), and to the batch type's for the others: 0.01 for
	// DGNMF, 1 for SSKNMF, 10 for N2S2L, 2 for NGE. NMF ignores it; the
	// label methods reject a negative value.
	Alpha float64
	// Beta is β, the k-NN graph's weight in SSKNMF (default
	// DefaultOnlineGraphWeight on dense samples, 10 on sparse ones), N2S2L
	// (default 100) and NGE (default 100; negative disables it, as in
	// NGE); zero means the default. Other methods ignore it; SSKNMF and
	// N2S2L reject a negative value.
	Beta float64
	// Q is N2S2L's q or NGE's d, the number of columns of V¹, fixed at the
	// first fit. If zero, it is the number of classes among the labels
	// known at the first fit or a floor, whichever is larger, and at most
	// Rank−1: a stream does not know its classes in advance, and early
	// labels name few of them (or more than the rank has columns). The
	// floor is 3·Rank/4 for N2S2L, whose stream classifiers read V¹ alone
	// (ClassCols), and Rank/4 for NGE (BENCHMARKS.md, "N²S²L's codes
	// classify by V¹"). (With too small a Rank and no label yet, the first
	// fit waits for the next batch.) It must be below Rank.
	Q int
	// Graph configures the incremental k-NN graph; Graph.Window bounds the
	// number of live samples (zero: unbounded).
	Graph graph.KNN
	// Weighting sets edge weights; the zero value is 0-1 weights. A heat
	// kernel needs HeatT > 0 here, since the stream has no global mean.
	Weighting graph.Weighting
	// Sweeps is the number of multiplicative updates of the affected codes
	// per batch. If zero, it defaults to 10. Sweeps trade the window's
	// objective for speed: more sweeps bring the codes closer to a batch
	// fit's at a cost proportional to them (BENCHMARKS.md, "Online
	// learning"). Raise Sweeps, or call Refit now and then, when the
	// factorization itself matters more than throughput.
	Sweeps int
	// USteps is the number of U updates per batch. They cost O(DK²) each,
	// independent of the window size. If zero, it is one per 10 new samples,
	// between 1 and 10: more steps on a small batch fit U to codes that the
	// batch did not refresh (on digits at rank 40, 10 steps per batch of 10
	// samples dropped prequential accuracy from 0.93 to 0.53).
	USteps int
	// Refresh is the number of older samples whose codes are revisited in
	// each batch besides the affected ones, taken round-robin over the
	// window, so that every code follows the basis as it moves. If zero, it
	// defaults to 100; negative disables it.
	Refresh int
	// Revisit chooses which older codes a batch sweeps besides the new
	// samples' and Refresh's. The zero value, RevisitChanged, sweeps every
	// node whose row of the graph's weights changed.
	Revisit Revisit
	// Scaling says when U's columns are normalized (see GNMF). The zero
	// value (ScaleAtEnd) means ScaleEachIter here: after each batch's U
	// steps and every iteration of the first fit and of Refit. The label
	// methods always normalize so.
	Scaling Scaling
	// SearchDim, if positive and below D, makes the k-NN graph search
	// neighbours among the samples projected to SearchDim dimensions by a
	// seeded Gaussian random projection (Johnson–Lindenstrauss), so that
	// inserting a sample costs O(SearchDim) per window sample instead of
	// O(D). The factorization still uses the full samples. The graph is
	// then exact in the projected space, approximate in the original one.
	SearchDim int
	// SearchBasis, if positive and below D, makes the k-NN graph of dense
	// samples search neighbours, and weigh its edges, in the span of a
	// basis of rank SearchBasis fitted to the newest samples of the window
	// as SearchFit says (by default their SearchBasis leading singular
	// vectors), fitted when searchBasisFirst samples have been seen and
	// again each time that count has grown four-fold (500, 2,000, 8,000,
	// 32,000, …: a rebuild's Slots²·K flops amortized over ever longer
	// stretches; OnlineState keeps the schedule). Each sample is stored
	// projected on that span (its coordinates in an orthonormal basis of
	// it, K numbers), so the search costs O(K) per window sample instead of
	// O(D), and at each new basis the window's rows are projected anew and
	// the graph rebuilt exactly (its slots, age order and labels kept:
	// about Slots²·K flops). The factorization still uses the full
	// samples. On images such a span is a better k-NN space than the
	// pixels (BENCHMARKS.md, "The search basis" and "The principal span").
	// It applies to samples with at least 10·SearchBasis features
	// (searchBasisMinRatio); others, and sparse samples (documents), search
	// as they are. A basis whose span classifies the window's labeled
	// samples significantly worse than their samples (leave-one-out 1-NN,
	// online_guard.go) is refused: the search moves back to the samples
	// until the next fit. It cannot be combined with SearchDim.
	SearchBasis int
	// SearchFit chooses the basis SearchBasis fits: the zero value,
	// SearchFitSVD, the samples' principal span; SearchFitNMF a plain
	// NMF's basis.
	SearchFit SearchFit
	// SearchBases, if set, shares the search basis fits of SearchBasis
	// with the other models that hold it: a fit on the same rows is fitted
	// once (model.SearchBases). The bases, hence the model, are the same as
	// without it.
	SearchBases *SearchBases
	// Forget, if in (0, 1), multiplies B and A by Forget before each batch
	// adds to them (scikit-learn's MiniBatchNMF uses 0.7), so the basis
	// follows drift; samples that leave the window are then not subtracted.
	// Zero keeps exact window statistics.
	Forget float64
	// InitSize is the number of samples gathered before the first fit, a
	// batch fit of the method on them with the labels set so far (on the
	// stream's graphs). If zero, it defaults to max(2·Rank, 100).
	InitSize int
	// InitIter bounds the updates of that first fit. If zero, 200.
	InitIter int
	// Src drives initialization. If nil, a fixed seed is used.
	Src rand.Source
	// MaxBasisBytes bounds the memory of the basis U, 8·D·K bytes for D×K
	// float64: PartialFit (and Restore) return an error wrapping
	// ErrTooLarge, without allocating, for samples whose dimension D would
	// need more. The statistics B take as much again. If zero, it defaults
	// to DefaultMaxBasisBytes (1 GiB: D = 2²⁰ at rank 128); negative
	// disables the check.
	MaxBasisBytes int64
	// Split, if set, runs parts of a step's graph search at once
	// (graph.Graph.SetSplit), and of the first fit's and Refit's
	// iterations (Engine.Split); pipeline.Split provides one. The graph is
	// the same as without it, the fits equal up to rounding; Online itself
	// starts no goroutines.
	Split func(n int, body func(lo, hi int))
	// StepSplit, if set, runs the parts of the step PartialFitDeferred
	// returns (the products with the step's rows, the sweeps of their
	// codes, the U step) instead of Split: a split for a step that runs
	// beside other work whose goroutine takes pieces once that work is
	// done (pipeline.Spare, with Lend). The parts give the
	// same bits either way. A step PartialFitDeferred does not defer
	// (label-aware methods) uses Split.
	StepSplit func(n int, body func(lo, hi int))
	// Lend, if set, is called by a method that must wait for the step
	// PartialFitDeferred returned while another goroutine runs it, with a
	// channel closed once that step has returned; it must return once the
	// channel is closed. pipeline.Spare.Lend, with StepSplit the same
	// Spare's Split, makes the waiting goroutine run pieces of the step's
	// parts meanwhile. It changes no result.
	Lend func(done <-chan struct{})
	// KeepLastCodes makes PartialFitDeferred (and PartialFit) keep a copy
	// of the codes as they stood before its batch's step, for LastCodes:
	// what reads the codes beside the step (the stream's spreading) reads
	// the copy, which the step does not write. It costs a copy of V
	// (Slots×K) per batch.
	KeepLastCodes bool
	// ChooseMetric lets the labels choose the k-NN graph's metric for dense
	// samples: at the judgement points of judgedAt the window's labeled
	// samples are classified leave-one-out by the Euclidean distance and by
	// the cosine in the graph's search space, and the graph moves to the
	// other metric when it wins significantly by both the nearest neighbour
	// and the k-NN vote (metricLoses, online_guard.go). Graph.Metric is the
	// metric it starts from. stream and serve set it.
	ChooseMetric bool

	g        *graph.Graph
	dim      int
	sparse   bool
	xd       mat.Dense   // dense rows by slot (height×D); the graph's own storage when sharedRows
	xs       *sparse.CSR // sparse rows by slot, rebuilt on change
	xsRows   [][]int     // sparse row indices by slot
	xsVals   [][]float64 // sparse row values by slot
	u, v     mat.Dense   // U (D×K), V (Slots×K)
	lastV    mat.Dense   // KeepLastCodes: V before the last batch's step, its new nodes' rows zero (LastCodes)
	hasLastV bool        // lastV holds a batch's codes
	a, b     mat.Dense   // A = VᵀV, B = XV (with a support, usupp, B's rows are kept in bc instead: statsRows)
	started  bool
	height   int // rows of the slot-indexed storage, ≥ Slots()
	cursor   int // next slot for round-robin refresh
	seen     int
	sw       sweep
	proj     Projector
	flipped  bool           // ChooseMetric's choice: the graph searches by the metric Graph.Metric does not name
	r        *mat.Dense     // D×SearchDim random projection for the graph, or the D×SearchBasis orthonormal basis of the search span, or nil
	next     int            // SearchBasis: the count of samples seen at which the next basis is fitted (0: searchBasisFirst)
	old      mat.Dense      // codes of the rows being updated, as the statistics hold them
	xblk     mat.Dense      // their dense samples, gathered (on xbuf)
	xbuf     []float64      // xblk's storage, kept between steps
	diagWS   []float64      // repairA's column sums of squares
	repairs  int            // how often repairA recomputed the statistics (tests)
	xblkRows []int          // the slots whose rows xblk holds, in order
	nz       nzRows         // the dense rows' nonzeros by slot (online_nz.go)
	statsWS  gemm.Workspace // updateStats's products
	statsWS2 gemm.Workspace // updateStats's second Gram product, beside the first
	statsM   [5]mat.Dense   // updateStats's new and old codes, their difference and products, reused
	q        int            // N2S2L's discriminative columns, fixed at the first fit
	marked   []int          // nodes whose label-graph rows changed since the last step
	edits    []int          // graph nodes inserted, removed or changed since TakeGraphEdits
	editsAll bool           // every row changed since TakeGraphEdits (a new graph, too many edits)
	taken    bool           // TakeGraphEdits has been called since the Online was made
	lastLG   windowGraphs   // the label graphs of the last step (Slots×Slots), no k-NN graph
	uEng     Engine         // the U step
	uParts   [2]uPart       // the U step in row parts (stepUParts)
	uLoss    statsLoss
	usupp    []int        // the rows of U that may be nonzero, ascending; nil: all (online_support.go)
	upos     []int        // each row's position in usupp, −1 outside
	fitCols  int          // the columns the first fit ran on (firstFit)
	uc, bc   mat.Dense    // those rows of U, for the U step, and of B, kept there (statsRows)
	ucOK     bool         // uc holds U's rows of usupp as they are now (syncUC)
	ph       phantomRows  // SSKNMF's and N²S²L's unseen rows of U as one (online_phantom.go)
	pending  *pendingStep // the last PartialFitDeferred's step (online_defer.go)
	deferred bool         // that step is running: its parts go through StepSplit
}

// Revisit says which older codes an online batch sweeps with the new
// samples'. Whatever it names, the statistics stay exact: a code that is
// not swept does not change.
type Revisit int

const (
	// RevisitChanged sweeps every node whose row of the graph's weights
	// changed: the new samples' neighbours, the nodes whose lists a new
	// sample entered or left, and those that lost an edge to a sample
	// leaving the window. About 10–25 nodes per new sample on MNIST (k = 5,
	// window 20,000), each costing a row of each product with X.
	RevisitChanged Revisit = iota
	// RevisitNeighbors sweeps the nodes adjacent to a new sample only
	// (either direction): nodes that merely lost an edge to a removed
	// sample keep their codes until Refresh reaches them.
	RevisitNeighbors
	// RevisitNone sweeps the new samples only (and Refresh's rows): older
	// codes follow the basis through Refresh alone. The cheapest: a step
	// costs O(b) rows of X whatever the graph does.
	RevisitNone
)

// DefaultOnlineGraphWeight is the online default of the k-NN graph's
// weight where it is the only graph, GNMF's α (SSKNMF's β, beside its
// label graph, is onlineSSKNMFDenseBeta on dense samples). Online, that
// weight also anchors each arriving sample's code to its neighbours' (the
// graph projection of the warm start), and the batch defaults
// (DefaultGNMFAlpha = 100, SSKNMF's β = 10) anchor them so strongly that
// the codes classify worse: at 3 the
// codes alone predict 0.8 to 2.9 points better on the digits, MNIST and
// mail streams, and their 1-NN 0.9 to 1.5 better on MNIST (BENCHMARKS.md,
// "The graph's weight online").
const DefaultOnlineGraphWeight = 3

// alpha is GNMF's α (zero when a negative Alpha selects NMF).
func (o *Online) alpha() float64 {
	if o.Alpha == 0 {
		return DefaultOnlineGraphWeight
	}
	return max(o.Alpha, 0)
}

// onlineSSKNMFBeta is SSKNMF's β online: Beta, or onlineSSKNMFDenseBeta
// for dense samples and the batch default, ssknmfBeta, for sparse ones
// (documents), on which a lighter weight costs SSKNMF's codes
// (BENCHMARKS.md, "The graph's weight online").
func (o *Online) onlineSSKNMFBeta() float64 {
	if o.Beta != 0 {
		return o.Beta
	}
	if o.sparse {
		return ssknmfBeta
	}
	return onlineSSKNMFDenseBeta
}

// onlineSSKNMFDenseBeta is SSKNMF's β online on dense samples. It is
// lighter than GNMF's α (DefaultOnlineGraphWeight): beside SSKNMF's label
// graph, a lighter k-NN graph (and anchor of each arriving code to its
// neighbours') leaves the label term more of the codes. At 2 rather than
// 3 the 1-NN on the labeled codes rose on MNIST (+0.14 point over 8 draws
// of the labels) and Fashion-MNIST (+0.6 on three orders) and fell on the
// 8×8 digits (−0.4 over 20 draws): BENCHMARKS.md, "SSKNMF's graph weight
// online".
const onlineSSKNMFDenseBeta = 2

func (o *Online) initSize() int {
	if o.InitSize > 0 {
		return max(o.InitSize, o.Rank)
	}
	return max(2*o.Rank, 100)
}

// Started reports whether the first fit has run, so that codes are available.
func (o *Online) Started() bool { return o.started }

// ClassCols returns the columns [lo, hi) of the codes that classify
// samples: N2S2L's q discriminative columns V¹ once the first fit has set
// q, and all K columns for every other method. N²S²L minimizes its penalty
// graph, the closest pairs of different classes, on V², so V² draws those
// pairs together: the paper classifies on V¹, and on the whole code a
// stream whose V² stays alive classifies far worse (BENCHMARKS.md,
// "N²S²L's codes classify by V¹"). NGE, whose objective has the same
// split, classifies better on its whole code. The codes themselves (Codes,
// LastCodes) keep every column: the factorization needs them all.
func (o *Online) ClassCols() (lo, hi int) {
	if o.meth() == methodN2S2L && o.started && o.q > 0 {
		return 0, o.q
	}
	return 0, o.Rank
}

// KNN returns the k-NN graph (nil before the first PartialFit). Callers
// may read it, and set labels on it, but must not insert or remove nodes.
// A label set on it directly takes effect as one set by SetLabel: the next
// step compares the label graphs with the last step's.
func (o *Online) KNN() *graph.Graph { return o.g }

// SetLabel sets the class of node (an id returned by PartialFit): class
// ≥ 0 is a class, −1 clears the label. The label is kept on the graph
// (before the first fit too, which then uses it). For a label-aware
// method, the node and every node whose row of the label graphs changed
// (those graph.Change lists, and those the next step finds by comparing
// the label graphs with the last step's, such as pairs leaving MFA's
// penalty graph) are swept by the next PartialFit, whose U step also reads
// the new graphs: a late label takes effect at the next partial update,
// and codes do not change before it. It returns an error if node is not
// live.
func (o *Online) SetLabel(node, class int) error {
	if o.g == nil {
		return fmt.Errorf("model: online: set label: node %d is not in the graph", node)
	}
	ch, err := o.g.SetLabel(node, class)
	if err != nil {
		return fmt.Errorf("model: online: %w", err)
	}
	if labelAware(o.meth()) && o.started {
		o.marked = append(o.marked, node)
		o.marked = append(o.marked, ch.Changed...)
	}
	return nil
}

// Basis returns U (D×K). It panics with ErrNotFitted before Started.
func (o *Online) Basis() *mat.Dense {
	if !o.started {
		panic(ErrNotFitted)
	}
	o.settle()
	return &o.u
}

// Codes returns V (Slots×K): row id holds the code of node id; rows of free
// slots are zero. It panics with ErrNotFitted before Started.
func (o *Online) Codes() *mat.Dense {
	if !o.started {
		panic(ErrNotFitted)
	}
	o.settle()
	return &o.v
}

// Data returns the window's samples by slot (free slots are empty rows).
func (o *Online) Data() Data {
	if o.sparse {
		o.syncSparse()
		return SparseRows(o.xs)
	}
	return DenseRows(&o.xd)
}

// PartialFit adds x's samples to the model and returns their node ids in
// the graph (use them with Codes and SetLabel). Before InitSize samples
// have arrived, samples are only stored; the batch that reaches InitSize
// runs the first fit, and if that fails (N2S2L or NGE without Q or labels, a
// non-finite objective), the samples stay stored, the error is returned
// and the next batch tries again. It returns an error wrapping
// ErrNotOnline, and stores nothing, if Method cannot be learned online.
//
// PartialFit is PartialFitDeferred with its step run before it returns.
func (o *Online) PartialFit(x Data) ([]int, error) {
	ids, step, err := o.PartialFitDeferred(x)
	step()
	return ids, err
}

// PartialFitDeferred is PartialFit with the numerical part of GNMF's and
// NMF's online step (the new samples' projection, the sweeps of the codes,
// the statistics and the U step) left to step, which it returns (never
// nil): everything of the batch that touches the k-NN graph is done when
// it returns (the insertion, the rows the step sweeps and their weights,
// a new search basis and the graph's rebuild), and step reads and writes
// only U, V, the statistics and its own workspace, besides reading the
// window's rows and x (which must not change until step has returned).
// The caller may so run step on another goroutine at the same time as
// the methods that read or label the graph only: KNN and the graph's
// read methods, SetLabel, TakeGraphEdits, Started, Sparse, Row, Seen.
// Every other method (Codes, Basis, the next PartialFit, State, Refit,
// Objective, Restore) first waits for step to return, or runs it if it
// has not started; step runs once however often it is called. The model
// is then exactly what PartialFit would have left, since the graph's part
// of a batch never reads what step writes. With the other methods (their
// label graphs are read by the U step), and before the first fit, step
// has nothing left to do.
//
// The previous batch's step need not have returned when the next
// PartialFitDeferred is called: if it has not, and the graph keeps rows
// of its own (a search basis, a random projection, sparse rows; not the
// dense rows the model shares with the graph), the next batch's insertion
// into the graph and its search run first, beside that step if another
// goroutine runs it, and the rest of the batch waits for it (Lend). The
// model is the same either way, since a step reads nothing of the graph.
func (o *Online) PartialFitDeferred(x Data) (ids []int, step func(), err error) {
	ahead := o.pending != nil && !o.pending.finished() && o.g != nil && !o.sharedRows()
	if !ahead {
		o.settle()
	}
	step = func() {}
	if o.Rank <= 0 {
		return nil, step, fmt.Errorf("model: online: rank %d must be positive", o.Rank)
	}
	if _, err := o.method(); err != nil {
		return nil, step, err
	}
	if o.SearchDim > 0 && o.SearchBasis > 0 {
		return nil, step, errors.New("model: online: SearchDim and SearchBasis cannot both be set")
	}
	if err := Validate(x); err != nil {
		return nil, step, err
	}
	d, _ := x.Dims()
	rows := Rows(x) // *mat.Dense or *sparse.CSR: resolved once for the stages below
	if err := o.ensureGraph(rows, d); err != nil {
		return nil, step, err
	}
	// With the rows shared with the graph, the samples the window evicts
	// leave the statistics before the insertion writes the new rows over
	// theirs (forget then only clears their codes). Nothing but the graph
	// changes in between, so the statistics take the same steps as before.
	_, n := x.Dims() // Data is D×N: samples are columns
	var gone []int
	early := o.started && o.Forget == 0 && o.sharedRows()
	if early {
		gone = o.g.Evicting(n)
		for _, id := range gone {
			o.addStats(id, -1)
		}
	}
	ch, err := o.insert(rows)
	o.settle() // a no-op unless ahead: the graph part ran beside the last step
	if err != nil {
		for _, id := range gone {
			o.addStats(id, 1) // the rows are intact: a failed insertion changes nothing
		}
		return nil, step, fmt.Errorf("model: online: %w", err)
	}
	o.noteEdits(ch)
	o.keepLastCodes(ch.Added)
	if early && !slices.Equal(gone, ch.Removed) {
		return nil, step, fmt.Errorf("model: online: the graph evicted %v, announced %v", ch.Removed, gone)
	}
	o.seen += len(ch.Added)
	o.growSlots()
	o.syncRows()
	if o.started {
		o.forget(ch.Removed, early)
	}
	o.storeRows(rows, ch.Added)
	o.dropNonzeros(ch.Added)
	if !o.started {
		if o.g.Len() >= o.initSize() {
			if err := o.firstFit(); err != nil {
				return ch.Added, step, err
			}
		}
	} else if rest := o.update(x, rows, ch); rest != nil {
		p := &pendingStep{run: rest, done: make(chan struct{})}
		o.pending, step = p, p.do
	}
	err = o.searchStep(len(ch.Added))
	if err == nil {
		err = o.metricStep(len(ch.Added))
	}
	if err != nil {
		step() // the batch's step is part of the error's state, as in PartialFit
		return ch.Added, func() {}, err
	}
	return ch.Added, step, nil
}

// keepLastCodes copies V, settled and not yet changed by this batch, into
// lastV with KeepLastCodes once the model has codes, the rows of the
// batch's new nodes added cleared (a slot it reuses held another sample).
func (o *Online) keepLastCodes(added []int) {
	o.hasLastV = false
	if !o.KeepLastCodes || !o.started {
		return
	}
	h, k := o.v.Dims()
	n := min(h, o.g.Slots())
	if r, c := o.lastV.Dims(); o.lastV.IsEmpty() || c != k || r < n {
		o.lastV = *mat.NewDense(max(n, 1), k, nil)
	}
	dst := o.lastV.RawMatrix()
	src := o.v.RawMatrix()
	for i := range n {
		copy(dst.Data[i*dst.Stride:i*dst.Stride+k], src.Data[i*src.Stride:i*src.Stride+k])
	}
	r, _ := o.lastV.Dims()
	for i := n; i < r; i++ {
		clear(dst.Data[i*dst.Stride : i*dst.Stride+k])
	}
	for _, i := range added {
		if i < r {
			clear(dst.Data[i*dst.Stride : i*dst.Stride+k])
		}
	}
	o.hasLastV = true
}

// LastCodes returns, with KeepLastCodes, the codes as they stood before
// the last PartialFit's step (its first rows by slot; the rows of the
// nodes it added, and of slots past them, zero), or nil before the model
// had codes at a PartialFit or without KeepLastCodes. It does not wait
// for the step: the step does not write it. The matrix is the model's, valid
// until the next PartialFit.
func (o *Online) LastCodes() *mat.Dense {
	if !o.hasLastV {
		return nil
	}
	return &o.lastV
}

// noteEdits records an insertion's nodes for TakeGraphEdits, as "every
// row" once they outnumber four times the slots (a reader that never takes
// them holds O(Slots) memory).
func (o *Online) noteEdits(ch graph.Change) {
	if o.editsAll {
		return
	}
	o.edits = append(o.edits, ch.Added...)
	o.edits = append(o.edits, ch.Removed...)
	o.edits = append(o.edits, ch.Changed...)
	if len(o.edits) > 4*max(o.g.Slots(), 64) {
		o.edits, o.editsAll = o.edits[:0], true
	}
}

// TakeGraphEdits returns the nodes whose rows of the k-NN graph's
// symmetric weights (graph.Graph.Weights, WeightRows) may have changed
// since its last call: the nodes inserted, removed (their rows now empty)
// and changed by every PartialFit since, in no order and with repeats. It
// returns all = true instead when every row must be taken as changed: at
// its first call on this Online (and after Restore), after the graph was
// made anew, or when the edits outnumbered four times the graph's slots.
// Weights whose value depends on the whole graph (graph.HeatKernel with a
// zero HeatT, whose width is a mean over every edge) can change in rows
// not listed. The slice is valid until the next PartialFit.
func (o *Online) TakeGraphEdits() (nodes []int, all bool) {
	all = o.editsAll || !o.taken || o.g == nil
	o.taken, o.editsAll = true, false
	nodes, o.edits = o.edits, o.edits[:0]
	if all {
		return nil, true
	}
	return nodes, false
}

// insert adds the samples of rows (a batch's Rows) to the graph, projected
// if SearchDim says so.
func (o *Online) insert(rows mat.Matrix) (graph.Change, error) {
	o.g.SetSplit(o.Split)
	if o.r != nil {
		var p mat.Dense
		switch r := rows.(type) {
		case *mat.Dense:
			gemm.MulTo(&p, r, o.r, false)
		case *sparse.CSR:
			r.MulDenseTo(&p, o.r)
		}
		return o.g.InsertDense(&p)
	}
	switch r := rows.(type) {
	case *mat.Dense:
		return o.g.InsertDense(r)
	case *sparse.CSR:
		return o.g.InsertSparse(r)
	}
	return graph.Change{}, fmt.Errorf("unsupported rows %T", rows)
}

// newGraph makes the empty graph for d-dimensional samples, and the random
// projection if SearchDim asks for one (r, if non-nil, is a projection to
// reuse, as on Restore).
func (o *Online) newGraph(d int, isSparse bool, r *mat.Dense) (err error) {
	o.r = nil
	o.edits, o.editsAll = o.edits[:0], true
	if r != nil && o.SearchBasis > 0 {
		o.r = r
		o.g, err = o.graphConfig().NewDense(o.SearchBasis)
		return err
	}
	if o.SearchDim > 0 && o.SearchDim < d {
		if r == nil {
			src := o.Src
			if src == nil {
				src = defaultSrc()
			}
			rnd := rand.New(src)
			r = mat.NewDense(d, o.SearchDim, nil)
			scale := 1 / math.Sqrt(float64(o.SearchDim))
			for i := range r.RawMatrix().Data {
				r.RawMatrix().Data[i] = scale * rnd.NormFloat64()
			}
		}
		o.r = r
		o.g, err = o.graphConfig().NewDense(o.SearchDim)
		return err
	}
	if isSparse {
		o.g, err = o.graphConfig().NewSparse(d)
	} else {
		o.g, err = o.graphConfig().NewDense(d)
	}
	return err
}

// ensureGraph makes the graph for the first batch's rows (d features), or
// checks a later batch's dimension against it.
func (o *Online) ensureGraph(rows mat.Matrix, d int) error {
	if o.g != nil {
		if d != o.dim {
			return fmt.Errorf("model: online: sample has %d features, the stream has %d", d, o.dim)
		}
		return nil
	}
	if err := o.checkBasis(d); err != nil {
		return err
	}
	switch rows.(type) {
	case *mat.Dense:
	case *sparse.CSR:
		o.sparse = true
	default:
		return fmt.Errorf("model: online: unsupported data (rows %T)", rows)
	}
	if err := o.newGraph(d, o.sparse, nil); err != nil {
		return fmt.Errorf("model: online: %w", err)
	}
	if o.Weighting.Scheme == graph.HeatKernel && o.Weighting.HeatT <= 0 {
		return errors.New("model: online: a heat kernel needs Weighting.HeatT > 0 on a stream")
	}
	o.dim = d
	return nil
}

// presizeValues bounds the window (slots × max(D, K) values) whose row and
// code storage growSlots allocates whole (64 MiB of float64 per matrix):
// the operating system maps fresh memory as it is first written, so the
// unused rows cost nothing, while doubling copies every row once more.
const presizeValues = 1 << 23

// DefaultMaxBasisBytes is the default of Online.MaxBasisBytes: 1 GiB, a
// D×K float64 basis with D = 2²⁰ (sources.DefaultMaxDim) and K = 128.
const DefaultMaxBasisBytes = 1 << 30

// checkBasis returns an error wrapping ErrTooLarge if a basis of d rows at
// rank o.Rank exceeds MaxBasisBytes.
func (o *Online) checkBasis(d int) error {
	limit := o.MaxBasisBytes
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = DefaultMaxBasisBytes
	}
	const size = 8 // bytes per float64
	if int64(d) > limit/size/int64(max(o.Rank, 1)) {
		return fmt.Errorf("model: online: %w: samples of dimension D = %d at rank K = %d need a D×K float64 basis of %s, above MaxBasisBytes = %d; reduce D (hash, select or resize the features) or raise the limit",
			ErrTooLarge, d, o.Rank, basisBytes(d, o.Rank), limit)
	}
	return nil
}

// basisBytes formats 8·d·k bytes without overflowing.
func basisBytes(d, k int) string {
	b := 8 * float64(d) * float64(k)
	if b < 1<<40 {
		return fmt.Sprintf("%.0f bytes", b)
	}
	return fmt.Sprintf("%.3g bytes", b)
}

// growSlots makes the row and code storage cover every slot of the graph.
// Rows and codes share one height, doubled when outgrown (or the whole
// window at once when it holds at most presizeValues entries), so that
// matrices built on them line up. The rows past the graph's slots are zero
// (no sample has been stored or coded in them): State leaves V's out, and
// normalize does not scale them.
func (o *Online) growSlots() {
	slots := o.g.Slots()
	if slots <= o.height {
		return
	}
	h := max(slots, 2*o.height)
	whole := false
	if w := o.Graph.Window; w > 0 {
		h = max(slots, min(h, w)) // a window's slots never exceed it
		if int64(w)*int64(max(o.dim, o.Rank)) <= presizeValues {
			// The whole window at once: the rows are never copied again.
			h, whole = max(slots, w), true
		}
	}
	grow := func(m *mat.Dense, cols int) {
		n := mat.NewDense(h, cols, nil)
		if whole {
			// The window fills it row by row: map its pages in at
			// once rather than one fault at a time.
			mem.Populate(n.RawMatrix().Data)
		}
		if !m.IsEmpty() {
			r, _ := m.Dims()
			n.Slice(0, r, 0, cols).(*mat.Dense).Copy(m)
		}
		*m = *n
	}
	switch {
	case o.sparse:
		for len(o.xsRows) < h {
			o.xsRows = append(o.xsRows, nil)
			o.xsVals = append(o.xsVals, nil)
		}
		o.xs = nil
	case !o.sharedRows():
		grow(&o.xd, o.dim)
	}
	if o.started {
		grow(&o.v, o.Rank)
	}
	o.height = h
}

// sharedRows reports whether the dense rows are the graph's own (xd views
// graph.Graph.DenseRows): dense samples searched as they are, without
// SearchDim, so that the graph stores exactly the rows the model needs and
// the window is not held twice.
func (o *Online) sharedRows() bool { return !o.sparse && o.r == nil && o.g != nil }

// syncRows points xd at the graph's rows (height×D) when they are shared:
// after every insertion, which may move the graph's storage, and after
// growSlots raises height.
func (o *Online) syncRows() {
	if !o.sharedRows() || o.height == 0 {
		return
	}
	o.xd = *mat.NewDense(o.height, o.dim, o.g.DenseRows(o.height))
}

func (o *Online) storeRows(rows mat.Matrix, ids []int) {
	switch r := rows.(type) {
	case *mat.Dense:
		if o.sharedRows() {
			return // the graph stored them
		}
		for p, id := range ids {
			copy(o.xd.RawRowView(id), r.RawRowView(p))
		}
	case *sparse.CSR:
		for p, id := range ids {
			ind, val := r.Row(p)
			o.xsRows[id] = append(o.xsRows[id][:0], ind...)
			o.xsVals[id] = append(o.xsVals[id][:0], val...)
			o.ph.mark(ind)
		}
		o.xs = nil
	}
}

// syncSparse rebuilds the CSR view of the sparse rows (Slots×D, using the
// full storage height so that matrices and codes line up).
func (o *Online) syncSparse() {
	slots := o.slotRows()
	if o.xs != nil {
		if r, _ := o.xs.Dims(); r == slots {
			return
		}
	}
	m := sparse.Zeros(0, o.dim)
	for id := 0; id < slots; id++ {
		if id < len(o.xsRows) && o.g.Live(id) {
			m.AppendRow(o.xsRows[id], o.xsVals[id])
		} else {
			m.AppendRow(nil, nil)
		}
	}
	o.xs = m
}

// slotRows is the height of the stored matrices: at least Slots().
func (o *Online) slotRows() int { return o.height }

// firstFit runs the method's batch type on the samples gathered so far,
// with their labels, on the stream's graphs restricted to them.
func (o *Online) firstFit() error {
	defer trace.StartRegion(context.Background(), "firstFit").End() // for `stream --trace`
	ids := o.g.IDs()
	k := o.Rank
	var sub Data
	var cols []int      // sparse: the features the first samples use, ascending
	var phantom float64 // sparse: the other features, fitted as one row (Common.phantom)
	if o.sparse {
		// NMF, GNMF, DGNMF and NGE fit on the columns the samples use,
		// with the mean entry of the whole width (Common.width): the
		// whole width's fit zeroes U's other rows in its first update
		// (their X·V rows are zero) and they stay zero online
		// (online_support.go), so it is that fit up to rounding
		// (docs/DESIGN.md §3). A stream hashes into 2¹⁶ columns, of
		// which a hundred documents use a few thousand. SSKNMF's and
		// N²S²L's first updates leave those rows nonzero, and equal (their
		// codes differ without them: worse on the State of the Union,
		// BENCHMARKS.md): they fit on the used columns and one phantom
		// column for all the others (Common.phantom), the whole width's
		// fit up to rounding, and the other rows of U are set from the
		// phantom's. With fewer used columns than the rank, the whole
		// width, as the rank must not exceed it.
		var m *sparse.CSR
		meth := o.meth()
		onUsed := firstFitUsedColumns && (meth == methodNMF || meth == methodGNMF || meth == methodDGNMF || meth == methodNGE)
		withPhantom := firstFitPhantom && (meth == methodSSKNMF || meth == methodN2S2L)
		cols, m = usedColumns(o.xsRows, o.xsVals, ids)
		switch {
		case len(cols) >= k && onUsed:
		case len(cols) >= k && withPhantom && len(cols) < o.dim:
			m.Grow(len(cols) + 1)
			phantom = float64(o.dim - len(cols))
		default:
			cols, m = nil, sparse.Zeros(0, o.dim)
			for _, id := range ids {
				m.AppendRow(o.xsRows[id], o.xsVals[id])
			}
		}
		sub = SparseRows(m)
		_, o.fitCols = m.Dims()
	} else {
		m := mat.NewDense(len(ids), o.dim, nil)
		for r, id := range ids {
			m.SetRow(r, o.xd.RawRowView(id))
		}
		sub = DenseRows(m)
	}
	// The first fit uses the stream's own graphs (searched in the
	// projected space if SearchDim says so), restricted to the live
	// samples.
	gs := o.graphs()
	gs.each(func(s *sparse.CSR) *sparse.CSR { return subgraph(s, ids) })
	c := Common{Rank: k, MaxIter: o.InitIter, Src: o.Src, Split: o.Split}
	if cols != nil {
		c.width, c.phantom = o.dim, phantom
	}
	var m Method
	var err error
	switch o.meth() {
	case methodNMF:
		nm := &NMF{Common: c, NormalizeU: o.scaling() != ScaleNone}
		err, m = nm.Fit(sub, nil), nm
	case methodGNMF:
		gn := &GNMF{Common: c, Alpha: o.alpha(), S: gs.knn, Scaling: o.scaling()}
		err, m = gn.Fit(sub, nil), gn
	case methodDGNMF:
		dg := &DGNMF{Common: c, Alpha: o.Alpha}
		dg.ww, dg.wb = gs.intra, gs.inter
		if err = dg.start(&dg.fitted, sub); err == nil {
			err = dg.fitGraphs(sub)
		}
		m = dg
	case methodSSKNMF:
		sk := &SSKNMF{Common: c, Alpha: o.Alpha, Beta: o.onlineSSKNMFBeta()}
		sk.w1, sk.w2 = gs.signed, gs.knn
		if err = sk.start(&sk.fitted, sub); err == nil {
			err = sk.fitGraphs(sub)
		}
		m = sk
	case methodN2S2L, methodNGE:
		o.q = o.Q
		if o.q == 0 {
			classes := map[int]bool{}
			for _, id := range ids {
				if l := o.g.Label(id); l >= 0 {
					classes[l] = true
				}
			}
			// q < K: a stream may name more classes before its first fit
			// than the rank has columns; then the first K−1 columns are
			// V¹ (data must not stop the learner).
			floor := k / 4
			if o.meth() == methodN2S2L {
				floor = 3 * k / 4
			}
			o.q = min(max(len(classes), floor), k-1)
		}
		if o.q <= 0 {
			// Too small a rank to guess q, and no label yet: keep storing
			// samples and try again with the next batch.
			return nil
		}
		if o.q >= k {
			return fmt.Errorf("model: online: first fit: %s: q = %d discriminative columns (classes among the labels so far), want 1 ≤ q < K = %d: set Q or label samples first", o.meth(), o.q, k)
		}
		if o.meth() == methodNGE {
			ng := o.nge()
			ng.Common = c
			ng.s, ng.sp, ng.ss, ng.d = gs.intrinsic, gs.penalty, gs.knn, o.q
			if err = ng.start(&ng.fitted, sub); err == nil {
				err = ng.fitGraphs(sub)
			}
			m = ng
			break
		}
		ns := &N2S2L{Common: c, Alpha: o.Alpha, Beta: o.Beta}
		ns.s, ns.sp, ns.ss, ns.q = gs.intrinsic, gs.penalty, gs.knn, o.q
		if err = ns.start(&ns.fitted, sub); err == nil {
			err = ns.fitGraphs(sub)
		}
		m = ns
	}
	if err != nil {
		return fmt.Errorf("model: online: first fit: %w", err)
	}
	o.ph = phantomRows{}
	if cols != nil {
		o.u = *mat.NewDense(o.dim, k, nil)
		scatterRows(&o.u, m.Basis(), cols)
		if phantom > 0 { // the other rows from the phantom row
			o.ph.start(o.dim, cols)
			o.ph.writeUnseen(&o.u, m.Basis().RawRowView(len(cols)))
		}
	} else {
		o.u.CloneFrom(m.Basis())
	}
	o.v = *mat.NewDense(o.height, k, nil)
	for r, id := range ids {
		o.v.SetRow(id, m.Codes().RawRowView(r))
	}
	o.started = true
	o.marked = o.marked[:0]
	o.keepLabelGraphs(o.graphs())
	o.recomputeStats()
	o.findSupport()
	return nil
}

// firstFitUsedColumns says whether the first fit on sparse rows runs on
// the used columns only (firstFit). A variable for the tests, which
// compare it with the whole width's fit.
var firstFitUsedColumns = true

// firstFitPhantom says whether SSKNMF's and N²S²L's first fit on sparse
// rows runs on the used columns and one phantom row for the others
// (firstFit, Common.phantom). A variable for the tests, which compare it
// with the whole width's fit.
var firstFitPhantom = true

// usedColumns returns the columns used by the sparse rows ids (indices
// ind[id], values val[id]), ascending, and those rows restricted to them:
// row r of m is row ids[r] with column cols[j] renumbered j.
func usedColumns(ind [][]int, val [][]float64, ids []int) (cols []int, m *sparse.CSR) {
	for _, id := range ids {
		cols = append(cols, ind[id]...)
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	m = sparse.Zeros(0, len(cols))
	var ri []int
	for _, id := range ids {
		ri = ri[:0]
		for _, t := range ind[id] {
			j, _ := slices.BinarySearch(cols, t)
			ri = append(ri, j)
		}
		m.AppendRow(ri, val[id])
	}
	return cols, m
}

// anchorRows returns the rows at positions pos of s (R×Slots) without the
// columns in skip, as a len(pos)×cols matrix: the weights between new
// samples and the samples already coded.
func anchorRows(s *sparse.CSR, pos []int, skip map[int]bool, cols int) *sparse.CSR {
	out := sparse.Zeros(0, cols)
	var ind []int
	var val []float64
	for _, p := range pos {
		ind, val = ind[:0], val[:0]
		ri, rv := s.Row(p)
		for q, j := range ri {
			if !skip[j] {
				ind = append(ind, j)
				val = append(val, rv[q])
			}
		}
		out.AppendRow(ind, val)
	}
	return out
}

// subgraph returns the rows and columns ids of s, in that order.
func subgraph(s *sparse.CSR, ids []int) *sparse.CSR {
	pos := make(map[int]int, len(ids))
	for r, id := range ids {
		pos[id] = r
	}
	out := sparse.Zeros(0, len(ids))
	var ind []int
	var val []float64
	for _, id := range ids {
		ind, val = ind[:0], val[:0]
		ri, rv := s.Row(id)
		for p, j := range ri {
			if c, ok := pos[j]; ok {
				ind = append(ind, c)
				val = append(val, rv[p])
			}
		}
		sortPairs(ind, val)
		out.AppendRow(ind, val)
	}
	return out
}

// sortPairs sorts ind ascending, permuting val alike (insertion sort: rows
// hold about k entries).
func sortPairs(ind []int, val []float64) {
	for a := 1; a < len(ind); a++ {
		for b := a; b > 0 && ind[b] < ind[b-1]; b-- {
			ind[b], ind[b-1] = ind[b-1], ind[b]
			val[b], val[b-1] = val[b-1], val[b]
		}
	}
}

// recomputeStats sets B = XV and A = VᵀV over the window.
func (o *Online) recomputeStats() {
	o.b.Reset()
	o.Data().MulTo(&o.b, &o.v)
	o.a.Reset()
	o.a.Mul(o.v.T(), &o.v)
}

// forget removes the contributions of removed nodes from the statistics
// (exact mode, unless subtracted says PartialFit did before the insertion)
// and clears their codes and rows (the graph clears shared rows itself, and
// may have stored a new sample's row in a removed slot already).
func (o *Online) forget(removed []int, subtracted bool) {
	for _, id := range removed {
		if o.Forget == 0 && !subtracted {
			o.addStats(id, -1)
		}
		vi := o.v.RawRowView(id)
		for j := range vi {
			vi[j] = 0
		}
		switch {
		case o.sparse:
			o.xsRows[id], o.xsVals[id] = o.xsRows[id][:0], o.xsVals[id][:0]
		case !o.sharedRows():
			xi := o.xd.RawRowView(id)
			for j := range xi {
				xi[j] = 0
			}
		}
	}
	if len(removed) > 0 {
		o.xs = nil
	}
}

// addStats adds sign·x_i v_iᵀ to B and sign·v_i v_iᵀ to A.
func (o *Online) addStats(id int, sign float64) {
	vi := o.v.RawRowView(id)
	bm, pos := o.statsRows()
	br := bm.RawMatrix()
	add := func(c int, a float64) {
		if pos != nil {
			if c = pos[c]; c < 0 {
				return // a zero row of U: B's row is not kept
			}
		}
		vec.Axpy(a, vi, br.Data[c*br.Stride:c*br.Stride+o.Rank])
	}
	if o.sparse {
		for p, c := range o.xsRows[id] {
			add(c, sign*o.xsVals[id][p])
		}
	} else {
		for c, xc := range o.xd.RawRowView(id) {
			if xc != 0 {
				add(c, sign*xc)
			}
		}
	}
	ar := o.a.RawMatrix()
	for r, x := range vi {
		if x == 0 {
			continue
		}
		row := ar.Data[r*ar.Stride : r*ar.Stride+o.Rank]
		for j, v := range vi {
			row[j] += sign * x * v
		}
	}
}

// updateStats adds x_i (v_i − o_i)ᵀ to B and v_i v_iᵀ − o_i o_iᵀ to A for
// the rows with use(i), where o_i is row r of o.old for rows[r]: one
// product over the rows instead of a rank-one update per row.
func (o *Online) updateStats(rows []int, use func(int) bool) {
	k := o.Rank
	var sel []int // positions in rows
	for r, id := range rows {
		if use(id) {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return
	}
	vn, vo, dv := &o.statsM[0], &o.statsM[1], &o.statsM[2]
	for _, m := range []*mat.Dense{vn, vo, dv} {
		m.Reset()
		m.ReuseAs(len(sel), k)
	}
	for q, r := range sel {
		copy(vn.RawRowView(q), o.v.RawRowView(rows[r]))
		copy(vo.RawRowView(q), o.old.RawRowView(r))
	}
	dv.Sub(vn, vo)
	// A += VnᵀVn − VoᵀVo: the two products at once (each in its own
	// matrix and workspace, the same bits), then added in order.
	t, t2 := &o.statsM[3], &o.statsM[4]
	t.Reset()
	t2.Reset()
	inParts(o.stepSplit(len(sel)), 2, func(lo, hi int) {
		for q := lo; q < hi; q++ {
			if q == 0 {
				mulTransTo(t, vn, vn, &o.statsWS)
			} else {
				mulTransTo(t2, vo, vo, &o.statsWS2)
			}
		}
	})
	o.a.Add(&o.a, t)
	o.a.Sub(&o.a, t2)
	bm, pos := o.statsRows()
	br := bm.RawMatrix()
	if o.sparse {
		// In parts over B's kept rows: each row takes its terms in the
		// order of sel, as at once, so the parts change no bit.
		body := func(lo, hi int) {
			for q, r := range sel {
				id, d := rows[r], dv.RawRowView(q)
				for p, c := range o.xsRows[id] {
					if pos != nil {
						c = pos[c] // −1: a zero row of U, whose row of B is not kept
					}
					if c >= lo && c < hi {
						vec.Axpy(o.xsVals[id][p], d, br.Data[c*br.Stride:c*br.Stride+k])
					}
				}
			}
		}
		if split := o.stepSplit(len(sel)); split != nil {
			split(br.Rows, body)
		} else {
			body(0, br.Rows)
		}
		return
	}
	ids := rows // the selected slots
	if len(sel) != len(rows) {
		ids = make([]int, len(sel))
		for q, r := range sel {
			ids[q] = rows[r]
		}
	}
	t.Reset()
	if o.nzServes(len(sel)) {
		o.mulTransNZ(t, dv, ids)
	} else {
		if !o.xblkHolds(ids) {
			o.setXblk(ids)
			o.xblkRows = nil
		}
		o.mulTransCols(t, &o.xblk, dv)
	}
	if o.usupp == nil {
		o.b.Add(&o.b, t)
		return
	}
	for p, i := range o.usupp {
		floats.Add(o.bc.RawRowView(p), t.RawRowView(i))
	}
}

// xblkHolds reports whether o.xblk holds the dense rows of the given slots.
func (o *Online) xblkHolds(rows []int) bool {
	return len(rows) > 0 && len(o.xblkRows) == len(rows) && &o.xblkRows[0] == &rows[0]
}

// update is one online step after an insertion of x (xr: its Rows). It
// takes what the step needs of the graph (the active rows, their rows of
// the weights, the methods' terms), then runs the numerical rest
// (stepCodes) or, for GNMF and NMF, whose rest reads nothing of the graph,
// returns it for PartialFitDeferred's step.
func (o *Online) update(x Data, xr mat.Matrix, ch graph.Change) (rest func()) {
	isNew := make(map[int]bool, len(ch.Added))
	for _, id := range ch.Added {
		isNew[id] = true
	}
	// Active rows: the new samples, the older nodes Revisit names, those
	// whose label-graph rows changed since the last step (SetLabel), and a
	// few older rows in turn (Refresh). Only their rows of S are needed.
	rows := o.revisited(ch)
	for _, id := range ch.Added {
		if i, ok := slices.BinarySearch(rows, id); !ok {
			rows = slices.Insert(rows, i, id)
		}
	}
	// The label methods' graphs, built once for the step; every node whose
	// row of a label graph differs from the last step's is swept, which
	// also catches what no graph.Change lists (a pair leaving MFA's
	// penalty graph of a class) and labels set on KNN() directly.
	var gs windowGraphs
	if labelAware(o.meth()) {
		gs = o.graphs()
		o.marked = o.labelRowsChanged(o.marked, gs)
		o.keepLabelGraphs(gs)
	}
	for _, id := range o.marked {
		if i, ok := slices.BinarySearch(rows, id); !ok && o.g.Live(id) {
			rows = slices.Insert(rows, i, id)
		}
	}
	o.marked = o.marked[:0]
	rows = o.addRefresh(rows)
	s := o.g.WeightRows(o.Weighting, rows)
	newPos := make([]int, len(ch.Added))
	for p, id := range ch.Added {
		newPos[p], _ = slices.BinarySearch(rows, id)
	}
	terms, st := o.stepTerms(rows, s, gs)
	slots := o.g.Slots()
	if m := o.meth(); m != methodGNMF && m != methodNMF {
		o.stepCodes(x, xr, ch, rows, s, newPos, isNew, terms, st, slots)
		return nil
	}
	return func() {
		o.deferred = true
		defer func() { o.deferred = false }()
		o.stepCodes(x, xr, ch, rows, s, newPos, isNew, terms, st, slots)
	}
}

// stepCodes is the numerical part of update: the new samples' warm start,
// the sweeps of the active rows' codes, the statistics and the U step. It
// reads U, V, the statistics, the window's rows and its arguments, and
// nothing of the graph (see PartialFitDeferred): slots is the graph's
// Slots as of the batch's insertion.
func (o *Online) stepCodes(x Data, xr mat.Matrix, ch graph.Change, rows []int, s *sparse.CSR, newPos []int, isNew map[int]bool, terms []Term, st []sweepTerm, slots int) {
	// Warm start: graph-aware projection of the new samples on the current
	// basis, anchored to the codes of their neighbours already in the
	// window (docs/DESIGN.md §4: the projection that measures best), with the
	// weight of the method's k-NN term (plain NNLS without one). Starting
	// from plain NNLS codes instead leaves new codes far from their
	// neighbours' at larger ranks, and the sweeps do not close the gap.
	o.proj = Projector{Method: ProjectGraph, U: &o.u, MaxIter: 20, Tol: -1, TrainCodes: &o.v, Alpha: o.knnWeight(),
		Neighbors: func(Data) (*sparse.CSR, error) { return anchorRows(s, newPos, isNew, o.height), nil }}
	if o.proj.Alpha == 0 {
		o.proj.Method = ProjectNNLS
	}
	px := x
	if o.usupp != nil {
		// On U's nonzero rows and the same columns of x (supportCols).
		o.syncUC()
		o.proj.U, px = &o.uc, o.supportCols(xr)
	}
	var init mat.Dense
	if err := o.proj.ProjectTo(&init, px); err == nil {
		for r, id := range ch.Added {
			o.v.SetRow(id, init.RawRowView(r))
		}
	} else {
		// Only a zero basis fails here (Projector adds a ridge to a
		// near-singular UᵀU): the sweeps below start the new rows from
		// a small uniform code instead of a slot's stale one.
		for _, id := range ch.Added {
			row := o.v.RawRowView(id)
			for j := range row {
				row[j] = 1e-6
			}
		}
	}
	if o.Forget > 0 {
		bm, _ := o.statsRows()
		bm.Scale(o.Forget, bm)
		o.a.Scale(o.Forget, &o.a)
	}
	// Remember the active rows' codes as the statistics hold them: zero for
	// new rows (not yet added), and, with forgetting, for every row whose
	// past contribution is left to decay.
	o.old.Reset()
	o.old.ReuseAs(len(rows), o.Rank)
	for r, id := range rows {
		if !isNew[id] && o.Forget == 0 {
			copy(o.old.RawRowView(r), o.v.RawRowView(id))
		}
	}
	if o.meth() == methodNGE {
		o.sweepNGE(rows, terms)
	} else {
		o.sweepRows(rows, st)
	}
	// Replace the old contributions by the new ones. With forgetting, old
	// samples' contributions were counted when they arrived and decay;
	// only newcomers add.
	o.updateStats(rows, func(id int) bool { return o.Forget == 0 || isNew[id] })
	o.stepU(len(ch.Added), terms, slots)
	if o.meth() == methodNGE {
		o.reorderNGE(terms)
	}
}

// stepTerms returns the terms of a step on the active rows (ascending),
// whose rows of the k-NN graph's weights are s: the method's terms over
// the window on its graphs gs (Slots×Slots, from graphs), for the U step
// (nil for NMF and GNMF, which have no U parts), and the sweep's view of
// them. GNMF's k-NN graph comes from its rows alone; the other methods'
// graphs are built whole, since their U step needs them too.
func (o *Online) stepTerms(rows []int, s *sparse.CSR, gs windowGraphs) (terms []Term, st []sweepTerm) {
	switch o.meth() {
	case methodGNMF:
		return nil, []sweepTerm{{weight: o.alpha(), s: s}}
	case methodNMF:
		return nil, nil
	}
	gs.each(o.pad)
	terms = o.terms(gs)
	if o.meth() == methodNGE {
		return terms, nil // NGE sweeps with its own V step
	}
	for _, t := range terms {
		g := graphOf(t)
		st = append(st, sweepTerm{weight: g.Weight, lo: g.Lo, hi: g.Hi, s: pickRows(g.S, rows, o.height), dot: g.DotRepulsion})
	}
	return terms, st
}

// revisited returns, ascending, the older nodes that Revisit sweeps
// after the insertion ch.
func (o *Online) revisited(ch graph.Change) []int {
	switch o.Revisit {
	case RevisitNeighbors:
		// The new samples' rows of S list exactly the nodes adjacent to
		// them, in either direction.
		s := o.g.WeightRows(o.Weighting, ch.Added)
		ind := slices.Clone(s.Ind)
		slices.Sort(ind)
		return slices.Compact(ind)
	case RevisitNone:
		return nil
	}
	return slices.Clone(ch.Changed)
}

// addRefresh adds up to Refresh live slots, round-robin, to the sorted rows.
func (o *Online) addRefresh(rows []int) []int {
	n := o.Refresh
	if n == 0 {
		n = 100
	}
	slots := o.g.Slots()
	for tried := 0; n > 0 && tried < slots; tried++ {
		id := o.cursor
		o.cursor = (o.cursor + 1) % slots
		if !o.g.Live(id) {
			continue
		}
		if i, ok := slices.BinarySearch(rows, id); !ok {
			rows = slices.Insert(rows, i, id)
			n--
		}
	}
	return rows
}

func (o *Online) sweeps() int {
	if o.Sweeps == 0 {
		return 10
	}
	return o.Sweeps
}

// stepU runs USteps multiplicative updates of U after a batch of added
// samples: the engine with V fixed on the statistics' loss (statsLoss),
// U ← U ⊙ (B + U·C⁻) / (UA + U·C⁺), where C± = diag(c±) are the U parts of
// the method's terms (none for NMF and GNMF) at the current codes.
func (o *Online) stepU(added int, terms []Term, slots int) {
	steps := o.USteps
	if steps == 0 {
		steps = min(max(added/10, 1), 10)
	}
	if steps > 0 { // a negative USteps leaves U fixed
		o.repairA(slots)
		e := &o.uEng
		o.uLoss.o = o
		e.Loss, e.FixV, e.MaxIter, e.Tol = &o.uLoss, true, steps, -1
		e.Terms = e.Terms[:0]
		for _, t := range terms {
			if nt, ok := t.(*NormalizedGraphTerm); ok {
				e.Terms = append(e.Terms, freeze(nt, &o.v))
			}
		}
		u, b := &o.u, &o.b
		ph := false
		if o.usupp != nil {
			// U's zero rows stay zero: the step on the others only.
			o.syncUC()
			u, b = &o.uc, &o.bc
		} else if ph = o.ph.gather(&o.u, &o.b); ph {
			// U's unseen rows are equal: the step on the seen ones and
			// one row for them.
			u, b = &o.ph.u, &o.ph.b
		}
		d, _ := u.Dims()
		if split := o.stepSplit(d); split != nil && gemm.Serves64(false) {
			o.stepUParts(split, steps, u, b, e.Terms)
		} else {
			o.uLoss.b, o.uLoss.d = b, d
			e.Run(u, &o.v) // errors only on a non-finite objective, never computed here
		}
		if o.usupp != nil {
			// Normalized on the gathered rows, then written back: U's
			// other rows are zero (normalize).
			if o.scaling() == ScaleEachIter || normalized(o.meth()) {
				o.normalizeRows(&o.uc, &o.bc, slots)
			}
			scatterRows(&o.u, &o.uc, o.usupp)
			return
		}
		if ph {
			if o.scaling() == ScaleEachIter || normalized(o.meth()) {
				o.normalizeRows(&o.ph.u, &o.ph.b, slots)
			}
			o.ph.scatter(&o.u, &o.b)
			return
		}
	}
	if o.scaling() == ScaleEachIter || normalized(o.meth()) {
		o.normalize(slots)
	}
}

// repairA recomputes the statistics A = VᵀV and B = XᵀV from the codes
// when A's diagonal has drifted from them: |A_jj − Σᵢ v_ij²| > 10⁻⁹·Σᵢ v_ij²
// + 10⁻¹²·max_j Σᵢ v_ij². The statistics are kept by adding and
// subtracting contributions, and what rounding leaves of a large one (a
// sample of values far above the others') stays when the sample leaves the
// window; where the codes of that sample's column then shrink, that
// remainder becomes most of the column's statistics, the U step goes wrong
// and the codes grow without bound. On a 4-feature stream with a record of
// 10⁴ every 90 among values up to 15, A's relative error grew tenfold
// every six steps from 10⁻¹⁴, and the objective went from 10⁹ to NaN
// within ten steps of its reaching 30% (B's error followed); serve then
// answered every request with an empty body (TestOnlineOutlierLeaves,
// TestServeNoRequestStops). The check costs slots·K per step; the
// recomputation slots·K² plus the product X·V when it fires, which it does
// not on the streams of BENCHMARKS.md (their --out is the same byte for
// byte). With Forget, A is a decayed sum, not VᵀV: no check.
func (o *Online) repairA(slots int) {
	if o.Forget != 0 {
		return
	}
	k := o.Rank
	o.diagWS = slices.Grow(o.diagWS[:0], k)[:k]
	diag := o.diagWS
	clear(diag)
	for i := range slots {
		for j, x := range o.v.RawRowView(i) {
			diag[j] += x * x
		}
	}
	top := slices.Max(diag)
	for j, d := range diag {
		if math.Abs(o.a.At(j, j)-d) > 1e-9*d+1e-12*top {
			o.a.Reset()
			o.a.Mul(o.v.T(), &o.v) // V's rows past the slots are zero
			var b mat.Dense
			o.Data().MulTo(&b, &o.v)
			if o.usupp != nil {
				gatherRowsTo(&o.bc, &b, o.usupp)
			} else {
				o.b = b
			}
			o.repairs++
			return
		}
	}
}

// syncUC gathers U's rows of its support (usupp) into uc unless uc holds
// them already: U changes by the U step and normalize, which run on uc and
// write it back, and otherwise only where ucOK is cleared (findSupport,
// after the first fit, Refit and Restore; reorderNGE).
func (o *Online) syncUC() {
	if !o.ucOK {
		gatherRowsTo(&o.uc, &o.u, o.usupp)
		o.ucOK = true
	}
}

// uPart is the engine and loss of one row part of the U step.
type uPart struct {
	eng  Engine
	loss statsLoss
	// terms are the step's frozen terms on copies of their
	// NormalizedGraphTerm (held in copies), since Engine.Run sets each
	// term's Split: the parts share c, which they only read.
	terms  []Term
	copies []NormalizedGraphTerm
}

// partTerms sets up.terms to terms (frozenUTerm) on up's own copies of
// their NormalizedGraphTerm.
func (up *uPart) partTerms(terms []Term) []Term {
	up.terms, up.copies = up.terms[:0], slices.Grow(up.copies[:0], len(terms))
	for _, t := range terms {
		f := t.(frozenUTerm)
		up.copies = append(up.copies, *f.NormalizedGraphTerm)
		f.NormalizedGraphTerm = &up.copies[len(up.copies)-1]
		up.terms = append(up.terms, f)
	}
	return up.terms
}

// stepUParts runs stepU's steps updates of u (U, or its rows of U's
// support, with b the same rows of B; V fixed) on its rows in two parts
// through split, each part its own engine on its rows of u and b, with
// the terms (frozenUTerm: U·diag(c) for a c computed before, which the
// parts only read): an update of a row of U reads that row of U and B,
// the shared A and c alone, and the kernels sum a row of U·A in a fixed
// order, so the parts change no bit (TestOnlineStepPartsSame). stepU
// takes it only where the kernels run the serial product too
// (gemm.Serves64(false): not under OpenBLAS, whose blocking could round
// otherwise).
func (o *Online) stepUParts(split func(n int, body func(lo, hi int)), steps int, u, b *mat.Dense, terms []Term) {
	d, _ := u.Dims()
	n := len(o.uParts)
	split(n, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			r0, r1 := p*d/n, (p+1)*d/n
			up := &o.uParts[p]
			up.loss = statsLoss{o: o, b: rowsOf(b, r0, r1), d: r1 - r0}
			e := &up.eng
			e.Loss, e.FixV, e.MaxIter, e.Tol, e.Terms = &up.loss, true, steps, -1, up.partTerms(terms)
			e.Run(rowsOf(u, r0, r1), &o.v) // errors only on a non-finite objective, never computed here
		}
	})
}

// scaling maps the zero value to ScaleEachIter: a stream has no end to
// normalize at.
func (o *Online) scaling() Scaling {
	if o.Scaling == ScaleAtEnd {
		return ScaleEachIter
	}
	return o.Scaling
}

// normalize scales U's columns to unit norm, V's columns by the old norms,
// and the statistics to match: B = XV → BΛ, A = VᵀV → ΛAΛ. Every matrix is
// read row by row, once; V up to slots (the graph's Slots as of the
// step's batch), past which no sample has set a row.
func (o *Online) normalize(slots int) {
	if o.usupp == nil {
		o.normalizeRows(&o.u, &o.b, slots)
		return
	}
	// U's other rows are zero: the support's rows only, B's kept as bc.
	o.syncUC()
	o.normalizeRows(&o.uc, &o.bc, slots)
	scatterRows(&o.u, &o.uc, o.usupp)
}

// normalizeRows is normalize on u and b, the rows of U whose others are
// zero and B's kept rows (all of them, or those of U's support as uc and
// bc): the column norms summed over u's rows in order, u's rows divided by
// them, and b's rows, V's (up to slots) and A multiplied by them.
func (o *Online) normalizeRows(u, b *mat.Dense, slots int) {
	k := o.Rank
	nrm := make([]float64, k)
	r, _ := u.Dims()
	for i := range r {
		for j, x := range u.RawRowView(i) {
			nrm[j] += x * x
		}
	}
	inv := make([]float64, k)
	for j, s := range nrm {
		nrm[j] = math.Sqrt(s)
		if nrm[j] == 0 {
			nrm[j] = 1 // a zero column stays as it is
		}
		inv[j] = 1 / nrm[j]
	}
	scaleRows := func(m *mat.Dense, f []float64) {
		r, _ := m.Dims()
		for i := range r {
			row := m.RawRowView(i)
			for j := range row {
				row[j] *= f[j]
			}
		}
	}
	scaleRows(u, inv)
	scaleRows(b, nrm)
	// V's rows past the slots are zero (growSlots); its rows in parts,
	// each entry scaled alone.
	inParts(o.stepSplit(slots), slots, func(lo, hi int) {
		scaleRows(o.v.Slice(lo, hi, 0, k).(*mat.Dense), nrm)
	})
	for i := range k {
		row := o.a.RawRowView(i)
		for j := range row {
			row[j] *= nrm[i] * nrm[j]
		}
	}
}

// Refit runs the batch engine with the method's full terms on the whole
// window (its current graphs and labels), warm-started from the current U
// and V, for at most iters updates, and recomputes the statistics. It is
// the periodic refit that online updates approximate.
func (o *Online) Refit(iters int) (Result, error) {
	o.settle()
	if !o.started {
		return Result{}, ErrNotFitted
	}
	var res Result
	var err error
	if o.meth() == methodNGE {
		// NGE's own iteration (M-matrix solves and reordering) on the
		// window's terms.
		m := o.nge()
		m.MaxIter, m.d = iters, o.q
		terms := o.windowTerms()
		blocks := ngeBlocks(terms)
		m.eng = Engine{Loss: NewFrobenius(o.Data()), Terms: terms}
		m.blocks = [2]*mMatrix{newMMatrix(o.height, blocks[0]), newMMatrix(o.height, blocks[1])}
		res, err = m.iterate(&o.u, &o.v)
	} else {
		e := Engine{Loss: NewFrobenius(o.Data()), Terms: o.windowTerms(), MaxIter: iters, Normalize: o.engineScaling(), Split: o.Split}
		res, err = e.Run(&o.u, &o.v)
	}
	o.recomputeStats()
	o.findSupport()
	return res, err
}

// Objective returns the method's objective over the window at the current
// U, V: the batch type's loss and terms on the window's graphs.
func (o *Online) Objective() float64 {
	o.settle()
	e := Engine{Loss: NewFrobenius(o.Data()), Terms: o.windowTerms()}
	return e.Objective(&o.u, &o.v, nil)
}

// Seen returns the number of samples added so far.
func (o *Online) Seen() int { return o.seen }
