package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
)

// TestDocumentStreamFloors builds nmfstream, replays four public document
// streams through `nmfstream stream` with its defaults, and scores the
// predictions it wrote from outside, as the scorer does: mails in
// date order (spam), the same with the spam a rare class of 7%, State of the
// Union passages with their drift (sotub: shuffled within blocks of 2,000
// passages) and short verses in 7 imbalanced sections (kjv). Each floor is
// a little under the figure measured with these seeds (in the comment).
// Issue 26's check on skewed text, its second floor: on every stream the
// default's macro-F1 is at least that of a linear SVM refitted on the same
// labels as they arrive (peer --method svm). (Its first floor, accuracy
// above always-majority, is met on this draw of spam7 by three mails of
// 4,357, 0.9463 against 0.9456, and not on six of eight draws of its
// labels: BENCHMARKS.md, "Skewed streams", "The hedge's rate".)
func TestDocumentStreamFloors(t *testing.T) {
	testenv.SkipUnlessLong(t, "four document streams through nmfstream stream and the SVM peer (about 15 seconds)")
	type floor struct{ acc, bal, f1 float64 }
	cases := []struct {
		name, data string
		shuffle    uint64
		block      int
		rare       string
		floor      floor
	}{
		// Measured 0.939 / 0.935 / 0.928 (0.936 / 0.933 / 0.926 at the
		// hedge's rate before session 49).
		{name: "spam", data: "spam", floor: floor{0.93, 0.925, 0.92}},
		// Measured 0.946 / 0.781 / 0.759 (the hedge's rate of session 27
		// traded 2.6 points of balanced accuracy for 0.7 of accuracy).
		{name: "spam7", data: "spam", rare: "spam:0.07", floor: floor{0.94, 0.775, 0.745}},
		// Measured 0.729 / 0.771 / 0.747.
		{name: "sotub", data: "sotu", shuffle: 1, block: 2000, floor: floor{0.72, 0.76, 0.735}},
		// Measured 0.582 / 0.517 / 0.525.
		{name: "kjv", data: "kjv", shuffle: 1, floor: floor{0.57, 0.50, 0.51}},
	}
	dir := t.TempDir()
	bin := buildNMFStream(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, _, err := loadText(c.data + ":" + testenv.Data(t, c.data))
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, c.name+".arrow")
			if err := makeText(docs, c.shuffle, c.block, 0.1, 100, 1, c.rare, 0, in); err != nil {
				t.Fatal(err)
			}
			pred := filepath.Join(dir, c.name+".jsonl")
			run := exec.Command(bin, "stream", "--in", in, "--out", pred)
			if out, err := run.CombinedOutput(); err != nil {
				t.Fatalf("nmfstream stream: %v\n%s", err, out)
			}
			rep, err := score(in, filepath.Join(dir, c.name+".truth.csv"), pred)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: accuracy %.4f, balanced %.4f, macro-F1 %.4f, quarters %.3f", c.name, rep.Accuracy, rep.BalancedAccuracy, rep.MacroF1, rep.Quarters)
			if rep.Accuracy < c.floor.acc || rep.BalancedAccuracy < c.floor.bal || rep.MacroF1 < c.floor.f1 {
				t.Errorf("%s: accuracy %.4f, balanced %.4f, macro-F1 %.4f; want at least %.3f, %.3f, %.3f",
					c.name, rep.Accuracy, rep.BalancedAccuracy, rep.MacroF1, c.floor.acc, c.floor.bal, c.floor.f1)
			}
			svmPred := filepath.Join(dir, c.name+"-svm.jsonl")
			if err := runPeer([]string{"--in", in, "--out", svmPred, "--method", "svm"}); err != nil {
				t.Fatal(err)
			}
			svm, err := score(in, filepath.Join(dir, c.name+".truth.csv"), svmPred)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: the linear SVM peer's macro-F1 %.4f", c.name, svm.MacroF1)
			if rep.MacroF1 < svm.MacroF1 {
				t.Errorf("%s: macro-F1 %.4f below the linear SVM peer's %.4f", c.name, rep.MacroF1, svm.MacroF1)
			}
		})
	}
}

// buildNMFStream builds nmfstream into dir and returns its path.
func buildNMFStream(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "nmfstream")
	build := exec.Command("go", "build", "-o", bin, "github.com/nmfstream/nmfstream/cmd/nmfstream")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}
