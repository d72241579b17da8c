package stages

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestPriorScale checks priorScale against factors worked by hand: labels
// of three classes 3, 1 and 0 in the window (a fourth labeled node of
// class 2 has left it), so π = 4/7, 2/7, 1/7 with one label a class added,
// and the factors (π_min/π_c)^γ = (1/4)^γ, (1/2)^γ, 1; a huge γ leaves
// them finite.
func TestPriorScale(t *testing.T) {
	l := &Learner{classes: []string{"a", "b", "c"}}
	l.nodes = []node{{live: true, class: 0}, {live: true, class: 0}, {live: true, class: -1}, {live: true, class: 0}, {live: true, class: 1}, {live: false, class: 2}}
	for _, tc := range []struct {
		power float64
		want  []float64 // (1/4)^γ, (1/2)^γ, 1
	}{
		{0, []float64{0.812252, 0.901250, 1}}, // the default, γ = 0.15
		{0.5, []float64{0.5, 0.707107, 1}},
		{1e6, []float64{0, 0, 1}},
		{-1, nil},
	} {
		l.PriorPower = tc.power
		count, _ := l.labelCounts()
		got := l.priorScale(count)
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
// a document stream whose third topic is rare: the rare topic is answered
// for more samples as PriorPower grows (−1, the mixture as it is; 0, the
// default; 0.5; 1), the default changes some answers, the scores stay
// probabilities, and a PriorPower with a predictor that has no mixture is
// refused.
func TestPriorPower(t *testing.T) {
	powers := []float64{-1, 0, 0.5, 1}
	rare := make([]int, len(powers))
	labels := make([][]string, len(powers))
	for i, g := range powers {
		l := newTopicLearner()
		l.PriorPower = g
		for _, b := range topicBatches(7, 30) {
			s, err := l.Learn(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range s.Predictions {
				if p.Label == "" {
					continue
				}
				if p.Score < 0 || p.Score > 1 || math.IsNaN(p.Score) {
					t.Fatalf("PriorPower %v, offset %d: score %v, want a probability", g, p.Offset, p.Score)
				}
				if p.Label == "weather" {
					rare[i]++
				}
				labels[i] = append(labels[i], p.Label)
			}
		}
	}
	for i := 1; i < len(powers); i++ {
		if rare[i] < rare[i-1] {
			t.Errorf("PriorPower %v answered the rare topic %d times, %v %d: want no fewer as it grows", powers[i], rare[i], powers[i-1], rare[i-1])
		}
	}
	if rare[len(powers)-1] < rare[0]+5 || slices.Equal(labels[0], labels[1]) {
		t.Errorf("the rare topic answered %v times for PriorPower %v; the default's answers the same as without the division: %v", rare, powers, slices.Equal(labels[0], labels[1]))
	}
	for _, p := range []Predictor{PredictNearest, PredictSpread, PredictWalk, PredictPropagate} {
		bad := &Learner{Model: newTopicLearner().Model, PriorPower: 0.3, Predictor: p}
		var se *SettingError
		if err := bad.Check(); !errors.As(err, &se) || se.Field != "PriorPower" {
			t.Errorf("predictor %v: Check() = %v, want a SettingError of PriorPower", p, err)
		}
	}
}

// TestPriorPowerScores checks that the divided mixture's scores are
// renormalized: on two classes (the topic stream's sport and finance
// merged) every answer's score is at least a half, as the larger of two
// probabilities is, though the majority class's factor is below one.
func TestPriorPowerScores(t *testing.T) {
	l := newTopicLearner()
	scored := 0
	for _, b := range topicBatches(7, 30) {
		for i, y := range b.Labels {
			if y == "finance" {
				b.Labels[i] = "sport"
			}
		}
		for i, ll := range b.LateLabels {
			if ll.Label == "finance" {
				b.LateLabels[i].Label = "sport"
			}
		}
		s, err := l.Learn(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Predictions {
			if p.Label == "" || p.lin == noPrediction {
				continue // not the mixture's answer
			}
			scored++
			if p.Score < 0.5-1e-12 || p.Score > 1 {
				t.Fatalf("offset %d: %s with score %v, want a probability of at least ½ (two classes)", p.Offset, p.Label, p.Score)
			}
		}
	}
	if scored < 250 {
		t.Fatalf("%d answers of the mixture, want ≥ 250", scored)
	}
}
