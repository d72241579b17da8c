package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// tinyGrid runs every experiment on 400 digits with small ranks and few
// iterations: seconds, not minutes.
func tinyGrid() *grid {
	return &grid{
		rank: 15, labels: 3, iters: 30, digitsN: 400,
		labelSweep:       []int{1, 3},
		labelMethods:     []string{"nmf", "gnmf", "n2s2l", "dpca"},
		kernelLabels:     []int{3},
		ranks:            []int{12, 15},
		rankMethods:      []string{"nmf"},
		alphas:           []float64{1, 10},
		alphaMethods:     []string{"gnmf"},
		betas:            []float64{1, 10},
		betaMethods:      []string{"n2s2l"},
		occlusion:        []int{0, 2},
		occlusionMethods: []string{"nmf", "gnmf"},
		imageMethods:     []string{"nmf"},
		mnist:            100, // asked for, absent from Data: must be noted
		mnistMethods:     []string{"nmf"},
		brown:            true, docRank: 3, docFolds: 3,
		stream: true, streamBatch: 50,
		speed: true, speedRepeat: 1,
		peers: true,
	}
}

// writeFakeBrown writes a Brown-like corpus: three genres of six tagged
// documents, each genre with its own words.
func writeFakeBrown(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	words := map[string][]string{
		"news":    {"election", "jury", "county", "mayor", "vote", "senate"},
		"fiction": {"dragon", "castle", "knight", "forest", "sword", "queen"},
		"learned": {"theorem", "matrix", "proof", "lemma", "integral", "vector"},
	}
	var cats strings.Builder
	n := 0
	for _, g := range []string{"news", "fiction", "learned"} {
		for d := range 6 {
			name := fmt.Sprintf("c%c%02d", g[0], d)
			var b strings.Builder
			for i := range 40 {
				w := words[g][(i*(d+1))%len(words[g])]
				fmt.Fprintf(&b, "the/at %s/nn and/cc ", w)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&cats, "%s %s\n", name, g)
			n++
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cats.txt"), []byte(cats.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRunTiny(t *testing.T) {
	out := t.TempDir()
	data := t.TempDir()
	writeFakeBrown(t, filepath.Join(data, "brown"))
	var progress bytes.Buffer
	cfg := Config{Out: out, Data: data, Seed: 1, Progress: &progress, grid: tinyGrid()}
	if _, err := os.Stat(defaultPython); err != nil {
		cfg.Python = "-"
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}

	// report.json parses and has every section.
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	for _, k := range []string{"meta", "notes", "headline", "accuracy_vs_labels", "sensitivity", "occlusion",
		"sparsity", "objective", "stream", "documents", "speed", "figures", "experiments"} {
		if _, ok := top[k]; !ok {
			t.Errorf("report.json has no key %q", k)
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("report.json does not decode into Report: %v", err)
	}
	var meta map[string]any
	if err := json.Unmarshal(top["meta"], &meta); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seed", "go_version", "modules", "openblas", "date", "command"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("meta has no key %q", k)
		}
	}
	if back.Meta.Seed != 1 || back.Meta.GoVersion == "" || back.Meta.Date == "" {
		t.Errorf("meta = %+v, want seed 1, a Go version and a date", back.Meta)
	}

	// Every experiment produced its results.
	if len(back.Headline) == 0 {
		t.Fatal("no headline rows")
	}
	for _, h := range back.Headline {
		a := float64(h.Accuracy)
		if h.Kind == kindFactorize && !(a > 0.3 && a <= 1) {
			// 10 classes: a broken split or label alignment scores ≈ 0.1.
			t.Errorf("headline %s: accuracy %v, want in (0.3, 1]", h.Method, a)
		}
	}
	for _, name := range tinyGrid().labelMethods {
		found := false
		for _, h := range back.Headline {
			found = found || h.Method == name
		}
		if !found {
			t.Errorf("headline has no row for %s", name)
		}
	}
	if got, want := countParam(back.Labels, paramLabels, "nmf"), 2; got != want {
		t.Errorf("nmf has %d label-sweep points, want %d", got, want)
	}
	if countParam(back.Sensitivity, paramRank, "nmf") != 2 || countParam(back.Sensitivity, paramAlpha, "gnmf") != 2 || countParam(back.Sensitivity, paramBeta, "n2s2l") != 2 {
		t.Errorf("sensitivity points = %+v", back.Sensitivity)
	}
	if countParam(back.Occlusion, paramPatch, "gnmf") != 2 {
		t.Errorf("occlusion points = %+v", back.Occlusion)
	}
	if len(back.Objective) == 0 {
		t.Error("no objective curves")
	}
	for _, c := range back.Objective {
		if c.Method == "nmf" && float64(c.Objective[len(c.Objective)-1]) > float64(c.Objective[0]) {
			t.Errorf("NMF objective rose from %v to %v", c.Objective[0], c.Objective[len(c.Objective)-1])
		}
	}
	if len(back.Stream) != 1 || back.Stream[0].Predicted == 0 || math.IsNaN(float64(back.Stream[0].Accuracy)) {
		t.Errorf("stream = %+v, want one run with predictions", back.Stream)
	}
	if back.Documents == nil || len(back.Documents.Classify) == 0 || len(back.Documents.Cluster) == 0 {
		t.Errorf("documents = %+v", back.Documents)
	} else {
		for _, c := range back.Documents.Classify {
			if c.Method == "tf-idf" && float64(c.Accuracy) < 0.9 {
				// The fake genres have disjoint words: TF-IDF separates them.
				t.Errorf("tf-idf classification accuracy %v on separable genres", c.Accuracy)
			}
		}
	}
	if len(back.Speed) == 0 {
		t.Error("no speed rows")
	}
	if !strings.Contains(strings.Join(back.Notes, "\n"), "MNIST skipped") {
		t.Errorf("notes do not say MNIST was skipped: %q", back.Notes)
	}
	if cfg.Python != "-" && rep.Meta.Sklearn != "" {
		if countParam(back.Labels, paramLabels, peerSkNMF) != 2 {
			t.Errorf("scikit-learn present (%s) but no peer points", rep.Meta.Sklearn)
		}
	}

	// report.md names the command and holds the headline.
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bench/paper", "## Headline", "| nmf |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	// Every figure is a decodable PNG, and every PNG is listed.
	if len(back.Figures) < 5 {
		t.Errorf("%d figures, want at least 5", len(back.Figures))
	}
	for _, f := range back.Figures {
		fh, err := os.Open(filepath.Join(out, f.File))
		if err != nil {
			t.Errorf("figure %s: %v", f.File, err)
			continue
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Errorf("figure %s: %v", f.File, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 20 {
			t.Errorf("figure %s is %v", f.File, b)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(out, "*.png"))
	if len(pngs) != len(back.Figures) {
		t.Errorf("%d PNG files, %d listed figures", len(pngs), len(back.Figures))
	}
	// Rerender redraws from report.json alone, listing each figure once.
	if err := Rerender(out); err != nil {
		t.Fatalf("Rerender: %v", err)
	}
	b, err = os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var again Report
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if len(again.Figures) != len(back.Figures) || len(again.Headline) != len(back.Headline) {
		t.Errorf("after Rerender: %d figures, %d headline rows; before: %d, %d",
			len(again.Figures), len(again.Headline), len(back.Figures), len(back.Headline))
	}
	if !strings.Contains(progress.String(), "done in") {
		t.Errorf("progress has no per-experiment line:\n%s", progress.String())
	}
}

func countParam(points []Point, param, method string) int {
	n := 0
	for _, p := range points {
		if p.Param == param && p.Method == method && !math.IsNaN(float64(p.Accuracy)) {
			n++
		}
	}
	return n
}

func TestOcclude(t *testing.T) {
	x := matFrom(3, 16, make([]float64, 48))
	got := occlude(x, 4, 4, 2, 9, newSrc(1))
	for i := range 3 {
		n := 0
		for _, v := range got.RawRowView(i) {
			if v == 9 {
				n++
			}
		}
		if n != 4 {
			t.Errorf("image %d has %d patched pixels, want 4", i, n)
		}
	}
	if x.At(0, 0) != 0 || mat0(x) != 0 {
		t.Error("occlude modified its input")
	}
}

func matFrom(r, c int, v []float64) *mat.Dense { return mat.NewDense(r, c, v) }

func newSrc(seed uint64) rand.Source { return rand.NewPCG(seed, seed) }

// mat0 returns the sum of x's entries.
func mat0(x *mat.Dense) float64 { return mat.Sum(x) }
