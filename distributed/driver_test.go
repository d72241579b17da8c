package distributed

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// TestPrequentialApply replays a batch of three samples and three
// label-only records in input order: predictions made before the first
// label are not scored, a late label scores its sample's waiting
// prediction, a label for an unseen id is counted as unknown, and the
// labels of samples already published come back to be published.
func TestPrequentialApply(t *testing.T) {
	classes := &ClassTable{classes: map[string]int{}}
	classes.set([]string{"x", "y"})
	// Samples a (offset 0), b (1, labeled x), c (3); late labels a→y (2),
	// c→x (4), and one for an unseen id (5).
	b := &record.Batch{
		IDs:     []string{"a", "b", "c"},
		Labels:  []string{"", "x", ""},
		Labeled: []bool{false, true, false},
		Offsets: []int64{0, 1, 3},
		LateLabels: []record.LateLabel{
			{Offset: 2, ID: "a", Label: "y"}, {Offset: 4, ID: "c", Label: "x"}, {Offset: 5, ID: "nobody", Label: "x"},
		},
	}
	samples := []Sample{{ID: 1, Label: -1}, {ID: 2, Label: -1}, {ID: 4, Label: -1}}
	preds := []int{stages.NoPrediction, 1, 0}
	var q Prequential
	labels, err := q.Apply(b, []int{0, 1, 2}, samples, preds, classes)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Labeled{{ID: 1, Class: 1}, {ID: 4, Class: 0}}; !slices.Equal(labels, want) {
		t.Errorf("labels to publish %v, want %v", labels, want)
	}
	if samples[1].Label != 0 || samples[0].Label != -1 || samples[2].Label != -1 {
		t.Errorf("sample classes %d %d %d, want -1 0 -1 (only b came with its label)", samples[0].Label, samples[1].Label, samples[2].Label)
	}
	// a and b were predicted before any label: not scored; c after b's
	// label: predicted x, labeled x.
	c := q.Scorer.Counters()
	if c.Early != 2 || c.Labeled != 1 || c.Correct != 1 || c.Unpredicted != 0 {
		t.Errorf("scores %+v, want early 2, labeled 1, correct 1", c)
	}
	if q.Samples != 3 || q.LateLabels != 3 || q.UnknownLabels != 1 {
		t.Errorf("samples %d, late labels %d, unknown %d; want 3, 3, 1", q.Samples, q.LateLabels, q.UnknownLabels)
	}
	// A label the class table does not hold is an error, not a panic.
	b2 := &record.Batch{IDs: []string{"d"}, Labels: []string{"new"}, Labeled: []bool{true}, Offsets: []int64{6}}
	if _, err := q.Apply(b2, []int{0}, []Sample{{ID: 7, Label: -1}}, []int{0}, classes); err == nil || !strings.Contains(err.Error(), `"new"`) {
		t.Errorf("a label outside the class table: %v, want an error naming it", err)
	}
}

// TestVote checks the weighted vote: nearer neighbours weigh more, class
// scores split a neighbour's vote, and no neighbour is no prediction.
func TestVote(t *testing.T) {
	if c, s := Vote(nil); c != -1 || !math.IsNaN(s) {
		t.Errorf("no neighbour: %d, %v; want -1, NaN", c, s)
	}
	// Two far neighbours of class 0 (distance 2: weight 1/2 each) against
	// one near neighbour of class 1 (distance 0.5: weight 2).
	nb := []Neighbor{{Label: 0, SqDist: 4}, {Label: 0, SqDist: 4}, {Label: 1, SqDist: 0.25}}
	if c, s := Vote(nb); c != 1 || math.Abs(s-2.0/3) > 1e-6 {
		t.Errorf("vote %d with share %v, want 1 with 2/3", c, s)
	}
	// A neighbour with class scores votes for each class by its score.
	nb = []Neighbor{{SqDist: 1, Classes: []float64{0.25, 0.75}}}
	if c, s := Vote(nb); c != 1 || math.Abs(s-0.75) > 1e-6 {
		t.Errorf("vote %d with share %v, want 1 with 0.75", c, s)
	}
}
