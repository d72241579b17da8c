package stages

import (
	"errors"
	"math"
	"testing"
)

// TestPriorScale checks priorScale against factors worked by hand: labels
// of three classes 3, 1 and 0 in the window (a fourth labeled node of
// class 2 has left it), so π = 4/7, 2/7, 1/7 with one label a class added.
func TestPriorScale(t *testing.T) {
	l := &Learner{classes: []string{"a", "b", "c"}}
	l.nodes = []node{{live: true, class: 0}, {live: true, class: 0}, {live: true, class: -1}, {live: true, class: 0}, {live: true, class: 1}, {live: false, class: 2}}
	for _, tc := range []struct {
		power float64
		want  []float64 // (7/4)^γ, (7/2)^γ, 7^γ
	}{
		{0, []float64{1.08757, 1.20673, 1.33895}}, // the default, γ = 0.15
		{0.5, []float64{1.32288, 1.87083, 2.64575}},
		{-1, nil},
	} {
		l.PriorPower = tc.power
		got := l.priorScale(3)
		if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Fatalf("PriorPower %v: %v, want %v", tc.power, got, tc.want)
		}
		for c := range got {
			if math.Abs(got[c]-tc.want[c]) > 1e-5 {
				t.Errorf("PriorPower %v, class %d: %v, want %v", tc.power, c, got[c], tc.want[c])
			}
		}
	}
}

// TestPriorPower checks that the mixture divides the labels' prior out on
// a document stream whose third topic is rare: against PriorPower −1 (the
// mixture as it is) the default answers the rare topic for more samples
// and changes some answers, its scores stay probabilities, and a
// PriorPower with a predictor that has no mixture is refused.
func TestPriorPower(t *testing.T) {
	bs := topicBatches(7, 30)
	l, none := newTopicLearner(), newTopicLearner()
	none.PriorPower = -1
	var rare, rareNone, differ, n int
	for _, b := range bs {
		sa, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		sn, err := none.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for p, pa := range sa.Predictions {
			pn := sn.Predictions[p]
			if pa.Label == "" {
				continue
			}
			n++
			if pa.Score < 0 || pa.Score > 1 || math.IsNaN(pa.Score) {
				t.Fatalf("offset %d: score %v, want a probability", pa.Offset, pa.Score)
			}
			if pa.Label == "weather" {
				rare++
			}
			if pn.Label == "weather" {
				rareNone++
			}
			if pa.Label != pn.Label {
				differ++
			}
		}
	}
	if differ == 0 || rare <= rareNone {
		t.Errorf("of %d predictions the rare topic answered %d times with the prior divided out, %d without; %d differ: want more, and some differing", n, rare, rareNone, differ)
	}
	for _, p := range []Predictor{PredictNearest, PredictSpread, PredictWalk, PredictPropagate} {
		bad := &Learner{Model: newTopicLearner().Model, PriorPower: 0.3, Predictor: p}
		var se *SettingError
		if err := bad.Check(); !errors.As(err, &se) || se.Field != "PriorPower" {
			t.Errorf("predictor %v: Check() = %v, want a SettingError of PriorPower", p, err)
		}
	}
}
