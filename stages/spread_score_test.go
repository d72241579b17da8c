package stages

import (
	"math"
	"testing"
)

// TestGraphScoresAreProbabilities replays the digits stream of
// TestPrequentialDigits and checks that every prediction's score is in
// [0, 1] (Prediction.Score, openapi.json's score): the harmonic
// solution's slightly negative class shares once put PredictGraph's score
// above 1 (1.02 on this stream).
func TestGraphScoresAreProbabilities(t *testing.T) {
	recs, _ := digitsStream(0.1, 100)
	l := newDigitsLearner(0)
	n := 0
	for _, b := range batches(recs, 10) {
		st, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Predictions {
			if p.Label == "" {
				continue
			}
			n++
			if !(p.Score >= 0 && p.Score <= 1) || math.IsNaN(p.Score) {
				t.Fatalf("sample %s: predicted %s with score %v, want a score in [0, 1]", p.ID, p.Label, p.Score)
			}
		}
	}
	if n < 1000 {
		t.Fatalf("%d predictions, want most of the 1,797 samples predicted", n)
	}
}
