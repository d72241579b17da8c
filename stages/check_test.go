package stages

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
)

// fourFeatures returns n records of the README's shape, 4 features, with
// ids and labels from two classes, offsets from off.
func fourFeatures(off int64, n int, r *rand.Rand) ([][]float64, []string, []string) {
	var rows [][]float64
	var ids, labels []string
	for i := range n {
		c := (int(off) + i) % 2
		row := []float64{r.Float64(), r.Float64(), r.Float64(), r.Float64()}
		row[2*c] += 5
		rows = append(rows, row)
		ids = append(ids, fmt.Sprint("r", int(off)+i))
		labels = append(labels, fmt.Sprint(c))
	}
	return rows, ids, labels
}

// TestRankAboveDimension learns 4-feature records at the default rank 40:
// the rank is lowered to 4 before the first fit, which used to fail and
// stop the learner ("rank 40 out of range [1, min(D=4, N=100)]").
func TestRankAboveDimension(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 40, Graph: graph.KNN{K: 5, Window: 1000}}}
	r := rand.New(rand.NewPCG(1, 1))
	predicted := 0
	for off := int64(0); off < 300; off += 10 {
		rows, ids, labels := fourFeatures(off, 10, r)
		st, err := l.Learn(denseBatch(off, rows, ids, labels))
		if err != nil {
			t.Fatalf("batch at %d: %v", off, err)
		}
		if len(st.Rejects) != 0 {
			t.Fatalf("batch at %d: rejects %v", off, st.Rejects[0].Reason)
		}
		for _, p := range st.Predictions {
			if p.Label != "" {
				predicted++
			}
		}
	}
	if !l.Model.Started() || l.Model.Rank != 4 {
		t.Fatalf("started %v at rank %d, want started at rank 4", l.Model.Started(), l.Model.Rank)
	}
	if predicted < 150 {
		t.Errorf("%d of 300 records predicted, want most", predicted)
	}
}

// TestAdmitDim rejects, record by record and without an error, a first
// batch over MaxDim, over the model's basis limit or whose dense window
// would exceed MaxWindowBytes; the next batch within the limits fixes the
// stream's dimension and is learned.
func TestAdmitDim(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	wide := func(d int) [][]float64 {
		rows := make([][]float64, 3)
		for i := range rows {
			rows[i] = make([]float64, d)
			rows[i][i] = 1
		}
		return rows
	}
	for _, c := range []struct {
		name string
		l    *Learner
		d    int
		want string
	}{
		{"max-dim", &Learner{Model: &model.Online{Rank: 4, Graph: graph.KNN{K: 3, Window: 100}}, Featurize: Featurize{MaxDim: 8}}, 9, "over the limit of 8"},
		{"basis", &Learner{Model: &model.Online{Rank: 4, MaxBasisBytes: 8 * 4 * 8, Graph: graph.KNN{K: 3, Window: 100}}}, 9, "basis"},
		{"window", &Learner{Model: &model.Online{Rank: 4, Graph: graph.KNN{K: 3, Window: 100}}, Featurize: Featurize{MaxWindowBytes: 8 * 100 * 8}}, 9, "window of 100 dense samples"},
	} {
		st, err := c.l.Learn(denseBatch(0, wide(c.d), []string{"a", "b", "c"}, []string{"", "", ""}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(st.Rejects) != 3 || !strings.Contains(st.Rejects[0].Reason.Error(), c.want) || c.l.Featurize.Dim() != 0 {
			t.Fatalf("%s: rejects %v, dim %d; want all 3 rejected for %q, no dimension fixed", c.name, st.Rejects, c.l.Featurize.Dim(), c.want)
		}
		for off := int64(3); off < 203; off += 10 {
			rows, ids, labels := fourFeatures(off, 10, r)
			st, err := c.l.Learn(denseBatch(off, rows, ids, labels))
			if err != nil || len(st.Rejects) != 0 {
				t.Fatalf("%s: 4 features at %d: %v, %v", c.name, off, err, st.Rejects)
			}
		}
		if got := c.l.Counters(); got.Samples != 200 || got.Rejected != 3 || !c.l.Model.Started() {
			t.Errorf("%s: counters %+v, started %v", c.name, got, c.l.Model.Started())
		}
	}
}

// TestTextWindowBytes rejects a document with more distinct terms than a
// window of them may hold within MaxWindowBytes, and learns the others.
func TestTextWindowBytes(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 10}}, Featurize: Featurize{MaxWindowBytes: 12 * 10 * 5}}
	var words []string
	for i := range 20 {
		words = append(words, fmt.Sprintf("term%c%c", 'a'+i%26, 'a'+i/26))
	}
	b := &record.Batch{Form: record.FormText, Text: []string{"term one two", strings.Join(words, " ")},
		IDs: []string{"a", "b"}, Labels: []string{"", ""}, Labeled: []bool{false, false}, Offsets: []int64{0, 1}}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rejects) != 1 || st.Rejects[0].Offset != 1 || !strings.Contains(st.Rejects[0].Reason.Error(), "over the limit of 5 per document") {
		t.Fatalf("rejects %v, want the 20-term document over the limit of 5", st.Rejects)
	}
}

// TestMaxClasses rejects the labeled samples and late labels that would add
// a class beyond MaxClasses, in input order, and learns the others. A late
// label whose sample has not come waits without taking a class: labels
// whose samples never come leave room for a real class, and one whose
// sample comes once the classes are full is dropped.
func TestMaxClasses(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 100}}, Featurize: Featurize{MaxClasses: 2}}
	r := rand.New(rand.NewPCG(3, 3))
	rows, ids, _ := fourFeatures(0, 6, r)
	b := denseBatch(0, rows, ids, []string{"a", "b", "c", "a", "", "d"})
	b.LateLabels = []record.LateLabel{{Offset: 6, ID: "x", Label: "e"}, {Offset: 7, ID: "y", Label: "b"}}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, rj := range st.Rejects {
		offs = append(offs, rj.Offset)
	}
	if fmt.Sprint(offs) != "[2 5]" || !strings.Contains(st.Rejects[0].Reason.Error(), "over the limit of 2 classes") {
		t.Fatalf("rejects at %v (%v), want 2 and 5 (the labels of x and y wait)", offs, st.Rejects)
	}
	if c := l.Counters(); c.Samples != 4 || c.Records != 8 || len(l.Classes()) != 2 || c.Offset != 8 || l.Pending() != 2 {
		t.Errorf("counters %+v, classes %v, %d pending", c, l.Classes(), l.Pending())
	}
	// x arrives: its label "e" would be a third class, so it is dropped and
	// x learned unlabeled; y arrives and takes its label "b".
	rows, _, _ = fourFeatures(8, 2, r)
	if _, err := l.Learn(denseBatch(8, rows, []string{"x", "y"}, []string{"", ""})); err != nil {
		t.Fatal(err)
	}
	if got := l.Classes(); len(got) != 2 || l.Pending() != 0 {
		t.Errorf("classes %v, %d pending after x and y came, want a and b, none", got, l.Pending())
	}
	if n, ok := l.Window.Lookup("y"); !ok || l.Window.Class(n) != l.classOf["b"] {
		t.Errorf("y's class %d, want b's", l.Window.Class(n))
	}
	if n, ok := l.Window.Lookup("x"); !ok || l.Window.Class(n) != -1 {
		t.Errorf("x's class %d, want none", l.Window.Class(n))
	}
}

// TestMaxClassesGhostLabels: labels for ids that never come, each of a new
// class, and more of them than MaxClasses, take no class: a real sample of
// a new class is still learned with it.
func TestMaxClassesGhostLabels(t *testing.T) {
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 100}}, Featurize: Featurize{MaxClasses: 3}}
	r := rand.New(rand.NewPCG(4, 4))
	rows, ids, _ := fourFeatures(0, 2, r)
	b := denseBatch(0, rows, ids, []string{"a", ""})
	for i := range 10 {
		b.LateLabels = append(b.LateLabels, record.LateLabel{Offset: int64(2 + i), ID: fmt.Sprintf("ghost%d", i), Label: fmt.Sprintf("g%d", i)})
	}
	st, err := l.Learn(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rejects) != 0 || len(l.Classes()) != 1 || l.Pending() != 10 {
		t.Fatalf("rejects %v, classes %v, %d pending; want none, [a], 10", st.Rejects, l.Classes(), l.Pending())
	}
	rows, _, _ = fourFeatures(12, 2, r)
	st, err = l.Learn(denseBatch(12, rows, []string{"dog1", "cat1"}, []string{"dog", "cat"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rejects) != 0 || len(l.Classes()) != 3 {
		t.Errorf("rejects %v, classes %v; want dog and cat learned", st.Rejects, l.Classes())
	}
}
