package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/nmfstream/nmfstream/internal/openblas"
	"github.com/nmfstream/nmfstream/internal/report"
)

// Config says what Run measures and where it writes.
type Config struct {
	// Out is the output directory. It is created if missing. It must be set.
	Out string
	// Data is the directory of fetch-data.sh (DATA/mnist, DATA/brown).
	// Empty, or a directory without them, runs on the embedded digits alone.
	Data string
	// Quick runs the reduced grid on the digits only (minutes).
	Quick bool
	// MNIST is the size of the MNIST draw of the full run (one third held
	// out). If zero, it defaults to 15000.
	MNIST int
	// Seed drives every split, initialization and random draw. Zero means 1.
	Seed uint64
	// Python is the interpreter with scikit-learn that measures the peers.
	// If empty, it defaults to /usr/bin/python3 (Debian's, where
	// python3-sklearn installs); "-" disables the peers.
	Python string
	// Command is the command line recorded in the report, so that a reader
	// can re-run it. If empty, a generic one is written.
	Command string
	// Progress receives one line per experiment with elapsed times. Nil
	// discards them.
	Progress io.Writer

	// grid, if non-nil, replaces the grid chosen by Quick (tests).
	grid *grid
}

// Num is a float64 that encodes NaN and ±Inf as JSON null (a missing
// measurement: a method that diverged or does not apply), as in the
// user's report.
type Num = report.Num

// Meta records what a reader needs to re-run the report and compare.
type Meta struct {
	Command     string            `json:"command"`
	Seed        uint64            `json:"seed"`
	Quick       bool              `json:"quick"`
	Date        string            `json:"date"`
	GoVersion   string            `json:"go_version"`
	GOOS        string            `json:"goos"`
	GOARCH      string            `json:"goarch"`
	CPUs        int               `json:"cpus"`
	LoadAvg     string            `json:"load_average_at_start"`
	LoadAvgEnd  string            `json:"load_average_at_end"`
	Module      string            `json:"module"`
	Modules     map[string]string `json:"modules"`
	OpenBLAS    bool              `json:"openblas"`
	DataDir     string            `json:"data_dir"`
	MNIST       bool              `json:"mnist"`
	Brown       bool              `json:"brown"`
	Sklearn     string            `json:"sklearn"`
	Seconds     float64           `json:"seconds"`
	Rank        int               `json:"rank"`
	Labels      int               `json:"labels_per_class"`
	TestFrac    float64           `json:"test_fraction"`
	MNISTSample int               `json:"mnist_sample,omitempty"`
}

// Point is one measured accuracy: a method on a data set at one value of
// a swept parameter.
type Point struct {
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	// Param is the swept parameter: "labels_per_class", "rank", "alpha",
	// "beta" or "patch" (occlusion side in pixels).
	Param      string  `json:"param"`
	Value      float64 `json:"value"`
	Accuracy   Num     `json:"accuracy"`
	FitSeconds Num     `json:"fit_seconds"`
	Error      string  `json:"error,omitempty"`
}

// HeadlineRow is a row of the README table.
type HeadlineRow struct {
	Method     string `json:"method"`
	Kind       string `json:"kind"`
	Accuracy   Num    `json:"accuracy"`
	FitSeconds Num    `json:"fit_seconds"`
}

// SparsityRow is the Hoyer sparsity of a method's basis.
type SparsityRow struct {
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	// Hoyer is the mean over U's columns of (√D − ‖u‖₁/‖u‖₂)/(√D − 1), in
	// [0, 1]: 0 for a constant column, 1 for a single non-zero pixel.
	Hoyer Num    `json:"hoyer"`
	Image string `json:"image,omitempty"`
}

// Curve is a method's objective after each iteration.
type Curve struct {
	Dataset   string `json:"dataset"`
	Method    string `json:"method"`
	Objective []Num  `json:"objective"`
}

// StreamResult is the prequential run of model.Online.
type StreamResult struct {
	Dataset   string  `json:"dataset"`
	Records   int     `json:"records"`
	Batch     int     `json:"batch"`
	LabelFrac float64 `json:"label_fraction"`
	LabelLag  int     `json:"label_lag"`
	Window    int     `json:"window"`
	// Accuracy is the prequential accuracy over every record predicted on
	// arrival (the evaluator knows every truth; the model sees LabelFrac
	// of them, LabelLag records late).
	Accuracy         Num     `json:"accuracy"`
	Predicted        int     `json:"predicted"`
	Seconds          float64 `json:"seconds"`
	RecordsPerSecond float64 `json:"records_per_second"`
	// At and Running trace the cumulative accuracy after At records.
	At      []int `json:"at"`
	Running []Num `json:"running"`
	// Recent is the accuracy over the last 500 records (as batches allow)
	// after At records.
	Recent []Num  `json:"recent"`
	Error  string `json:"error,omitempty"`
}

// Documents holds the Brown corpus results.
type Documents struct {
	Docs     int      `json:"docs"`
	Classes  int      `json:"classes"`
	Features int      `json:"features"`
	Rank     int      `json:"rank"`
	Folds    int      `json:"folds"`
	Classify []DocRow `json:"classification"`
	Cluster  []DocRow `json:"clustering"`
}

// DocRow is one representation's document result.
type DocRow struct {
	Method string `json:"method"`
	// Accuracy is the 5-fold cross-validated accuracy (classification) or
	// the clustering accuracy under the best matching (clustering).
	Accuracy Num    `json:"accuracy"`
	Std      Num    `json:"std,omitempty"`
	NMI      Num    `json:"nmi,omitempty"`
	Seconds  Num    `json:"seconds"`
	Error    string `json:"error,omitempty"`
}

// SpeedRow is one timing, with scikit-learn's on the same data when
// measured.
type SpeedRow struct {
	Dataset string `json:"dataset"`
	What    string `json:"what"`
	Unit    string `json:"unit"`
	Go      Num    `json:"go"`
	Sklearn Num    `json:"sklearn"`
	// Speedup is how many times faster Go is (sklearn/go for seconds,
	// go/sklearn for rates).
	Speedup Num `json:"speedup"`
}

// Figure is a PNG written by the report.
type Figure struct {
	File  string `json:"file"`
	Title string `json:"title"`
}

// Timing is the wall time of one experiment.
type Timing struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Report is everything Run measured; report.json is its encoding.
type Report struct {
	Meta        Meta           `json:"meta"`
	Notes       []string       `json:"notes"`
	Headline    []HeadlineRow  `json:"headline"`
	Labels      []Point        `json:"accuracy_vs_labels"`
	Sensitivity []Point        `json:"sensitivity"`
	Occlusion   []Point        `json:"occlusion"`
	Sparsity    []SparsityRow  `json:"sparsity"`
	Objective   []Curve        `json:"objective"`
	Stream      []StreamResult `json:"stream"`
	Documents   *Documents     `json:"documents"`
	Speed       []SpeedRow     `json:"speed"`
	Figures     []Figure       `json:"figures"`
	Experiments []Timing       `json:"experiments"`
}

// runner carries the state of one Run.
type runner struct {
	ctx   context.Context
	cfg   Config
	g     *grid
	rep   *Report
	start time.Time
	seed  uint64
	// fits caches the L = Labels fits per dataset and method, reused by the
	// headline, occlusion, bases and objective experiments.
	fits map[string]map[string]*fitted
	data map[string]*dataset
	// peers holds scikit-learn's results by task id.
	peers     map[string]map[string]float64
	peersNote string
}

// Run measures everything the configuration asks for and writes
// Out/report.md, Out/report.json and the PNG figures. A missing data set
// or scikit-learn is noted in the report, not an error; an experiment
// that fails is recorded with its error and the others go on.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Out == "" {
		return nil, fmt.Errorf("report: no output directory")
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	g := cfg.grid
	if g == nil {
		g = quickGrid()
		if !cfg.Quick {
			g = fullGrid()
		}
	}
	if cfg.MNIST > 0 && g.mnist > 0 {
		g.mnist, g.streamMNIST = cfg.MNIST, cfg.MNIST
	}
	r := &runner{
		ctx: ctx, cfg: cfg, g: g, start: time.Now(), seed: cfg.Seed,
		fits: map[string]map[string]*fitted{},
		data: map[string]*dataset{},
		rep:  &Report{Meta: meta(cfg, g)},
	}
	if err := r.loadData(); err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"peers (scikit-learn)", r.runPeers},
		{"accuracy vs labels", r.runLabels},
		{"headline", r.runHeadline},
		{"sensitivity: rank", func() error { return r.runSensitivity("rank") }},
		{"sensitivity: alpha", func() error { return r.runSensitivity("alpha") }},
		{"sensitivity: beta", func() error { return r.runSensitivity("beta") }},
		{"occlusion", r.runOcclusion},
		{"bases and sparsity", r.runBases},
		{"objective curves", r.runObjective},
		{"stream", r.runStream},
		{"documents (Brown)", r.runDocuments},
		{"speed", r.runSpeed},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		fmt.Fprintf(cfg.Progress, "report: [%7.1fs] %s ...\n", time.Since(r.start).Seconds(), s.name)
		err := s.run()
		d := time.Since(t0).Seconds()
		r.rep.Experiments = append(r.rep.Experiments, Timing{Name: s.name, Seconds: d})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.note("%s failed: %v", s.name, err)
			fmt.Fprintf(cfg.Progress, "report: [%7.1fs] %s failed after %.1fs: %v\n", time.Since(r.start).Seconds(), s.name, d, err)
			continue
		}
		fmt.Fprintf(cfg.Progress, "report: [%7.1fs] %s done in %.1fs\n", time.Since(r.start).Seconds(), s.name, d)
	}
	if err := r.plots(); err != nil {
		return nil, err
	}
	r.rep.Meta.Seconds = time.Since(r.start).Seconds()
	r.rep.Meta.LoadAvgEnd = loadAvg()
	if err := r.write(); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Progress, "report: [%7.1fs] wrote %s\n", time.Since(r.start).Seconds(), filepath.Join(cfg.Out, "report.md"))
	return r.rep, nil
}

// note adds a line to the report's notes.
func (r *runner) note(format string, args ...any) {
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(format, args...))
}

// progress prints a detail line under the current experiment.
func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "report: [%7.1fs]   %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// write writes report.json and report.md.
func (r *runner) write() error {
	b, err := json.MarshalIndent(r.rep, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.cfg.Out, "report.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var md strings.Builder
	writeMarkdown(&md, r.rep)
	if err := os.WriteFile(filepath.Join(r.cfg.Out, "report.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// meta fills what is known before any measurement.
func meta(cfg Config, g *grid) Meta {
	m := Meta{
		Command:   cfg.Command,
		Seed:      cfg.Seed,
		Quick:     cfg.Quick,
		Date:      time.Now().UTC().Format(time.RFC3339),
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		LoadAvg:   loadAvg(),
		Modules:   map[string]string{},
		OpenBLAS:  openblas.Enabled,
		DataDir:   cfg.Data,
		Rank:      g.rank,
		Labels:    g.labels,
		TestFrac:  testFrac,
	}
	if m.Command == "" {
		m.Command = fmt.Sprintf("go run ./bench/paper --out DIR --seed %d", cfg.Seed)
		if cfg.Quick {
			m.Command += " --quick"
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Module = bi.Main.Path + " " + bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				m.Module += " " + s.Key + "=" + s.Value
			}
		}
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v += " => " + d.Replace.Path + " " + d.Replace.Version
			}
			m.Modules[d.Path] = v
		}
	}
	return m
}

// loadAvg returns /proc/loadavg's first three fields, or "" where absent:
// timings on a shared machine are only comparable at similar load.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// testFrac is the held-out fraction of docs/DESIGN.md §7.
const testFrac = 1.0 / 3

// Rerender redraws the line plots and rewrites report.md and report.json
// of a finished report in dir from its report.json, without measuring
// anything: for changing how results are shown. The basis and occlusion
// images, drawn from the data, are kept as they are.
func Rerender(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	rep := &Report{}
	if err := json.Unmarshal(b, rep); err != nil {
		return fmt.Errorf("report: %s: %w", filepath.Join(dir, "report.json"), err)
	}
	written, notes := drawPlots(dir, rep)
	redrawn := map[string]bool{}
	for _, f := range written {
		redrawn[f.File] = true
	}
	kept := rep.Figures[:0]
	for _, f := range rep.Figures {
		if !redrawn[f.File] {
			kept = append(kept, f)
		}
	}
	rep.Figures = append(kept, written...)
	for _, n := range notes {
		if !slices.Contains(rep.Notes, n) {
			rep.Notes = append(rep.Notes, n)
		}
	}
	r := &runner{cfg: Config{Out: dir}, rep: rep}
	return r.write()
}
