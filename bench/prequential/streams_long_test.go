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
func TestDocumentStreamFloors(t *testing.T) {
	testenv.SkipUnlessLong(t, "four document streams through nmfstream stream (about 3 minutes)")
	type floor struct{ acc, bal, f1 float64 }
	cases := []struct {
		name, data string
		shuffle    uint64
		block      int
		rare       string
		floor      floor
	}{
		// Measured 0.933 / 0.926 / 0.921.
		{name: "spam", data: "spam", floor: floor{0.928, 0.92, 0.915}},
		// Measured 0.936 / 0.809 / 0.749.
		{name: "spam7", data: "spam", rare: "spam:0.07", floor: floor{0.93, 0.80, 0.74}},
		// Measured 0.721 / 0.759 / 0.738.
		{name: "sotub", data: "sotu", shuffle: 1, block: 2000, floor: floor{0.71, 0.75, 0.73}},
		// Measured 0.571 / 0.502 / 0.509.
		{name: "kjv", data: "kjv", shuffle: 1, floor: floor{0.56, 0.49, 0.50}},
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "nmfstream")
	build := exec.Command("go", "build", "-o", bin, "github.com/nmfstream/nmfstream/cmd/nmfstream")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, _, err := loadText(c.data + ":" + testenv.Data(t, c.data))
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, c.name+".arrow")
			if err := makeText(docs, c.shuffle, c.block, 0.1, 100, 1, c.rare, in); err != nil {
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
		})
	}
}
