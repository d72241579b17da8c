package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/nmfstream/nmfstream/internal/figure"
	"github.com/nmfstream/nmfstream/sources"
)

func init() {
	register(command{
		name:    "accuracy",
		summary: "score stream predictions by window of records and plot them (PNG)",
		run:     runAccuracy,
	})
}

const accuracySynopsis = `accuracy --in F --pred P.jsonl [--pred NAME=P2.jsonl ...] [--peer knn|last ...] [--truth T] [--window n] [--png OUT.png] [--json]

Scores the arrival-time predictions that "nmfstream stream --out P.jsonl"
wrote for the input F, window by window of n samples in input order, and
prints one line per window; with --png, draws the accuracy of each window
against the samples seen, one line per --pred file (the first is the
stream's, the others peers, e.g. a run with another --predictor), each
named in the legend with its accuracy over the whole stream.

--peer adds a peer computed from F itself, replayed in input order, each
sample predicted on arrival with the labels that arrived before it: knn,
the incremental raw 1-NN (the label of the nearest such sample on the
input's dense features, BENCHMARKS.md's peer of the digits and MNIST
streams), or last, the last label that arrived.

A sample is scored when its true class is known: its label in F (with the
sample or a later label-only record), or its id's label in --truth T (any
input whose labeled records give true classes, such as a fully labeled
copy of the stream). Samples before a file's first prediction are not
scored for that file (nothing can be predicted before the first label);
after it, a sample with no prediction counts as wrong, as stream --json
counts it.

Examples:
  nmfstream accuracy --in data/stream.arrow --pred pred.jsonl --truth data/digits.arrow --png accuracy.png
  nmfstream accuracy --in data/stream.arrow --pred graph=pred.jsonl --pred nearest=nearest.jsonl --window 300 --png accuracy.png
  nmfstream accuracy --in data/stream.arrow --pred pred.jsonl --peer knn --peer last --truth data/digits.arrow --png accuracy.png`

// predFile is one --pred flag: a name for the legend and a JSON lines file.
type predFile struct{ name, path string }

func runAccuracy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("accuracy", accuracySynopsis, stderr)
	in := fs.String("in", "", "the stream's input `file` (required)")
	truth := fs.String("truth", "", "an input `file` whose labeled records give more true classes by id")
	window := fs.Int("window", 200, "samples per window (≥ 1)")
	png := fs.String("png", "", "write the figure to this PNG `file`")
	asJSON := fs.Bool("json", false, "print one JSON object per prediction file instead of text")
	var csvf csvFlags
	addCSVFlags(fs, &csvf)
	var preds []predFile
	fs.Func("pred", "predictions `[NAME=]FILE` written by stream --out (JSON lines); repeat for peers", func(s string) error {
		name, path, ok := strings.Cut(s, "=")
		if !ok {
			name, path = strings.TrimSuffix(strings.TrimSuffix(baseName(s), ".jsonl"), ".json"), s
		}
		preds = append(preds, predFile{name, path})
		return nil
	})
	var peers []string
	fs.Func("peer", "a peer computed from the input: `knn` (incremental raw 1-NN) or last (the last label); repeat for both", func(s string) error {
		if _, ok := peerNames[s]; !ok {
			return fmt.Errorf("the built-in peers are knn and last%s", didYouMean(s, []string{"knn", "last"}))
		}
		peers = append(peers, s)
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case *in == "" || len(preds) == 0:
		return fmt.Errorf("%w: --in and --pred are required (see nmfstream accuracy -help)", errUsage)
	case *window < 1:
		return fmt.Errorf("%w: --window %d: pass 1 or more", errUsage, *window)
	}
	checks := []error{checkInput("--in", *in), checkInput("--truth", *truth), checkOutput("--png", *png)}
	for _, p := range preds {
		checks = append(checks, checkInput("--pred", p.path))
	}
	if err := checkStart(checks...); err != nil {
		return err
	}
	ids, classes, err := streamTruth(ctx, *in, *truth, csvf.opener(os.Stdin), stderr)
	if err != nil {
		return err
	}
	curves, err := scoreAll(ctx, *in, ids, classes, preds, peers, *window, csvf.opener(os.Stdin))
	if err != nil {
		return err
	}
	printWindows(stdout, curves, *asJSON)
	if *png != "" {
		return plotWindows(*png, *in, *window, curves)
	}
	return nil
}

// scoreAll scores the prediction files and the built-in peers (computed
// from the input in, read with o) by window of window samples, the files
// first; a peer the input cannot have fails before any file is read.
func scoreAll(ctx context.Context, in string, ids, classes []string, preds []predFile, peers []string, window int, o sources.Opener) ([]windowScores, error) {
	var peerGot []map[string]string // first: a peer the input cannot have fails early
	for _, peer := range peers {
		got, err := peerPredictions(ctx, in, peer, o)
		if err != nil {
			return nil, err
		}
		peerGot = append(peerGot, got)
	}
	var curves []windowScores
	for _, p := range preds {
		got, err := sources.ReadPredictions(p.path)
		if err != nil {
			return nil, fmt.Errorf("--pred: %w (write JSON lines with stream --out P.jsonl)", err)
		}
		ws, err := scoreWindows(ids, classes, got, window)
		if err != nil {
			return nil, fmt.Errorf("--pred %s: %w", p.path, err)
		}
		ws.Name = p.name
		curves = append(curves, ws)
	}
	for i, peer := range peers {
		ws, err := scoreWindows(ids, classes, peerGot[i], window)
		if err != nil {
			return nil, fmt.Errorf("--peer %s: %w", peer, err)
		}
		ws.Name = map[string]string{"knn": "raw 1-NN peer", "last": "last-label peer"}[peer]
		curves = append(curves, ws)
	}
	return curves, nil
}

// streamTruth reads the stream's input with o and returns its samples'
// ids in input order (a duplicate of an earlier sample's id left out, as
// stream skips it) and the true class of each ("" when unknown), from
// the input's own labels and, where those lack one, the labeled records
// of truthPath by id (read with the same CSV columns if it is a CSV, its
// own columns otherwise).
func streamTruth(ctx context.Context, path, truthPath string, o sources.Opener, stderr io.Writer) (ids, classes []string, err error) {
	in, err := readInput(ctx, path, o, nil)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]string{}
	if truthPath != "" {
		if !isCSV(truthPath) {
			o = sources.Opener{}
		}
		t, err := readInput(ctx, truthPath, o, nil)
		if err != nil {
			return nil, nil, err
		}
		for i, id := range t.ids {
			if t.labeled[i] && id != "" {
				byID[id] = t.labels[i]
			}
		}
	}
	// A later sample with an id already seen is a duplicate, which stream
	// skips: not scored, its label (if any) the first one's when that has
	// none, as stream learns it (a late label).
	first := map[string]int{}
	known, conflicts, example := 0, 0, ""
	for i, id := range in.ids {
		c := in.labels[i]
		if !in.labeled[i] {
			c = byID[id]
		} else if t, ok := byID[id]; ok && t != c {
			if conflicts++; conflicts == 1 {
				example = fmt.Sprintf("id %s: %q in %s, %q in %s", id, c, path, t, truthPath)
			}
		}
		if j, ok := first[id]; ok && id != "" {
			if classes[j] == "" && c != "" {
				classes[j] = c
				known++
			}
			continue
		}
		first[id] = len(ids)
		ids, classes = append(ids, id), append(classes, c)
		if c != "" {
			known++
		}
	}
	if conflicts > 0 {
		fmt.Fprintf(stderr, "nmfstream accuracy: warning: %d labeled samples of %s have another class in --truth (first: %s); the input's labels are scored\n", conflicts, path, example)
	}
	if known == 0 {
		return nil, nil, fmt.Errorf("%s: no sample has a known class: give --truth with the true classes by id", path)
	}
	return ids, classes, nil
}

// predLine is one line of stream --out's JSON lines (sinks.JSONL).
// windowScores is one prediction file scored by window: End is the number
// of samples seen at each window's end, Acc the accuracy of the window's
// scored samples (NaN if none), Scored their count; Overall and NScored
// cover the whole stream.
type windowScores struct {
	Name    string    `json:"name"`
	End     []int     `json:"end"`
	Acc     []float64 `json:"-"`
	Scored  []int     `json:"scored"`
	Right   []int     `json:"right"`
	Overall float64   `json:"-"`
	NScored int       `json:"n_scored"`
	NRight  int       `json:"n_right"`
}

// scoreWindows scores got (id → prediction) against the samples' classes
// in windows of n samples (see accuracySynopsis for what is scored). It is
// an error if no sample is scored (ids that match nothing: the wrong file).
func scoreWindows(ids, classes []string, got map[string]string, n int) (windowScores, error) {
	var ws windowScores
	started := false
	for i, id := range ids {
		if i%n == 0 {
			ws.End = append(ws.End, min(i+n, len(ids)))
			ws.Scored, ws.Right = append(ws.Scored, 0), append(ws.Right, 0)
		}
		p := got[id]
		started = started || p != ""
		if !started || classes[i] == "" {
			continue
		}
		w := len(ws.End) - 1
		ws.Scored[w]++
		ws.NScored++
		if p == classes[i] {
			ws.Right[w]++
			ws.NRight++
		}
	}
	if ws.NScored == 0 {
		return ws, fmt.Errorf("no sample of the input scored: no prediction for an id of a sample with a known class (predictions of another input?)")
	}
	for w := range ws.End {
		ws.Acc = append(ws.Acc, math.NaN())
		if ws.Scored[w] > 0 {
			ws.Acc[w] = float64(ws.Right[w]) / float64(ws.Scored[w])
		}
	}
	ws.Overall = float64(ws.NRight) / float64(ws.NScored)
	return ws, nil
}

// printWindows prints each file's windows, as text or JSON lines.
func printWindows(w io.Writer, curves []windowScores, asJSON bool) {
	for _, c := range curves {
		if asJSON {
			b, _ := json.Marshal(struct {
				windowScores
				Acc     []*float64 `json:"accuracy"`
				Overall float64    `json:"overall"`
			}{c, nanNull(c.Acc), c.Overall})
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintf(w, "%s: accuracy %.4f over %d scored samples\n", c.Name, c.Overall, c.NScored)
		start := 1
		for i, end := range c.End {
			fmt.Fprintf(w, "  samples %5d–%5d  %4d scored  accuracy %s\n", start, end, c.Scored[i], fmtAcc(c.Acc[i]))
			start = end + 1
		}
	}
}

// nanNull returns vs with NaN as nil (JSON null).
func nanNull(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i := range vs {
		if !math.IsNaN(vs[i]) {
			out[i] = &vs[i]
		}
	}
	return out
}

func fmtAcc(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// plotWindows draws the windows' accuracy of every file as a line plot.
func plotWindows(path, in string, window int, curves []windowScores) error {
	var ss []figure.Series
	for i, c := range curves {
		s := figure.Series{Name: fmt.Sprintf("%s: %.3f", c.Name, c.Overall), Style: i, Dashed: i > 0}
		for w, end := range c.End {
			s.X, s.Y = append(s.X, float64(end)), append(s.Y, c.Acc[w])
		}
		ss = append(ss, s)
	}
	title := fmt.Sprintf("Accuracy on arrival, windows of %d samples", window)
	xlabel := fmt.Sprintf("samples of %s seen", baseName(in))
	if err := figure.Line(path, title, xlabel, "accuracy in the window", ss, false, false); err != nil {
		return fmt.Errorf("--png %s: %w", path, err)
	}
	return nil
}

// baseName is the last element of a path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
