package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/methods"
	"github.com/nmfstream/nmfstream/pipeline"
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
	Early            int64        `json:"early"` // labeled samples that arrived before any label: not scored
	Records          int64        `json:"records"`
	Rejected         int64        `json:"rejected"`
	Samples          int64        `json:"samples"`
	Duplicates       int64        `json:"duplicates"`
	LateLabels       int64        `json:"late_labels"`
	Labeled          int64        `json:"labeled"`
	Correct          int64        `json:"correct"`
	Unpredicted      int64        `json:"unpredicted"`
	Pending          int          `json:"pending"`
	Seconds          float64      `json:"seconds"`
	RecordsPerSecond float64      `json:"records_per_second"`
	RunRecords       int64        `json:"run_records"`
	ResumedFrom      int64        `json:"resumed_from"`
	Window           int          `json:"window"`
	Rank             int          `json:"rank"`
}

// jsonFloat writes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// autoBatch is the number of records per learning step when -batch is 0:
// max(10, window/100), i.e. 10 for a window of 1,000 and 200 for a window
// of 20,000. A step costs O(window) besides its records (the basis
// normalization rescales every code), so larger windows want larger
// steps; labels are learned in input order within a step, so a larger
// step delays no label (BENCHMARKS.md, "Streams").
func autoBatch(window int) int { return max(10, window/100) }

// addOnlineFlags declares the flags of the online learner.
func addOnlineFlags(fs *flag.FlagSet, c *onlineConfig) {
	c.Method = "gnmf"
	fs.Func("method", "algorithm learned online: gnmf (the default), nmf, dgnmf, ssknmf, n2s2l, nge or auto (see fit -help); the graph predictor does not depend on it, the codes do", func(s string) error {
		m, err := methods.Lookup(s)
		if err != nil {
			return err
		}
		if !m.Online {
			return fmt.Errorf("method %q cannot learn online (kernel and dpca are batch only: use fit)", s)
		}
		c.Method = m.Name
		return nil
	})
	fs.Float64Var(&c.Beta, "beta", 0, "second graph weight β of ssknmf and n2s2l (0: the method's default)")
	fs.IntVar(&c.Rank, "rank", 40, "rank K of the factorization")
	fs.IntVar(&c.Neighbors, "neighbors", 5, "k of the k-NN graph")
	fs.IntVar(&c.Window, "window", 10000, "samples kept in the sliding window (0: unbounded)")
	fs.Float64Var(&c.Alpha, "alpha", 0, "graph weight α (0: GNMF's default)")
	fs.IntVar(&c.Batch, "batch", 0, "records per learning step (0: max(10, window/100))")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the initialization")
	fs.IntVar(&c.Vote, "vote", 0, "labeled neighbours voting on a prediction (0: 1 for nearest, 7 for propagate)")
	fs.IntVar(&c.Sweeps, "sweeps", 0, "multiplicative sweeps of the affected codes per step (0: 10)")
	fs.Float64Var(&c.Forget, "forget", 0, "forgetting factor of the statistics in (0, 1) (0: exact window statistics)")
	fs.IntVar(&c.SearchDim, "search-dim", 0, "search neighbours in a random projection to this many dimensions (0: the full samples)")
	fs.Func("revisit", "older codes swept with each step's new ones: changed (every node whose graph edges changed; the default), neighbors (the new samples' neighbours) or none (only the new samples and a round-robin refresh: fastest)", func(s string) error {
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
prediction (id, pred, score). With --checkpoint C it saves its whole state
to C atomically every --checkpoint-every records and at the end, and
resumes from C when it exists, skipping the records already applied.
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
	fs := newFlags("stream", streamSynopsis, stderr)
	in := fs.String("in", "", "input `file` replayed in order (required; - for an Arrow stream on stdin)")
	out := fs.String("out", "", "write arrival-time predictions (id, pred, score) to this `file` (.arrow, .arrows, .jsonl)")
	ckpt := fs.String("checkpoint", "", "checkpoint `file`: resumed from if it exists, written every --checkpoint-every records and at the end")
	oldCkpt := fs.String("model", "", "deprecated spelling of --checkpoint (stream does not start from a fitted model)")
	every := fs.Int64("checkpoint-every", 10000, "records between checkpoints (with --checkpoint)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	rejects := fs.String("rejects", "", "write rejected records to this `file` (JSON lines)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the run to this `file` (go tool pprof)")
	predictor := fs.String("predictor", "graph", "classifier: graph (the default: the labels spread over the k-NN graph of every sample in the window, mixed on documents with an online linear model of the features and the last labels' class shares, by their recent accuracy), spread (the spreading alone), nearest (k-NN vote over every labeled code), walk (the same vote, its neighbours found by a walk of the k-NN graph: cost independent of the window) or propagate (label propagation over the window)")
	metric := fs.String("metric", "euclidean", "code-space distance of the classifier: euclidean or cosine")
	var cfg onlineConfig
	addOnlineFlags(fs, &cfg)
	var csvf csvFlags
	addCSVFlags(fs, &csvf)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("%w: --in is required (see nmfstream stream -help)", errUsage)
	}
	cpath, seed, err := modelOrCheckpoint("stream", *oldCkpt, *ckpt, stderr)
	if err != nil {
		return err
	}
	if seed != nil {
		return fmt.Errorf("%w: --model %s is a fitted model, and stream cannot start from one yet (serve --model can); to resume a stream give its checkpoint as --checkpoint", errUsage, *oldCkpt)
	}
	*ckpt = cpath
	if err := errors.Join(checkInput("--in", *in), checkOutput("--out", *out), checkOutput("--checkpoint", *ckpt),
		checkOutput("--rejects", *rejects), checkOutput("--cpuprofile", *profile)); err != nil {
		return err
	}
	if cfg.Predictor, err = parsePredictor(*predictor); err != nil {
		return err
	}
	if cfg.Metric, err = parseMetric(*metric); err != nil {
		return err
	}
	if cfg.Rank <= 0 || cfg.Batch < 0 || cfg.Window < 0 || cfg.Neighbors < 0 {
		return fmt.Errorf("%w: -rank must be positive, -batch, -window and -neighbors not negative", errUsage)
	}
	if cfg.Batch == 0 {
		cfg.Batch = autoBatch(cfg.Window)
	}
	if cfg.Window > 0 && cfg.Window < cfg.Batch {
		return fmt.Errorf("%w: -window %d is smaller than -batch %d", errUsage, cfg.Window, cfg.Batch)
	}

	var l *stages.Learner
	var resumed int64
	var resumedFrom *checkpoint
	inID, err := identify(*in)
	if err != nil {
		return err
	}
	if *ckpt != "" {
		cp, err := loadCheckpoint(*ckpt)
		switch {
		case errors.Is(err, errNoCheckpoint):
		case err != nil:
			return err
		default:
			if err := sameConfig(fs, cfg, cp.Config); err != nil {
				return fmt.Errorf("%w: %s: %v", errUsage, *ckpt, err)
			}
			if err := cp.Input.sameInput(inID, *ckpt); err != nil {
				return err
			}
			cfg = cp.Config
			resumedFrom = cp
			if l, err = cp.restore(); err != nil {
				return fmt.Errorf("%s: %w", *ckpt, err)
			}
			resumed = l.Counters().Offset
		}
	}
	if l == nil {
		l = cfg.learner()
	}

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	src, err := csvf.openStream(*in, cfg.Batch)
	if err != nil {
		return err
	}
	defer src.Close()

	// Outputs: a resumed run continues them where its checkpoint says.
	var done outputState
	if cp := resumedFrom; cp != nil {
		done = cp.Output
	}
	var outSink sinks.Sink
	if *out != "" {
		if done.Out == *out {
			outSink, err = sinks.Continue(*out, 0, done.OutBytes)
		} else {
			outSink, err = sinks.Create(*out, 0)
		}
		if err != nil {
			return err
		}
	}
	var rejW *rejectWriter
	if *rejects != "" {
		size := int64(-1)
		if done.Rejects == *rejects {
			size = done.RejectsBytes
		}
		if rejW, err = newRejectWriter(*rejects, size); err != nil {
			if outSink != nil {
				outSink.Close()
			}
			return err
		}
	}

	pr := newProgress(stderr, "stream")
	start := time.Now()
	var runRecords int64
	lastCkpt := l.Counters().Records
	// snapshot returns the checkpoint of the learner's state now, its
	// outputs to be filled in once they hold every step before it.
	snapshot := func() (*checkpoint, error) {
		st, err := l.State()
		if err != nil {
			return nil, err
		}
		lastCkpt = l.Counters().Records
		return &checkpoint{Config: cfg, Input: inID, Output: outputState{Out: *out, Rejects: *rejects}, State: st}, nil
	}
	learn := func(ctx context.Context, f *stages.Featurized) (*streamStep, error) {
		st, err := l.LearnFeatures(f)
		if err != nil {
			return nil, err
		}
		runRecords += int64(f.Records())
		c := l.Counters()
		pr.update(int(c.Records), 0, "records")
		ss := &streamStep{Step: st}
		if *ckpt != "" && *every > 0 && c.Records-lastCkpt >= *every {
			// Saved by the sink once the outputs hold this step, so
			// that the checkpoint and the outputs agree.
			if ss.ckpt, err = snapshot(); err != nil {
				return nil, err
			}
		}
		return ss, nil
	}
	rd := sources.NewReader(src)
	rd.Skip = resumed
	p := pipeline.New(
		pipeline.From("records", rd),
		[]pipeline.Stage{featurizeStage(), pipeline.Map("learn", 1, learn)},
		pipeline.To("predictions", &stepWriter{out: outSink, rejects: rejW, ckpt: *ckpt}),
	)
	// The learner is the slow step: batches read further ahead only take
	// memory (a batch of 1,000 MNIST images is 6 MB as float64).
	p.Buffer = 2
	runErr := p.Run(ctx)
	pr.done()
	elapsed := time.Since(start).Seconds()
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return runErr // a failed run does not checkpoint: the last checkpoint stays valid
	}
	// At the end, and on SIGINT/SIGTERM: the pipeline has stopped and the
	// sink has closed the outputs, so the learner is quiet and consistent
	// (each Learn call completes) and the outputs hold every step.
	if *ckpt != "" {
		cp, err := snapshot()
		if err != nil {
			return err
		}
		if cp.Output.OutBytes, err = fileSize(*out); err != nil {
			return err
		}
		if cp.Output.RejectsBytes, err = fileSize(*rejects); err != nil {
			return err
		}
		if err := saveCheckpoint(*ckpt, cp); err != nil {
			return err
		}
	}
	c := l.Counters()
	sc := l.Scores()
	lo, hi := c.Interval(1.96)
	sum := streamSummary{
		AccuracyCI95: [2]jsonFloat{jsonFloat(lo), jsonFloat(hi)},
		Accuracy:     jsonFloat(c.Accuracy()), NScored: c.Labeled, Early: c.Early,
		BalancedAccuracy: jsonFloat(sc.BalancedAccuracy), MacroF1: jsonFloat(sc.MacroF1),
		Records: c.Records, Rejected: c.Rejected, Samples: c.Samples, Duplicates: c.Duplicates,
		LateLabels: c.LateLabels, Labeled: c.Labeled, Correct: c.Correct, Unpredicted: c.Unpredicted,
		Pending: l.Pending(), Seconds: elapsed, RunRecords: runRecords, ResumedFrom: resumed,
		Window: cfg.Window, Rank: cfg.Rank,
	}
	if elapsed > 0 {
		sum.RecordsPerSecond = float64(runRecords) / elapsed
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		if resumed > 0 {
			fmt.Fprintf(stdout, "resumed at record %d\n", resumed)
		}
		fmt.Fprintf(stdout, "records %d (this run %d, %.0f/s), samples %d, rejected %d, duplicates %d, late labels %d, pending labels %d\n",
			c.Records, runRecords, sum.RecordsPerSecond, c.Samples, c.Rejected, c.Duplicates, c.LateLabels, sum.Pending)
		fmt.Fprintf(stdout, "prequential accuracy %.4f (95%% interval %.4f–%.4f): %d of the %d labeled samples after the first label right on arrival (%d without a prediction, counted wrong); balanced accuracy %.4f, macro-F1 %.4f\n",
			c.Accuracy(), lo, hi, c.Correct, c.Labeled, c.Unpredicted, sc.BalancedAccuracy, sc.MacroF1)
	}
	if c.Rejected > 0 && !*asJSON {
		fmt.Fprintf(stderr, "nmfstream stream: %d records rejected\n", c.Rejected)
	}
	if runErr == nil && c.Records > 0 && c.Samples == 0 && c.LateLabels == 0 {
		return fmt.Errorf("no usable record: all %d were rejected (see -rejects for the reasons)", c.Rejected)
	}
	return runErr
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
		case "revisit":
			a, b = now.Revisit, saved.Revisit
		case "predictor":
			a, b = now.Predictor, saved.Predictor
		case "metric":
			a, b = now.Metric, saved.Metric
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
// once the outputs hold it, if one is due.
type streamStep struct {
	*stages.Step
	ckpt *checkpoint
}

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
	out     sinks.Sink
	rejects *rejectWriter
	ckpt    string
}

func (w *stepWriter) Write(ctx context.Context, ss *streamStep) error {
	if err := w.write(ss.Step); err != nil {
		return err
	}
	cp := ss.ckpt
	if cp == nil {
		return nil
	}
	if w.out != nil {
		sy, ok := w.out.(sinks.Syncer)
		if !ok {
			return fmt.Errorf("checkpoint: the output %s cannot be synced: write JSON lines (.jsonl) with a checkpoint", cp.Output.Out)
		}
		var err error
		if cp.Output.OutBytes, err = sy.Sync(); err != nil {
			return err
		}
	}
	if w.rejects != nil {
		var err error
		if cp.Output.RejectsBytes, err = w.rejects.sync(); err != nil {
			return err
		}
	}
	return saveCheckpoint(w.ckpt, cp)
}

func (w *stepWriter) write(st *stages.Step) error {
	if w.out != nil && len(st.Predictions) > 0 {
		r := sinks.Results{}
		for _, p := range st.Predictions {
			r.IDs = append(r.IDs, p.ID)
			r.Preds = append(r.Preds, p.Label)
			r.Scores = append(r.Scores, p.Score)
		}
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

func (w *stepWriter) Close() error {
	var errs []error
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

func (w *rejectWriter) write(r sources.Reject) error {
	return w.enc.Encode(struct {
		Offset int64  `json:"offset"`
		ID     string `json:"id,omitempty"`
		Reason string `json:"reason"`
	}{r.Offset, r.ID, r.Reason.Error()})
}

func (w *rejectWriter) close() error { return w.f.Close() }
