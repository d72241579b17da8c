package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

func init() {
	register(command{
		name:    "stream",
		summary: "replay a stream in order: predict each record on arrival, then learn (prequential), with checkpoints",
		run:     runStream,
	})
}

// streamSummary is the JSON object stream --json prints (docs/DESIGN.md §6).
type streamSummary struct {
	// Accuracy is prequential: Correct over NScored, the labeled samples
	// that arrived after the first label, each predicted on arrival; a
	// sample left without a prediction counts as wrong.
	Accuracy         jsonFloat    `json:"accuracy"`
	AccuracyCI95     [2]jsonFloat `json:"accuracy_ci95"` // Wilson score interval
	NScored          int64        `json:"n_scored"`
	BalancedAccuracy jsonFloat    `json:"balanced_accuracy"`
	MacroF1          jsonFloat    `json:"macro_f1"`
	Majority         jsonFloat    `json:"majority"` // always answering the scored samples' most frequent class: accuracy's floor on skewed classes
	Early            int64        `json:"early"`    // labeled samples that arrived before any label: not scored
	Records          int64        `json:"records"`
	Rejected         int64        `json:"rejected"`
	Samples          int64        `json:"samples"`
	Duplicates       int64        `json:"duplicates"`
	LateLabels       int64        `json:"late_labels"`
	Labeled          int64        `json:"labeled"`
	Correct          int64        `json:"correct"`
	Unpredicted      int64        `json:"unpredicted"`
	Unlearned        int64        `json:"unlearned_labels"` // labels that came after their sample left the window: scored, not learned
	Pending          int          `json:"pending"`
	Seconds          float64      `json:"seconds"`
	RecordsPerSecond float64      `json:"records_per_second"`
	RunRecords       int64        `json:"run_records"`
	ResumedFrom      int64        `json:"resumed_from"`
	Window           int          `json:"window"`
	Rank             int          `json:"rank"`
	// SearchDims is the dimension the k-NN graph searches in at the end:
	// the search basis's rank on images (--search-basis), else the
	// samples' (or --search-dim); 0 before the first sample and with
	// --nats (the graphs are the owners').
	SearchDims int `json:"search_dims"`
	// CodeNN1 and CodeNMI score the codes of the window's labeled samples
	// (at most the 5,000 most recent, CodeN of them) against their labels:
	// leave-one-out 1-NN accuracy and the NMI of a k-means clustering
	// (stages.Learner.Embedding); null before the first fit. They are
	// computed after the run, outside Seconds.
	CodeNN1 jsonFloat `json:"code_1nn"`
	CodeNMI jsonFloat `json:"code_nmi"`
	CodeN   int       `json:"code_n"`
	// BatchReference is --batch-reference's report, absent without it.
	BatchReference *batchReference `json:"batch_reference,omitempty"`
}

// batchReference reports a warm-started batch refit of the window after
// the run (stages.Learner.Consolidate), computed outside Seconds: how far
// the online factorization was from a batch fit of the same method on the
// window with the labels known at the end.
type batchReference struct {
	Iterations      int       `json:"iterations"`
	ObjectiveOnline jsonFloat `json:"objective_online"`
	ObjectiveBatch  jsonFloat `json:"objective_batch"`
	// ObjectiveGap is (online − batch) / |batch|.
	ObjectiveGap jsonFloat `json:"objective_gap"`
	// CodesChange is ‖V_batch − V_online‖ / ‖V_online‖ over the window.
	CodesChange jsonFloat `json:"codes_change"`
	// CodeNN1 and CodeNMI score the refitted labeled codes as code_1nn and
	// code_nmi score the online ones.
	CodeNN1 jsonFloat `json:"code_1nn"`
	CodeNMI jsonFloat `json:"code_nmi"`
	Seconds float64   `json:"seconds"`
	// Error is the refit's error (a diverging objective), "" if none.
	Error string `json:"error,omitempty"`
}

// jsonFloat writes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// String writes f with four decimals for the text summaries, and NaN (a
// figure the data leaves undefined, such as the codes' NMI with one class)
// as "undefined".
func (f jsonFloat) String() string {
	if math.IsNaN(float64(f)) {
		return "undefined"
	}
	return fmt.Sprintf("%.4f", float64(f))
}

// autoBatch is the number of records per learning step when -batch is 0:
// max(10, window/100), i.e. 10 for a window of 1,000 and 200 for a window
// of 20,000. A step costs O(window) besides its records (the basis
// normalization rescales every code), so larger windows want larger
// steps; labels are learned in input order within a step, so a larger
// step delays no label (BENCHMARKS.md, "Streams").
func autoBatch(window int) int { return max(10, window/100) }

// batchOnly lists the methods fit runs that the online learner does not.
func batchOnly() []string {
	var names []string
	for _, m := range methods.List() {
		if !m.Online && m.Alias == "" {
			names = append(names, m.Name)
		}
	}
	return names
}

// addOnlineFlags declares the flags of the online learner.
func addOnlineFlags(fs *flag.FlagSet, c *onlineConfig) {
	c.Method = "gnmf"
	// The command line sweeps fewer older codes than model.Online's zero
	// value: the same predictions, the codes' 1-NN within half a point,
	// about 12% less CPU on MNIST (BENCHMARKS.md, "Eleventh pass").
	c.Revisit = int(model.RevisitNeighbors)
	fs.Func("method", "algorithm learned online: gnmf (the default), nmf, dgnmf, ssknmf, n2s2l, nge or auto (see fit -help); it shapes the codes, which --codes auto reads in the weights of the graph predictor's edges (see --spread-codes), on documents in the vote of the nearest labeled codes (see --code-expert), and for samples no label reaches (--codes only or --predictor nearest read them alone)", func(s string) error {
		m, err := methods.Lookup(s)
		if err != nil {
			return err
		}
		if !m.Online {
			return fmt.Errorf("method %q cannot learn online (%s are batch only: use fit)", s, strings.Join(batchOnly(), ", "))
		}
		c.Method = m.Name
		return nil
	})
	fs.Float64Var(&c.Beta, "beta", 0, "second graph weight β of ssknmf and n2s2l, their k-NN graph's (0: the method's online default: for ssknmf 2 on dense samples and 10 on documents; 100 for n2s2l)")
	fs.IntVar(&c.Rank, "rank", 40, "rank K of the factorization")
	fs.IntVar(&c.Q, "q", 0, "discriminative columns q of n2s2l and nge, the block V¹ of their codes (0: the number of classes among the labels at the first fit, at least 3K/4 for n2s2l, whose stream classifiers read V¹ alone, and K/4 for nge)")
	fs.IntVar(&c.Neighbors, "neighbors", 5, "k of the k-NN graph")
	fs.IntVar(&c.Window, "window", 10000, "samples kept in the sliding window (0: unbounded); a label that comes after its sample has left it is scored but not learned (--json: unlearned_labels): keep it longer than the labels' delay")
	fs.Float64Var(&c.Alpha, "alpha", 0, "graph weight α (0: the method's online default: 3 for gnmf, model.DefaultOnlineGraphWeight)")
	fs.IntVar(&c.Batch, "batch", 0, "records per learning step (0: max(10, window/100))")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the randomized SVD behind the first fit's NNDSVDa initialization (otherwise deterministic: another seed moves the codes by rounding, rarely a prediction) and of --search-dim's random projection")
	fs.IntVar(&c.Vote, "vote", 0, "labeled neighbours voting on a prediction (0: 1 for nearest, 7 for propagate)")
	fs.IntVar(&c.Sweeps, "sweeps", 0, "multiplicative sweeps of the affected codes per step (0: 10)")
	fs.Float64Var(&c.Forget, "forget", 0, "forgetting factor of the statistics in (0, 1) (0: exact window statistics)")
	fs.IntVar(&c.SearchDim, "search-dim", 0, "search neighbours in a random projection to this many dimensions (0: the full samples; replaces --search-basis)")
	fs.IntVar(&c.SearchBasis, "search-basis", model.DefaultSearchBasis, "search neighbours, and weigh the graph's edges, in the span of a basis of this rank fitted to the stream's newest samples (see --search-fit; refitted as the stream grows) when the samples are dense with at least 10× as many features (images such as MNIST's 784 pixels) and its span does not classify the labeled samples worse than they do; 0: the samples as they are. stream refuses a rank that changes nothing on its samples (neither it nor the default applies)")
	fs.Func("search-fit", "the search basis's fit: svd (the default: the newest samples' leading singular vectors, their principal span) or nmf (a plain NMF's basis, the default before)", func(s string) error {
		f, err := model.ParseSearchFit(s)
		c.SearchFit = int(f)
		return err
	})
	fs.Func("codes", "what the predictor reads of the factorization: auto (the default: the labels spread over the graph of the samples projected on the search basis, see --search-basis, its edges weighed by the samples' and the codes' cosines, see --spread-codes; the codes predict the samples no label reaches), off (the raw samples alone: no search basis) or only (the codes alone: the labels spread over a graph of the codes, and on documents a linear model of the codes) — the ablations of BENCHMARKS.md", func(s string) error {
		u, err := stages.ParseCodeUse(s)
		c.Codes = int(u)
		return err
	})
	fs.Float64Var(&c.SpreadPower, "spread-power", 0, "p of the graph predictor's edge weights, the cosine of the two samples to the power p (0: 20 on dense rows, binary weights on documents; negative: the graph's binary weights)")
	fs.Float64Var(&c.SpreadCodes, "spread-codes", 0, "q of the codes' factor on the graph predictor's edge weights with --codes auto: each edge also weighs the cosine of its two samples' codes to the power q, so that --method shapes the predictions (0: 4 on dense rows, 40 on documents; negative: the samples alone)")
	fs.BoolFunc("code-expert", "on documents, mix into the graph predictor's answer the class shares of the sample's nearest labeled codes (k of --neighbors, by cosine), weighed by their recent accuracy like its other experts (the default; the codes of --method reach the answer through it); --code-expert=false leaves it out, the ablation of BENCHMARKS.md. Images have no mixture (their answer is the spreading's): stream refuses it on them", func(s string) error {
		on, err := strconv.ParseBool(s)
		c.NoCodeExpert = !on
		return err
	})
	fs.Float64Var(&c.PriorPower, "prior-power", 0, "on documents, divide each class's probability in the graph predictor's mixture by the class's share of the window's labels (one label a class added) to this power, so that a class the labels make rare is still answered where the experts that follow the labels' majority cannot tell it apart (0: the default, 0.15; negative: none, the ablation of BENCHMARKS.md). Images have no mixture: stream refuses it on them")
	fs.Float64Var(&c.SpreadMetric, "spread-metric", 0, "weight of the labels' Fisher directions in the graph predictor's search, on dense rows of at most 256 features (the graph rebuilt every step under that metric); 0: the samples' own graph (the default: the learned metric cost accuracy on the digits); stream refuses it on other samples")
	fs.Float64Var(&c.MaxNormRatio, "max-norm-ratio", stages.DefaultMaxNormRatio, "reject a record whose Euclidean norm is more than this many times the window's typical norm (the geometric mean of the other nonzero norms of its samples and its batch): a corrupt record, such as a pixel of 1e30, would otherwise set the basis and its neighbours' codes (documents, whose TF-IDF rows have unit length, are not bounded: stream refuses it on them); a ratio above 1, or a negative one for no bound")
	fs.Func("graph-metric", "distance of the model's k-NN graph of the samples: auto (the default: Euclidean, moved to the cosine where, at the search basis's judgement points, the newest 500 labeled samples are classified better by it leave-one-out by 3 standard deviations: model.Online.ChooseMetric), euclidean or cosine (held throughout). On documents, whose TF-IDF rows have unit length, the two find the same neighbours: stream refuses it on them", func(s string) error {
		m, named, err := parseGraphMetric(s)
		c.GraphMetric = 0
		if named {
			c.GraphMetric = int(m) + 1
		}
		return err
	})
	fs.Func("revisit", "older codes swept with each step's new ones: neighbors (the new samples' neighbours; the default), changed (also every node that lost an edge, as to a sample leaving the window: model.Online's zero value) or none (only the new samples and a round-robin refresh: fastest, codes a little worse)", func(s string) error {
		r, err := parseRevisit(s)
		c.Revisit = int(r)
		return err
	})
}

// parseRevisit maps -revisit names.
func parseRevisit(s string) (model.Revisit, error) {
	switch s {
	case "changed":
		return model.RevisitChanged, nil
	case "neighbors":
		return model.RevisitNeighbors, nil
	case "none":
		return model.RevisitNone, nil
	}
	return 0, fmt.Errorf("want changed, neighbors or none, not %q", s)
}

// predictorFlag maps -predictor names.
func parsePredictor(s string) (int, error) {
	switch s {
	case "graph":
		return int(stages.PredictGraph), nil
	case "nearest":
		return int(stages.PredictNearest), nil
	case "propagate":
		return int(stages.PredictPropagate), nil
	case "walk":
		return int(stages.PredictWalk), nil
	case "spread":
		return int(stages.PredictSpread), nil
	}
	return 0, fmt.Errorf("%w: -predictor %q: want graph, spread, nearest, walk or propagate", errUsage, s)
}

// checkCodeUse refuses --codes off with a predictor that classifies codes,
// and the settings of a part of the predictor that the chosen predictor or
// --codes does not run: the learner's own check (stages.Learner.Check)
// decides, and settingFlags names the flags; the search basis's flags
// (--search-basis, --search-fit), whose defaults are set, are refused here
// with --search-dim or --codes off. Each would change nothing (a flag at
// its zero default is not a setting).
func checkCodeUse(c onlineConfig) error {
	var errs []error
	for _, e := range joined(c.learner().Check()) {
		var se *stages.SettingError
		switch {
		case errors.Is(e, stages.ErrCodesOff):
			errs = append(errs, fmt.Errorf("%w: --codes off leaves nothing to --predictor nearest, walk or propagate, which classify the codes: use --predictor graph or spread", errUsage))
		case errors.As(e, &se):
			if msg, ok := settingFlags[[2]string{se.Field, se.With}]; !ok {
				errs = append(errs, fmt.Errorf("%w: %v", errUsage, e))
			} else if msg != "" {
				errs = append(errs, fmt.Errorf("%w: %s", errUsage, msg))
			}
		}
	}
	if c.SearchBasis != model.DefaultSearchBasis || model.SearchFit(c.SearchFit) != model.SearchFitSVD {
		switch {
		case c.SearchDim > 0:
			errs = append(errs, fmt.Errorf("%w: --search-dim replaces the search basis: drop --search-basis and --search-fit, or --search-dim", errUsage))
		case stages.CodeUse(c.Codes) == stages.CodesOff:
			errs = append(errs, fmt.Errorf("%w: --codes off searches the raw samples, without a search basis: drop --search-basis and --search-fit, or use --codes auto", errUsage))
		}
	}
	return errors.Join(errs...)
}

// settingFlags words stages.SettingError{Field, With} for the command
// line, naming the flag; "" for those the search flags' own check above
// words (the learner sees no search basis with --search-dim or --codes
// off, whatever --search-basis says).
var settingFlags = map[[2]string]string{
	{"SpreadPower", "Predictor=graph|spread"}:  spreadsOnly("--spread-power"),
	{"SpreadCodes", "Predictor=graph|spread"}:  spreadsOnly("--spread-codes"),
	{"SpreadMetric", "Predictor=graph|spread"}: spreadsOnly("--spread-metric"),
	{"SpreadCodes", "Codes=auto"}:              "--spread-codes weighs the samples' edges by their codes with --codes auto only (off reads no codes, only spreads over the codes' own graph): drop it, or use --codes auto",
	{"SpreadMetric", "Codes=auto|off"}:         "--spread-metric learns the samples' graph, which --codes only does not search: drop it, or use --codes auto or off",
	{"Model.SearchFit", "Model.SearchBasis"}:   "",
	{"PriorPower", "Predictor=graph"}:          "--prior-power scales the graph predictor's mixture, which --predictor spread, nearest, walk and propagate do not run: drop it, or use --predictor graph",
	{"NoCodeExpert", "Predictor=graph"}:        "--code-expert=false leaves an expert out of the graph predictor's mixture, which --predictor spread, nearest, walk and propagate do not run: drop it, or use --predictor graph",
	{"NoCodeExpert", "Codes=auto|only"}:        "--codes off reads no codes, so the mixture has no code-space expert to leave out: drop --code-expert=false, or use --codes auto or only",
}

func spreadsOnly(flag string) string {
	return flag + " weighs the graph predictor's edges, and --predictor nearest, walk and propagate do not spread the labels over them: drop it, or use --predictor graph or spread"
}

// joined returns the errors errors.Join joined into err, or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func parseMetric(s string) (int, error) {
	switch s {
	case "euclidean":
		return 0, nil
	case "cosine":
		return 1, nil
	}
	return 0, fmt.Errorf("%w: -metric %q: want euclidean or cosine", errUsage, s)
}

const streamSynopsis = `stream --in F [--out P.arrow] [--checkpoint C] [--method M] [--window n] [--batch n] [--seed s] [--json] [CSV flags]

Replays the records of F in order as a stream: each record is predicted on
arrival, before anything learns from it, then the online model (GNMF by
default, --method) learns from it; labels may come late, as a later
record with the same id, a label and no features. It prints the
prequential accuracy (each labeled record's arrival-time prediction
scored, late labels included) and, with --out, writes every arrival-time
prediction (id, pred, score; an Arrow output also the sample's code on
arrival, from its batch's step). With --checkpoint C it saves its whole state
to C atomically every --checkpoint-every records and at the end, and
resumes from C when it exists, skipping the records already applied. A
resume on another input is refused: C holds a file's size and first MiB
and, for any input (stdin and image folders too), a fingerprint of the
records it applied, the first 1,024 at most, which the resumed run checks
as it skips them.
F is read as fit reads it (see "nmfstream fit -help"; CSV columns with
--label-column, --id-column, --text-column). --model CKPT is the
deprecated spelling of --checkpoint CKPT. With --nats URL the stream runs
on the distributed learner (see nmfstream stream --nats URL -help).

Examples:
  nmfstream stream --in stream.arrow --out pred.jsonl
  nmfstream stream --in stream.arrow --checkpoint run.ckpt --json
  nmfstream stream --in train-images-idx3-ubyte --window 20000 --search-dim 32 --json
  nmfstream stream --in mails.csv --text-column body --label-column spam --id-column id`

func runStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args, ok := natsArgs(args); ok {
		return runStreamNATS(ctx, args, stdout, stderr)
	}
	o, err := parseStreamFlags(args, stderr)
	if err != nil {
		return err
	}
	stop, err := startProfile(o.profile, o.trace)
	if err != nil {
		return err
	}
	defer stop()
	r, err := o.open(stderr)
	if err != nil {
		return err
	}
	defer r.src.Close()
	read := pipeline.ReadFunc[*streamStep](func(ctx context.Context) (*streamStep, error) {
		b, err := r.rd.Read(ctx)
		if err != nil {
			return nil, err
		}
		return &streamStep{link: link{batch: b}}, nil
	})
	p := newChain(r.l, pipeline.From("records", read), nil, r.learned, pipeline.To("predictions", r.sink))
	// The learner is the slow step: batches read further ahead only take
	// memory (a batch of 1,000 MNIST images is 6 MB as float64).
	p.Buffer = 2
	runErr := p.Run(ctx)
	r.l.Model.Settle() // the last batch's step, which may still run
	r.pr.done()
	elapsed := time.Since(r.start).Seconds()
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return changedInput(runErr, o.ckpt, o.in) // a failed run does not checkpoint: the last checkpoint stays valid
	}
	// At the end, and on SIGINT/SIGTERM: the pipeline has stopped and the
	// sink has closed the outputs, so the learner is quiet and consistent
	// (each Learn call completes) and the outputs hold every step.
	if err := r.saveFinal(); err != nil {
		return err
	}
	if err := r.report(summaryOut(o.out, stdout, stderr), stderr, elapsed); err != nil {
		return err
	}
	// docs/DESIGN.md §6: the exit status is non-zero when no record was usable.
	if c := r.l.Counters(); runErr == nil && c.Records == 0 {
		return fmt.Errorf("%s: no records: nothing to predict or learn (an empty input, or a header only)", o.in)
	} else if runErr == nil {
		if err := nothingUsable(c); err != nil {
			return err
		}
	}
	return runErr
}

// warnUnlearned says on stderr how many labels came after their sample
// had left the window (stages.Counters.Unlearned), and what learns them.
func warnUnlearned(w io.Writer, c stages.Counters) {
	if c.Unlearned > 0 {
		fmt.Fprintf(w, "nmfstream stream: %d labels came after their sample had left the window: scored and counted in the class shares, but not learned; a --window longer than the labels' delay learns them\n", c.Unlearned)
	}
}

// nothingUsable is the error of a run whose counters c (the whole
// stream's, across resumes, and with --nats the namespace's) hold records
// but no sample: every record with features was rejected, and the late
// labels, if any, found no sample (docs/DESIGN.md §6: the exit status is
// non-zero when no record was usable); nil otherwise.
func nothingUsable(c stages.Counters) error {
	if c.Records == 0 || c.Samples > 0 {
		return nil
	}
	if c.LateLabels > 0 {
		return fmt.Errorf("no usable record: all %d records with features were rejected, and %d late labels found no sample (see --rejects for the reasons)", c.Rejected, c.LateLabels)
	}
	return fmt.Errorf("no usable record: all %d records were rejected (see --rejects for the reasons)", c.Rejected)
}

// streamOptions are stream's flags, parsed and checked.
type streamOptions struct {
	fs                                              *flag.FlagSet
	in, out, ckpt, oldCkpt, rejects, profile, trace string
	every                                           int64
	batchRef                                        int // --batch-reference: refit iterations after the run, 0 for none
	asJSON                                          bool
	cfg                                             onlineConfig
	csvf                                            csvFlags
}

// parseStreamFlags parses stream's arguments; an error says which flag is
// wrong.
func parseStreamFlags(args []string, stderr io.Writer) (*streamOptions, error) {
	return parseStreamFlagsWith(args, stderr, streamSynopsis, nil)
}

// parseStreamFlagsWith is parseStreamFlags with another synopsis and, if
// extra is not nil, the flags extra declares (stream --nats's).
func parseStreamFlagsWith(args []string, stderr io.Writer, synopsis string, extra func(*flag.FlagSet)) (*streamOptions, error) {
	o := &streamOptions{fs: newFlags("stream", synopsis, stderr)}
	fs := o.fs
	fs.StringVar(&o.in, "in", "", "input `file` replayed in order (required; - for an Arrow stream on stdin)")
	fs.StringVar(&o.out, "out", "", "write arrival-time predictions (id, pred, score) to this `file` (.jsonl; .arrow or .arrows add each sample's code on arrival, null before the first fit and with --nats; - an Arrow stream on stdout, the summary and --json then on stderr)")
	fs.StringVar(&o.ckpt, "checkpoint", "", "checkpoint `file`: resumed from if it exists (on the input it was taken on only), written every --checkpoint-every records and at the end")
	fs.StringVar(&o.oldCkpt, "model", "", "deprecated spelling of --checkpoint (stream does not start from a fitted model)")
	fs.Int64Var(&o.every, "checkpoint-every", 10000, "records between checkpoints (with --checkpoint; 0: only at the end)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object instead of text")
	fs.IntVar(&o.batchRef, "batch-reference", 0, "after the last prediction, refit the window in batch, warm-started from the online factors, for at most this many updates, and report how far the online factorization was from that fit (objective gap, codes' change, the labeled codes' 1-NN and NMI before and after); 0: none. It costs that many batch updates of the window")
	fs.StringVar(&o.rejects, "rejects", "", "write rejected records to this `file` (JSON lines); a record without features (an empty document) is rejected and still gets its line in --out, answered from the class shares of the labels before it")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the run to this `file` (go tool pprof)")
	fs.StringVar(&o.trace, "trace", "", "write a runtime execution trace of the run to this `file` (go tool trace; with --cpuprofile it holds the CPU samples too, which bench/streamprof/alone.py reads)")
	predictor := fs.String("predictor", "graph", "classifier: graph (the default: the labels spread over the k-NN graph of every sample in the window, mixed on documents with an online linear model of the features, the last labels' class shares and the nearest labeled codes' (see --code-expert), by their recent accuracy, the classes then divided by their share of the labels, see --prior-power), spread (the spreading alone), nearest (k-NN vote over every labeled code), walk (the same vote, its neighbours found by a walk of the k-NN graph: cost independent of the window) or propagate (label propagation over the window)")
	metric := fs.String("metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	addOnlineFlags(fs, &o.cfg)
	addCSVFlags(fs, &o.csvf)
	if extra != nil {
		extra(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if o.in == "" {
		return nil, fmt.Errorf("%w: --in is required (see nmfstream stream -help)", errUsage)
	}
	if o.batchRef < 0 {
		return nil, fmt.Errorf("%w: --batch-reference %d: want a number of updates, or 0 for none", errUsage, o.batchRef)
	}
	if o.every < 0 {
		return nil, fmt.Errorf("%w: --checkpoint-every %d: want a number of records, or 0 for a checkpoint at the end only", errUsage, o.every)
	}
	cpath, seed, err := modelOrCheckpoint("stream", o.oldCkpt, o.ckpt, stderr)
	if err != nil {
		return nil, err
	}
	if seed != nil {
		return nil, fmt.Errorf("%w: --model %s is a fitted model, and stream cannot start from one yet (serve --model can); to resume a stream give its checkpoint as --checkpoint", errUsage, o.oldCkpt)
	}
	o.ckpt = cpath
	if err := errors.Join(checkInput("--in", o.in), checkOutput("--out", o.out), checkOutput("--checkpoint", o.ckpt),
		checkOutput("--rejects", o.rejects), checkOutput("--cpuprofile", o.profile), checkOutput("--trace", o.trace)); err != nil {
		return nil, err
	}
	if o.cfg.Predictor, err = parsePredictor(*predictor); err != nil {
		return nil, err
	}
	if o.cfg.Metric, err = parseMetric(*metric); err != nil {
		return nil, err
	}
	if err := checkCodeUse(o.cfg); err != nil {
		return nil, err
	}
	return o, checkOnlineConfig(&o.cfg)
}

// checkQ checks --q against --rank.
func checkQ(c onlineConfig) error {
	if c.Q < 0 || c.Q > 0 && c.Q >= c.Rank {
		return fmt.Errorf("%w: -q %d: want 0 (the default) or 1 ≤ q < -rank %d", errUsage, c.Q, c.Rank)
	}
	return nil
}

// checkOnlineConfig checks c and fills in the batch size: a value the
// learner cannot take, or that its --method would ignore, is a usage
// error naming the flag and what it accepts (docs/DESIGN.md §6).
func checkOnlineConfig(c *onlineConfig) error {
	if c.Rank <= 0 || c.Batch < 0 || c.Window < 0 || c.Neighbors < 0 {
		return fmt.Errorf("%w: -rank must be positive, -batch, -window and -neighbors not negative", errUsage)
	}
	if err := checkQ(*c); err != nil {
		return err
	}
	if err := errors.Join(checkOnlineCounts(*c), checkOnlineWeights(*c)); err != nil {
		return err
	}
	if err := checkOnlineMethod(*c); err != nil {
		return err
	}
	if c.Batch == 0 {
		c.Batch = autoBatch(c.Window)
	}
	if c.Window > 0 && c.Window < c.Batch {
		return fmt.Errorf("%w: -window %d is smaller than -batch %d", errUsage, c.Window, c.Batch)
	}
	if k := cmp.Or(c.Neighbors, graph.DefaultK); c.Window > 0 && k >= c.Window {
		return fmt.Errorf("%w: --neighbors %d needs a larger --window than %d (the window's samples must outnumber each one's neighbours): lower --neighbors or raise --window", errUsage, k, c.Window)
	}
	if _, err := model.ParseSearchFit(model.SearchFit(c.SearchFit).String()); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// checkOnlineCounts refuses negative counts: --vote, --sweeps,
// --search-dim, --search-basis (0 is each one's default or "none").
func checkOnlineCounts(c onlineConfig) error {
	var errs []error
	for _, f := range []struct {
		name, zero string
		v          int
	}{{"vote", "the predictor's default", c.Vote}, {"sweeps", "the default, 10", c.Sweeps}, {"search-dim", "the full samples", c.SearchDim}, {"search-basis", "the samples as they are", c.SearchBasis}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: --%s %d: want a positive number, or 0 for %s", errUsage, f.name, f.v, f.zero))
		}
	}
	return errors.Join(errs...)
}

// checkOnlineWeights refuses weights and powers that are not numbers, a
// --forget outside [0, 1), a negative --spread-metric and a
// --max-norm-ratio checkNormRatio refuses. A negative
// --max-norm-ratio, --spread-power, --spread-codes or --prior-power has a meaning (see
// their help), and so have negative --alpha and --beta for some methods
// (model.Online's documentation).
func checkOnlineWeights(c onlineConfig) error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"alpha", c.Alpha}, {"beta", c.Beta}, {"spread-power", c.SpreadPower}, {"spread-codes", c.SpreadCodes}, {"spread-metric", c.SpreadMetric}, {"prior-power", c.PriorPower}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%w: --%s %v: want a finite number (see nmfstream stream -help)", errUsage, f.name, f.v))
		}
	}
	if err := checkNormRatio(c.MaxNormRatio); err != nil {
		errs = append(errs, err)
	}
	if c.SpreadMetric < 0 {
		errs = append(errs, fmt.Errorf("%w: --spread-metric %v: want a positive weight, or 0 for the samples' own graph", errUsage, c.SpreadMetric))
	}
	if !(c.Forget >= 0 && c.Forget < 1) {
		errs = append(errs, fmt.Errorf("%w: --forget %v: want a factor in (0, 1), or 0 for the exact window statistics", errUsage, c.Forget))
	}
	return errors.Join(errs...)
}

// checkOnlineMethod refuses --alpha, --beta or --q given (not zero, their
// default) to a --method that does not read them (model.Online: nmf reads
// none, gnmf and dgnmf α only, ssknmf α and β, n2s2l and nge all three).
func checkOnlineMethod(c onlineConfig) error {
	i, err := methods.Lookup(cmp.Or(c.Method, "gnmf"))
	if err != nil {
		return fmt.Errorf("%w: --method: %v", errUsage, err)
	}
	return unreadParams(i, c.Alpha, c.Beta, c.Q, true)
}

// streamRun is one run of stream: its learner, input and outputs, and the
// totals of this run. The learn stage's goroutine owns it while the
// pipeline runs; runStream reads it after.
type streamRun struct {
	o          *streamOptions
	l          *stages.Learner
	inID       inputID
	resumed    int64 // records the checkpoint had applied
	src        sources.Source
	rd         *sources.Reader // src's reader: skips and checks the records resumed past
	sink       *stepWriter
	pr         *progress
	start      time.Time
	runRecords int64 // records learned by this run
	lastCkpt   int64 // records applied at the last checkpoint
}

// open resumes the learner from the checkpoint, if there is one, or makes
// a new one, and opens the input and the outputs.
func (o *streamOptions) open(stderr io.Writer) (*streamRun, error) {
	inID, err := identify(o.in)
	if err != nil {
		return nil, err
	}
	r := &streamRun{o: o, inID: inID}
	var done outputState // a resumed run continues its outputs where its checkpoint says
	var check sources.Fingerprint
	if o.ckpt != "" {
		cp, err := loadCheckpoint(o.ckpt)
		switch {
		case errors.Is(err, errNoCheckpoint):
		case err != nil:
			return nil, err
		default:
			if err := sameConfig(o.fs, o.cfg, cp.Config); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", errUsage, o.ckpt, err)
			}
			if err := cp.Input.sameInput(inID, o.ckpt); err != nil {
				return nil, err
			}
			o.cfg, done, check = cp.Config, cp.Output, cp.Input.Fingerprint
			if r.l, err = cp.restore(); err != nil {
				return nil, fmt.Errorf("%s: %w", o.ckpt, err)
			}
			r.resumed = r.l.Counters().Offset
		}
	}
	fresh := r.l == nil
	if fresh {
		r.l = o.cfg.learner()
	}
	// A file's label-only record follows its record (docs/DESIGN.md §5):
	// one of an id not seen is a record without features, answered.
	r.l.AnswerUnseenLabels = true
	if r.src, err = o.csvf.openStream(o.in, o.cfg.Batch); err != nil {
		return nil, err
	}
	// A resumed run goes on with its checkpoint's settings (sameConfig
	// refused any other), checked when the stream started.
	if fresh {
		if err := o.checkForm(r.src); err != nil {
			r.src.Close()
			return nil, err
		}
	}
	r.rd = sources.NewReader(r.src)
	r.rd.Skip, r.rd.Check = r.resumed, check
	if r.sink, err = o.openOutputs(done); err != nil {
		r.src.Close()
		return nil, err
	}
	// Each batch's step runs on past its predictions (stages.Learner.Go),
	// beside the next batch's graph insertion, unless the output wants the
	// codes it gives (an Arrow --out).
	r.l.SkipCodes = r.sink.k == 0
	r.pr, r.start, r.lastCkpt = newProgress(stderr, "stream"), time.Now(), r.l.Counters().Records
	return r, nil
}

// checkForm refuses o's settings that change nothing on the samples of
// src, opened on --in (checkFormUse), before anything is written.
func (o *streamOptions) checkForm(src sources.Source) error {
	form, dim, err := inputShape(o.csvf, o.in, o.cfg.Batch, src)
	if err != nil {
		return inputError(o.in, err)
	}
	return checkFormUse(o.cfg, form, dim)
}

// inputError names the input path in err, unless err names it already.
func inputError(path string, err error) error {
	if strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// openOutputs opens --out and --rejects, continued from done when a
// resumed run wrote them.
func (o *streamOptions) openOutputs(done outputState) (*stepWriter, error) {
	w := &stepWriter{ckpt: o.ckpt}
	var err error
	if o.out != "" {
		if done.Out == o.out {
			w.out, err = sinks.Continue(o.out, 0, done.OutBytes)
		} else {
			// Arrow outputs hold each sample's code too (docs/DESIGN.md
			// §6: id, code, pred, score); JSON lines the prediction only.
			// An Arrow output is created at its first write, at the rank
			// learned: --rank, or the stream's dimension if lower (stages'
			// capRank), known once the first batch is read.
			if sinks.IsArrow(o.out) {
				w.k, w.pending = o.cfg.Rank, o.out
			} else {
				w.out, err = sinks.Create(o.out, 0)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if o.rejects != "" {
		size := int64(-1)
		if done.Rejects == o.rejects {
			size = done.RejectsBytes
		}
		if w.rejects, err = newRejectWriter(o.rejects, size); err != nil {
			if w.out != nil {
				w.out.Close()
			}
			return nil, err
		}
	}
	return w, nil
}

// startProfile starts a CPU profile into profile and an execution trace
// into tracePath, each if its path is not empty; stop ends them.
func startProfile(profile, tracePath string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	for _, p := range []struct {
		path  string
		start func(io.Writer) error
		end   func()
	}{{profile, pprof.StartCPUProfile, pprof.StopCPUProfile}, {tracePath, trace.Start, trace.Stop}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err == nil {
			if err = p.start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, func() { p.end(); f.Close() })
	}
	return stop, nil
}

// snapshot returns the checkpoint of the learner's state now, its outputs'
// lengths to be filled in once they hold every step before it.
func (r *streamRun) snapshot() (*checkpoint, error) {
	st, err := r.l.State()
	if err != nil {
		return nil, err
	}
	c := r.l.Counters()
	r.lastCkpt = c.Records
	in := r.inID
	in.Fingerprint = r.rd.Fingerprint(c.Offset) // the records st includes, however far the reader ran ahead
	return &checkpoint{Config: r.o.cfg, Input: in, Output: outputState{Out: r.o.out, Rejects: r.o.rejects}, State: st}, nil
}

// learned runs on the learn stage after each batch: progress, and a
// checkpoint when one is due, saved by the sink once the outputs hold this
// step, so that the checkpoint and the outputs agree.
func (r *streamRun) learned(ss *streamStep) error {
	r.runRecords += int64(ss.records)
	ss.rank = r.l.Model.Rank // the sink's code width: capRank may have lowered --rank
	c := r.l.Counters()
	r.pr.update(int(c.Records), 0, "records")
	if r.o.ckpt != "" && r.o.every > 0 && c.Records-r.lastCkpt >= r.o.every {
		var err error
		ss.ckpt, err = r.snapshot()
		return err
	}
	return nil
}

// saveFinal writes the checkpoint of the end of the run, if asked for.
func (r *streamRun) saveFinal() error {
	if r.o.ckpt == "" {
		return nil
	}
	cp, err := r.snapshot()
	if err != nil {
		return err
	}
	if cp.Output.OutBytes, err = fileSize(r.o.out); err != nil {
		return err
	}
	if cp.Output.RejectsBytes, err = fileSize(r.o.rejects); err != nil {
		return err
	}
	return saveCheckpoint(r.o.ckpt, cp)
}

// report prints the run's summary: one JSON object with --json, text
// otherwise.
func (r *streamRun) report(stdout, stderr io.Writer, elapsed float64) error {
	c, sc := r.l.Counters(), r.l.Scores()
	lo, hi := c.Interval(1.96)
	sum := streamSummary{
		AccuracyCI95: [2]jsonFloat{jsonFloat(lo), jsonFloat(hi)},
		Accuracy:     jsonFloat(c.Accuracy()), NScored: c.Labeled, Early: c.Early,
		BalancedAccuracy: jsonFloat(sc.BalancedAccuracy), MacroF1: jsonFloat(sc.MacroF1), Majority: jsonFloat(sc.Majority),
		Records: c.Records, Rejected: c.Rejected, Samples: c.Samples, Duplicates: c.Duplicates,
		LateLabels: c.LateLabels, Labeled: c.Labeled, Correct: c.Correct, Unpredicted: c.Unpredicted, Unlearned: c.Unlearned,
		Pending: r.l.Pending(), Seconds: elapsed, RunRecords: r.runRecords, ResumedFrom: r.resumed,
		Window: r.o.cfg.Window, Rank: r.l.Model.Rank, // --rank, or the stream's dimension if lower (capRank)
	}
	if elapsed > 0 {
		sum.RecordsPerSecond = float64(r.runRecords) / elapsed
	}
	// The online codes' scores: the refit of --batch-reference scores them
	// before it moves them, else Embedding.
	emb, refErr := r.batchReference(&sum)
	if emb == nil {
		e := r.l.Embedding()
		emb = &e
	}
	sum.CodeNN1, sum.CodeNMI, sum.CodeN = jsonFloat(emb.NN1), jsonFloat(emb.NMI), emb.N
	if g := r.l.Model.KNN(); g != nil {
		sum.SearchDims = g.Dim()
	}
	warnUnlearned(stderr, c)
	if r.o.asJSON {
		return errors.Join(json.NewEncoder(stdout).Encode(sum), refErr)
	}
	if r.resumed > 0 {
		fmt.Fprintf(stdout, "resumed at record %d\n", r.resumed)
	}
	fmt.Fprintf(stdout, "records %d (this run %d, %.0f/s), samples %d, rejected %d, duplicates %d, late labels %d, pending labels %d; the graph searched in %d dimensions\n",
		c.Records, r.runRecords, sum.RecordsPerSecond, c.Samples, c.Rejected, c.Duplicates, c.LateLabels, sum.Pending, sum.SearchDims)
	fmt.Fprintf(stdout, "prequential accuracy %.4f (95%% interval %.4f–%.4f): %d of the %d labeled samples after the first label right on arrival (%d without a prediction, counted wrong); balanced accuracy %.4f, macro-F1 %.4f; always answering the most frequent class %.4f\n",
		c.Accuracy(), lo, hi, c.Correct, c.Labeled, c.Unpredicted, sc.BalancedAccuracy, sc.MacroF1, sc.Majority)
	if emb.N > 0 {
		fmt.Fprintf(stdout, "codes of the window's %d labeled samples: 1-NN accuracy %v (leave one out), NMI of k-means %v\n", emb.N, jsonFloat(emb.NN1), jsonFloat(emb.NMI))
	}
	if b := sum.BatchReference; b != nil {
		fmt.Fprintf(stdout, "batch reference (%d updates of the window, %.1f s): objective online %.6g, batch %.6g (the online one %.2f%% above); codes changed by %.1f%%; labeled codes' 1-NN %.4f, NMI %.4f after the refit\n",
			b.Iterations, b.Seconds, float64(b.ObjectiveOnline), float64(b.ObjectiveBatch), 100*float64(b.ObjectiveGap), 100*float64(b.CodesChange), float64(b.CodeNN1), float64(b.CodeNMI))
	}
	if c.Rejected > 0 {
		fmt.Fprintf(stderr, "nmfstream stream: %d records rejected\n", c.Rejected)
	}
	return refErr
}

// batchReference runs --batch-reference's refit, if asked for and the
// model has been fitted, and sets sum.BatchReference. It refits the model
// in place, so it runs after the final checkpoint, and returns the
// online codes' scores it took before the refit (code_1nn, code_nmi), nil
// when it did not run, with the refit's error, which the report also
// carries.
func (r *streamRun) batchReference(sum *streamSummary) (*classify.Embedding, error) {
	if r.o.batchRef == 0 || !r.l.Model.Started() {
		return nil, nil
	}
	start := time.Now()
	c, err := r.l.Consolidate(r.o.batchRef)
	b := &batchReference{Iterations: c.Iterations, ObjectiveOnline: jsonFloat(c.ObjectiveOnline), ObjectiveBatch: jsonFloat(c.ObjectiveBatch),
		ObjectiveGap: jsonFloat(c.Gap()), CodesChange: jsonFloat(c.CodesChange), CodeNN1: jsonFloat(c.Batch.NN1), CodeNMI: jsonFloat(c.Batch.NMI),
		Seconds: time.Since(start).Seconds()}
	if err != nil {
		b.Error = err.Error()
		err = fmt.Errorf("--batch-reference: %w", err)
	}
	sum.BatchReference = b
	return &c.Online, err
}

// sameConfig checks that the flags set on the command line agree with the
// checkpoint's configuration, which wins.
func sameConfig(fs *flag.FlagSet, now, saved onlineConfig) error {
	var errs []string
	fs.Visit(func(f *flag.Flag) {
		var a, b any
		switch f.Name {
		case "method":
			a, b = now.Method, saved.Method
		case "beta":
			a, b = now.Beta, saved.Beta
		case "q":
			a, b = now.Q, saved.Q
		case "rank":
			a, b = now.Rank, saved.Rank
		case "neighbors":
			a, b = now.Neighbors, saved.Neighbors
		case "window":
			a, b = now.Window, saved.Window
		case "alpha":
			a, b = now.Alpha, saved.Alpha
		case "batch":
			a, b = now.Batch, saved.Batch
		case "seed":
			a, b = now.Seed, saved.Seed
		case "vote":
			a, b = now.Vote, saved.Vote
		case "sweeps":
			a, b = now.Sweeps, saved.Sweeps
		case "forget":
			a, b = now.Forget, saved.Forget
		case "search-dim":
			a, b = now.SearchDim, saved.SearchDim
		case "search-basis":
			a, b = now.SearchBasis, saved.SearchBasis
		case "search-fit":
			a, b = now.SearchFit, saved.SearchFit
		case "graph-metric":
			a, b = now.GraphMetric, saved.GraphMetric
		case "revisit":
			a, b = now.Revisit, saved.Revisit
		case "predictor":
			a, b = now.Predictor, saved.Predictor
		case "metric":
			a, b = now.Metric, saved.Metric
		case "codes":
			a, b = now.Codes, saved.Codes
		case "spread-power":
			a, b = now.SpreadPower, saved.SpreadPower
		case "spread-codes":
			a, b = now.SpreadCodes, saved.SpreadCodes
		case "spread-metric":
			a, b = now.SpreadMetric, saved.SpreadMetric
		case "code-expert":
			a, b = now.NoCodeExpert, saved.NoCodeExpert
		case "prior-power":
			a, b = now.PriorPower, saved.PriorPower
		case "max-norm-ratio":
			a, b = model.NormRatio(now.MaxNormRatio), model.NormRatio(saved.MaxNormRatio)
		case "max-classes", "max-window-bytes":
			// Carried in the settings by --nats only (chainNATS.check);
			// serve applies its own to the learner (server.limit).
			a, b = [2]int64{int64(now.MaxClasses), now.MaxWindowBytes}, [2]int64{int64(saved.MaxClasses), saved.MaxWindowBytes}
		default:
			return
		}
		if a != b {
			errs = append(errs, fmt.Sprintf("-%s %v differs from the checkpoint's %v", f.Name, a, b))
		}
	})
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// streamStep is a step of stream's learner, with the checkpoint to save
// once the outputs hold it, if one is due, and the rank the learner had
// after it (0: not known, as with --nats).
type streamStep struct {
	link
	ckpt *checkpoint
	rank int
}

func (ss *streamStep) chainLink() *link { return &ss.link }

// fileSize returns the size of the file at path, 0 for no path.
func fileSize(path string) (int64, error) {
	if path == "" || path == "-" {
		return 0, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// stepWriter writes each step's predictions and rejects, then saves the
// step's checkpoint, if it carries one, with the outputs synced to stable
// storage and their lengths in it.
type stepWriter struct {
	out sinks.Sink
	k   int // the code columns of out: the rank for Arrow, 0 for JSON lines
	// pending is the path of an Arrow output not created yet (see
	// openOutputs), rank the learner's rank after the last step written.
	pending string
	rank    int
	rejects *rejectWriter
	ckpt    string
}

// create creates the pending Arrow output, if any, with the learner's rank
// as its code width when known (stages' capRank may have lowered --rank).
func (w *stepWriter) create() error {
	if w.pending == "" {
		return nil
	}
	if w.rank > 0 {
		w.k = w.rank
	}
	out, err := sinks.Create(w.pending, w.k)
	if err != nil {
		return err
	}
	w.out, w.pending = out, ""
	return nil
}

// syncOutputs makes what the outputs hold durable and records their
// lengths in o, for a checkpoint that must not run ahead of them.
func (w *stepWriter) syncOutputs(o *outputState) error {
	if err := w.create(); err != nil {
		return err
	}
	if w.out != nil {
		sy, ok := w.out.(sinks.Syncer)
		if !ok {
			return fmt.Errorf("checkpoint: the output %s cannot be synced: write JSON lines (.jsonl) with a checkpoint", o.Out)
		}
		var err error
		if o.OutBytes, err = sy.Sync(); err != nil {
			return err
		}
	}
	if w.rejects != nil {
		var err error
		if o.RejectsBytes, err = w.rejects.sync(); err != nil {
			return err
		}
	}
	return nil
}

func (w *stepWriter) Write(ctx context.Context, ss *streamStep) error {
	if ss.rank > 0 {
		w.rank = ss.rank
	}
	if err := w.write(ss.step); err != nil {
		return err
	}
	cp := ss.ckpt
	if cp == nil {
		return nil
	}
	if err := w.syncOutputs(&cp.Output); err != nil {
		return err
	}
	return saveCheckpoint(w.ckpt, cp)
}

func (w *stepWriter) write(st *stages.Step) error {
	if st == nil {
		return nil
	}
	preds := arrivals(st)
	if len(preds) > 0 {
		if err := w.create(); err != nil {
			return err
		}
	}
	if w.out != nil && len(preds) > 0 {
		r := sinks.Results{}
		for _, p := range preds {
			r.IDs = append(r.IDs, p.ID)
			r.Preds = append(r.Preds, p.Label)
			r.Scores = append(r.Scores, p.Score)
		}
		r.Codes, r.NoCode = arrivalCodes(preds, w.k)
		if err := w.out.Write(r); err != nil {
			return err
		}
	}
	if w.rejects != nil {
		for _, rj := range st.Rejects {
			if err := w.rejects.write(rj); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrivals returns st's arrival predictions in input order: its samples'
// and those of its records without features (stages.Step.Featureless),
// which have no code. It returns st.Predictions itself when there are
// none of the latter.
func arrivals(st *stages.Step) []stages.Prediction {
	if len(st.Featureless) == 0 {
		return st.Predictions
	}
	all := append(slices.Clone(st.Predictions), st.Featureless...)
	slices.SortStableFunc(all, func(a, b stages.Prediction) int { return cmp.Compare(a.Offset, b.Offset) })
	return all
}

// arrivalCodes returns the predictions' codes (stages.Prediction.Code: the
// code each sample got in its batch's step), one row each, for an output
// of k code columns, and which samples have none (sinks.Results.NoCode): a
// prediction without a code (before the first fit, and with --nats, whose
// owners keep the codes) or whose code is not a finite float32 (the sink
// would refuse it and stop the stream) is written with a null code. Both
// are nil when k is 0 or when no prediction has a code.
func arrivalCodes(ps []stages.Prediction, k int) (*mat.Dense, []bool) {
	if k == 0 {
		return nil, nil
	}
	none := make([]bool, len(ps))
	any := false
	for i, p := range ps {
		none[i] = len(p.Code) != k || !finite32Row(p.Code)
		any = any || !none[i]
	}
	if !any {
		return nil, nil
	}
	c := mat.NewDense(len(ps), k, nil)
	for i, p := range ps {
		if !none[i] {
			c.SetRow(i, p.Code)
		}
	}
	return c, none
}

func (w *stepWriter) Close() error {
	errs := []error{w.create()} // an output that got no prediction still gets its schema
	if w.out != nil {
		errs = append(errs, w.out.Close())
	}
	if w.rejects != nil {
		errs = append(errs, w.rejects.close())
	}
	return errors.Join(errs...)
}

// rejectWriter writes rejected records as JSON lines: offset, id, reason.
type rejectWriter struct {
	f   *os.File
	enc *json.Encoder
}

// newRejectWriter creates the file at path, or, if size ≥ 0, continues it
// from its first size bytes (see sinks.Continue).
func newRejectWriter(path string, size int64) (*rejectWriter, error) {
	if size < 0 {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		return &rejectWriter{f: f, enc: json.NewEncoder(f)}, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &rejectWriter{f: f, enc: json.NewEncoder(f)}, nil
}

// sync forces the rejects written so far to stable storage and returns the
// file's length.
func (w *rejectWriter) sync() (int64, error) {
	if err := w.f.Sync(); err != nil {
		return 0, err
	}
	return w.f.Seek(0, io.SeekCurrent)
}

func (w *rejectWriter) write(r record.Reject) error {
	return w.enc.Encode(struct {
		Offset int64  `json:"offset"`
		ID     string `json:"id,omitempty"`
		Reason string `json:"reason"`
	}{r.Offset, r.ID, r.Reason.Error()})
}

func (w *rejectWriter) close() error { return w.f.Close() }
