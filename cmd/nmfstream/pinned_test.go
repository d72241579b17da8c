package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestStreamPredictionsPinned pins the bytes of `stream --out` on the
// digits stream of writeDigitsStream (10% labeled, labels 100 samples late,
// a bad record every 97): a refactor of the chain of stages must leave every
// prediction and score unchanged. The hash was taken on main (b076485)
// before the learning stage was split into a chain of stages, and taken
// again when the online graph weight's default became
// model.DefaultOnlineGraphWeight (the codes predict the samples no label
// reaches), when the spreading came to be solved (stages/harmonic.go),
// when its edges came to be averaged (stages.Learner.spreadWeighting) and
// when they came to be weighed by the codes too (stages.codeScaled), and
// when the score came to be the best class's share of the positive mass
// (scores in [0, 1]; no prediction changed); a change of the predictor
// that is meant to change predictions updates it.
func TestStreamPredictionsPinned(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "digits.arrow"), filepath.Join(dir, "pred.jsonl")
	writeDigitsStream(t, in, 0.1, 100)
	if code, _, stderr := runCmd(t, "stream", "-in", in, "-out", out, "-seed", "1"); code != 0 {
		t.Fatalf("stream exited %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	const want = "b8a4462de738be0dc166030f54ead728917a0988c9e27e23055a0cc6c66823ae"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("sha256 of the predictions = %s, want %s (%d bytes)", got, want, len(b))
	}
}
