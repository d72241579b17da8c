package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalCodesAblation runs eval's three --codes settings on the digits
// split (seed 1, 10 labels per class, --method auto) and checks each
// names its classifier, scores as measured, and reports the codes' own
// figures, which do not depend on the classifier.
func TestEvalCodesAblation(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 0)
	// Measured with the cosine graphs of --graph-metric auto
	// (BENCHMARKS.md, "The batch graphs' metric"): auto 0.9633, off
	// 0.9683 (the pixels-only kernel peer's figure), only 0.9466; code 1-NN
	// 0.9349, NMI 0.868. Floors three test records (0.005) under.
	want := map[string]struct {
		classifier string
		floor      float64
	}{
		"auto": {"joint", 0.958},
		"off":  {"joint-features", 0.963},
		"only": {"codes-1nn", 0.941},
	}
	var nn1 []float64
	for _, c := range []string{"auto", "off", "only"} {
		out := mustRun(t, "eval", "--train", train, "--test", test, "--codes", c, "--json")
		var got struct {
			Accuracy   float64  `json:"accuracy"`
			Classifier string   `json:"classifier"`
			Codes      string   `json:"codes"`
			CodeNN1    *float64 `json:"code_1nn"`
			CodeNMI    *float64 `json:"code_nmi"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("eval --codes %s --json output %q: %v", c, out, err)
		}
		if got.Classifier != want[c].classifier || got.Codes != c || got.Accuracy < want[c].floor {
			t.Errorf("--codes %s: classifier %q, codes %q, accuracy %.4f; want %q, %q, ≥ %.3f", c, got.Classifier, got.Codes, got.Accuracy, want[c].classifier, c, want[c].floor)
		}
		if got.CodeNN1 == nil || got.CodeNMI == nil || *got.CodeNN1 < 0.93 || *got.CodeNMI < 0.8 {
			t.Fatalf("--codes %s: code_1nn %v, code_nmi %v; want ≥ 0.93 and ≥ 0.8", c, ptrStr(got.CodeNN1), ptrStr(got.CodeNMI))
		}
		nn1 = append(nn1, *got.CodeNN1)
	}
	if nn1[0] != nn1[1] || nn1[1] != nn1[2] {
		t.Errorf("code_1nn %v differs between --codes settings: it scores the codes, not the classifier", nn1)
	}
}

// TestStreamCodesFlags checks stream's --codes: the embedding figures in
// --json, and --codes off refused with a predictor of codes.
func TestStreamCodesFlags(t *testing.T) {
	dir := t.TempDir()
	_, test, _ := digitsFiles(t, dir, 0)
	out := mustRun(t, "stream", "--in", test, "--out", filepath.Join(dir, "p.jsonl"), "--window", "1000", "--json")
	var got struct {
		CodeNN1 *float64 `json:"code_1nn"`
		CodeNMI *float64 `json:"code_nmi"`
		CodeN   int      `json:"code_n"`
		// The digits' 64 features are under 10 × the search basis's 40:
		// the graph searches the samples as they are.
		SearchDims int `json:"search_dims"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stream --json output %q: %v", out, err)
	}
	if got.SearchDims != 64 {
		t.Errorf("stream --json: search_dims %d, want the digits' 64", got.SearchDims)
	}
	// Every test record is labeled: the window's labeled codes are the
	// whole window (599 records under the window of 1,000).
	if got.CodeN != 599 || got.CodeNN1 == nil || *got.CodeNN1 < 0.9 || got.CodeNMI == nil || *got.CodeNMI < 0.7 {
		t.Errorf("stream --json: code_n %d, code_1nn %v, code_nmi %v; want 599, ≥ 0.9, ≥ 0.7", got.CodeN, got.CodeNN1, got.CodeNMI)
	}
	code, _, errs := runCmd(t, "stream", "--in", test, "--codes", "off", "--predictor", "nearest")
	if code != 2 {
		t.Errorf("stream --codes off --predictor nearest: exit %d (stderr %q), want 2", code, errs)
	}
}

// TestEvalSelfTraining runs eval's --self-training on the digits split
// (seed 1, --method auto): the pair (the default) and joint (the joint
// self-training alone, classify.Joint's JointOnly) name their classifier
// and score as measured (BENCHMARKS.md, "The joint classifier's pair", and
// with the cosine graphs of --graph-metric auto, "The batch graphs'
// metric": 0.9633 and 0.9599, so the switch changes what is scored), and a
// bad value is refused.
func TestEvalSelfTraining(t *testing.T) {
	dir := t.TempDir()
	train, test, _ := digitsFiles(t, dir, 0)
	want := map[string]struct {
		classifier string
		acc        float64
	}{
		"pair":  {"joint", 0.9633},
		"joint": {"joint-only", 0.9599},
	}
	for _, st := range []string{"pair", "joint"} {
		out := mustRun(t, "eval", "--train", train, "--test", test, "--self-training", st, "--json")
		var got struct {
			Accuracy   float64 `json:"accuracy"`
			Classifier string  `json:"classifier"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("eval --self-training %s --json output %q: %v", st, out, err)
		}
		// One test record (0.0017) either side of the measured figure: the
		// two settings are two records apart.
		if got.Classifier != want[st].classifier || math.Abs(got.Accuracy-want[st].acc) > 0.0025 {
			t.Errorf("--self-training %s: classifier %q, accuracy %.4f; want %q, %.4f", st, got.Classifier, got.Accuracy, want[st].classifier, want[st].acc)
		}
	}
	if code, _, errs := runCmd(t, "eval", "--train", train, "--test", test, "--self-training", "both"); code == 0 || !strings.Contains(errs, "want joint or pair") {
		t.Errorf("--self-training both: exit %d, stderr %q; want a usage error naming joint and pair", code, errs)
	}
}

// ptrStr prints a figure that may be null.
func ptrStr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
