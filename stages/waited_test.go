package stages

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// TestStepWaited: a batch's Step lists, in the order applied, the late
// labels that waited for their sample (an id twice when a later label
// replaced a waiting one), not those whose sample the window holds or
// whose arrival prediction awaits them; LabelWaits says which still wait,
// until their sample takes them.
func TestStepWaited(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 100}}}
	r := rand.New(rand.NewPCG(5, 5))
	rows, _, _ := fourFeatures(0, 6, r)
	if _, err := l.Learn(denseBatch(0, rows, []string{"a", "b", "c", "d", "e", "f"}, []string{"p", "q", "", "", "", ""})); err != nil {
		t.Fatal(err)
	}
	b := &record.Batch{Form: record.FormDense}
	b.LateLabels = []record.LateLabel{{Offset: 6, ID: "x", Label: "p"}, {Offset: 7, ID: "c", Label: "q"}, {Offset: 8, ID: "x", Label: "q"}, {Offset: 9, ID: "y", Label: "p"}}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	var waited []string
	for _, ll := range st.Waited {
		waited = append(waited, fmt.Sprint(ll.ID, "@", ll.Offset, ":", ll.Label))
	}
	if fmt.Sprint(waited) != "[x@6:p x@8:q y@9:p]" || !l.LabelWaits("x") || !l.LabelWaits("y") || l.LabelWaits("c") || l.Pending() != 2 {
		t.Fatalf("waited %v, x %v y %v c %v, %d pending; want [x@6:p x@8:q y@9:p], x and y waiting, 2 pending",
			waited, l.LabelWaits("x"), l.LabelWaits("y"), l.LabelWaits("c"), l.Pending())
	}
	rows, _, _ = fourFeatures(10, 1, r)
	st, err = l.Learn(denseBatch(10, rows, []string{"x"}, []string{""}))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Waited) != 0 || l.LabelWaits("x") || !l.LabelWaits("y") {
		t.Errorf("after x came: waited %v, x %v, y %v; want none waited, y still waiting", st.Waited, l.LabelWaits("x"), l.LabelWaits("y"))
	}
	// The labels applied one at a time (Label) are not a batch's: Step
	// does not list them, and the next batch's list starts empty.
	if err := l.Label("z", "p"); err != nil || !l.LabelWaits("z") {
		t.Fatalf("Label(z): %v, waits %v", err, l.LabelWaits("z"))
	}
	rows, _, _ = fourFeatures(11, 1, r)
	if st, err = l.Learn(denseBatch(11, rows, []string{"w"}, []string{""})); err != nil || len(st.Waited) != 0 {
		t.Errorf("a batch without late labels after Label: waited %v, err %v", st.Waited, err)
	}
}

// TestStepForgotten: Step.Forgotten counts the waiting labels a batch's
// late labels pushed past the Learner's horizon (the growth of
// ForgottenLabels, earlier batches' labels included); StillWaiting counts
// the ids of Step.Waited whose label still waits, once each, and Replaced
// pairs each replaced waiting label with the next one of its id.
func TestStepForgotten(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 100}}, Horizon: 3}
	late := func(off int64, ids ...string) *record.Batch {
		b := &record.Batch{Form: record.FormDense}
		for i, id := range ids {
			b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: off + int64(i), ID: id, Label: "p"})
		}
		return b
	}
	st, err := l.Learn(late(0, "a", "b"))
	if err != nil || st.Forgotten != 0 || l.StillWaiting(st.Waited) != 2 {
		t.Fatalf("first batch: forgotten %d, still waiting %d, %v; want 0, 2", st.Forgotten, l.StillWaiting(st.Waited), err)
	}
	// c, d, c again and e past a horizon of three: a and b are forgotten;
	// c's second label makes it the newest, so d, c and e wait.
	st, err = l.Learn(late(2, "c", "d", "c", "e"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Forgotten != 2 || l.ForgottenLabels() != 2 {
		t.Errorf("forgotten %d in the step, %d in all; want 2 (a and b)", st.Forgotten, l.ForgottenLabels())
	}
	if n := l.StillWaiting(st.Waited); n != 3 {
		t.Errorf("still waiting %d of the step's ids c, d, e; want 3", n)
	}
	if got := fmt.Sprint(Replaced(st.Waited)); got != "[{2 4 c}]" {
		t.Errorf("Replaced %s, want [{2 4 c}] (c at offset 2 replaced by the label at 4)", got)
	}
	st, err = l.Learn(late(6, "f"))
	if err != nil || st.Forgotten != 1 || l.StillWaiting(st.Waited) != 1 || len(Replaced(st.Waited)) != 0 {
		t.Errorf("third batch: forgotten %d, still waiting %d, replaced %v, %v; want 1 (d, the oldest), 1, none",
			st.Forgotten, l.StillWaiting(st.Waited), Replaced(st.Waited), err)
	}
}
