package graph

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Metric is the distance used to find neighbours.
type Metric int

const (
	// Euclidean ranks neighbours by ‖a − b‖.
	Euclidean Metric = iota
	// Cosine ranks neighbours by 1 − aᵀb/(‖a‖‖b‖); a zero row has cosine 0
	// to every row.
	Cosine
)

func (m Metric) String() string {
	switch m {
	case Euclidean:
		return "euclidean"
	case Cosine:
		return "cosine"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// Defaults for the zero fields of KNN.
const (
	DefaultK            = 5   // Cai et al.'s GNMF default neighbourhood size
	DefaultBlockSize    = 512 // rows per dgemm block: 512×512×8 B = 2 MiB per distance block
	DefaultPenaltyPairs = 20  // MFA/NGE: shortest between-class pairs per class (Yang et al. 2008)
)

// ErrEmpty is returned when a batch build is given no samples or no features.
var ErrEmpty = errors.New("graph: empty data")

// KNN configures an exact k-nearest-neighbour graph. The zero value is
// usable: k = 5, Euclidean, blocks of 512 rows, no window.
type KNN struct {
	// K is the number of neighbours per node. If zero, it defaults to 5.
	// It must not be negative, and a batch build needs K < N.
	K int
	// Metric is the neighbour distance. The zero value is Euclidean.
	Metric Metric
	// BlockSize is the number of rows per distance block. If zero, it
	// defaults to 512. Larger blocks use BlockSize² float64 of workspace.
	BlockSize int
	// Window, if positive, bounds the number of live nodes: an insertion that
	// would exceed it first removes the oldest nodes (a sliding window), so
	// memory stays flat on an endless stream. Zero means unbounded.
	Window int

	// IntraK is the number of same-class neighbours in the intra-class graph
	// W_w (and MFA's intrinsic graph, k₁). If zero, it defaults to K.
	IntraK int
	// InterK is the number of different-class neighbours in the inter-class
	// graph W_b. If zero, it defaults to IntraK.
	InterK int
	// PenaltyPairs is k₂, the number of shortest between-class pairs per
	// class in MFA's penalty graph. If zero, it defaults to 20.
	PenaltyPairs int
	// Slack is the number of extra neighbours each node keeps beyond K, the
	// next nearest ones, maintained exactly: when nodes leave the graph
	// (Remove, or the Window), a list that still holds K entries needs no
	// new search, and the lists stay equal to a fresh build. If zero, it
	// defaults to K when Window is set (a sliding window removes as many
	// nodes as it adds) and to none otherwise; a negative value means none.
	Slack int
	// LabelsOnly keeps labels (Label, SetLabel) without the label-aware
	// neighbour lists, for callers that only read labels back, such as an
	// online GNMF: a label then costs O(1) instead of a search over the
	// labeled nodes, and IntraInter, Signed and MFA panic.
	LabelsOnly bool
}

func (c KNN) norm() (KNN, error) {
	if c.K < 0 || c.IntraK < 0 || c.InterK < 0 || c.PenaltyPairs < 0 || c.BlockSize < 0 || c.Window < 0 {
		return c, fmt.Errorf("graph: negative parameter in %+v", c)
	}
	if c.Metric != Euclidean && c.Metric != Cosine {
		return c, fmt.Errorf("graph: unknown metric %d", int(c.Metric))
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.IntraK == 0 {
		c.IntraK = c.K
	}
	if c.InterK == 0 {
		c.InterK = c.IntraK
	}
	if c.PenaltyPairs == 0 {
		c.PenaltyPairs = DefaultPenaltyPairs
	}
	if c.Slack == 0 && c.Window > 0 {
		c.Slack = c.K
	}
	if c.Window > 0 && c.Window <= c.K {
		return c, fmt.Errorf("graph: window %d must exceed k = %d", c.Window, c.K)
	}
	return c, nil
}

// Dense builds the exact k-NN graph of the rows of x (N×D, one sample per
// row, i.e. Xᵀ in docs/DESIGN.md §1 notation). Node i is row i. It returns an
// error for empty data, non-finite values, K ≥ N, or (Cosine) zero rows.
// If x is a *mat.Dense whose rows follow one another, the graph reads
// them in place, without a copy, until its first insertion or removal,
// which copies them: do not modify x meanwhile. Otherwise it keeps a copy.
func (c KNN) Dense(x mat.Matrix) (*Graph, error) { return c.DenseSplit(x, nil) }

// DenseSplit is Dense with the search run in parts at once: split(n, body)
// must call body on disjoint, non-empty ranges [lo, hi) covering [0, n),
// possibly on several goroutines, and return once every call has
// returned (pipeline.Split provides one). The pairs of distance blocks
// are cut into parts, each with its own candidates, merged in order: the
// graph is Dense's exactly. It keeps split for its insertions (SetSplit).
func (c KNN) DenseSplit(x mat.Matrix, split func(n int, body func(lo, hi int))) (*Graph, error) {
	n, d := x.Dims()
	newGraph := func(dim int) (*Graph, error) {
		g, err := c.NewDense(dim)
		if g != nil {
			g.split = split
		}
		return g, err
	}
	return c.build(n, d, newGraph, func(g *Graph) ([]int, error) { return g.addDenseBorrow(x, true) })
}

// Sparse builds the exact k-NN graph of the rows of x (N×D, one sample per
// row), as Dense does. Sparse data suit Cosine (TF-IDF); Euclidean works too.
func (c KNN) Sparse(x *sparse.CSR) (*Graph, error) { return c.SparseSplit(x, nil) }

// SparseSplit is Sparse with the search run in parts at once, as
// DenseSplit runs Dense's: the graph is Sparse's exactly. It keeps split
// for its insertions (SetSplit).
func (c KNN) SparseSplit(x *sparse.CSR, split func(n int, body func(lo, hi int))) (*Graph, error) {
	n, d := x.Dims()
	newGraph := func(dim int) (*Graph, error) {
		g, err := c.NewSparse(dim)
		if g != nil {
			g.split = split
		}
		return g, err
	}
	return c.build(n, d, newGraph, func(g *Graph) ([]int, error) { return g.addSparse(x) })
}

// build checks an n×d batch, makes the empty graph with newGraph, adds the
// rows with add and searches every node's neighbours.
func (c KNN) build(n, d int, newGraph func(int) (*Graph, error), add func(*Graph) ([]int, error)) (*Graph, error) {
	if n == 0 || d == 0 {
		return nil, ErrEmpty
	}
	g, err := newGraph(d)
	if err != nil {
		return nil, err
	}
	if g.cfg.K >= n {
		return nil, fmt.Errorf("graph: k = %d needs more than %d samples", g.cfg.K, n)
	}
	if g.cfg.Window > 0 && n > g.cfg.Window {
		return nil, fmt.Errorf("graph: %d samples exceed the window of %d", n, g.cfg.Window)
	}
	ids, err := add(g)
	if err != nil {
		return nil, err
	}
	// The batch search is the one big enough for float32 dots to pay for
	// the copy; later insertions search in float64.
	if g.st.beginFast32(ids) {
		defer g.st.endFast32()
	}
	g.search(&g.knn, ids, ids, true, nil, nil, nil)
	return g, nil
}

// NewDense returns an empty graph for dense rows of dimension dim, to be
// filled by InsertDense. Until more than K nodes are live, lists hold all
// other live nodes.
func (c KNN) NewDense(dim int) (*Graph, error) {
	if dim <= 0 {
		return nil, ErrEmpty
	}
	return c.newGraph(dim, false)
}

// NewSparse returns an empty graph for sparse rows of initial dimension dim
// (it grows with the rows inserted), to be filled by InsertSparse.
func (c KNN) NewSparse(dim int) (*Graph, error) {
	if dim < 0 {
		return nil, ErrEmpty
	}
	return c.newGraph(dim, true)
}

func (c KNN) newGraph(dim int, isSparse bool) (*Graph, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	g := &Graph{cfg: c, blockSize: c.BlockSize}
	g.st = store{isSparse: isSparse, dim: dim, cosine: c.Metric == Cosine}
	g.knn.k, g.knn.vis = c.K+max(c.Slack, 0), c.K
	g.intra.k = c.IntraK
	g.inter.k = max(c.InterK, c.PenaltyPairs)
	g.intra.vis, g.inter.vis = g.intra.k, g.inter.k
	return g, nil
}
