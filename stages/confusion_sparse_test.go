package stages

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/internal/testenv"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
)

// refConfusion is the reference dense confusion: k rows of k + 1 counts,
// grown as classes appear, the missing predictions in the last column.
type refConfusion struct{ n [][]int64 }

func (m *refConfusion) add(truth, pred int) {
	if c := max(truth, pred) + 1; c > len(m.n) {
		old := len(m.n)
		for i := range m.n {
			row := make([]int64, c+1)
			copy(row, m.n[i][:old])
			row[c] = m.n[i][old]
			m.n[i] = row
		}
		for len(m.n) < c {
			m.n = append(m.n, make([]int64, c+1))
		}
	}
	if pred < 0 {
		pred = len(m.n)
	}
	m.n[truth][pred]++
}

// refCells returns the nonzero cells of dense counts n in row-major order
// (nil if none), rows past k and columns past k (none) left out.
func refCells(n [][]int64, k int) []Cell {
	var out []Cell
	for i, row := range n[:min(len(n), k)] {
		for j, v := range row[:min(len(row), k+1)] {
			if v != 0 {
				out = append(out, Cell{Row: i, Col: j, N: v})
			}
		}
	}
	return out
}

// sameScores reports whether a and b are equal to the bit (NaN included).
func sameScores(a, b Scores) bool {
	return math.Float64bits(a.BalancedAccuracy) == math.Float64bits(b.BalancedAccuracy) &&
		math.Float64bits(a.MacroF1) == math.Float64bits(b.MacroF1) &&
		math.Float64bits(a.Majority) == math.Float64bits(b.Majority)
}

// randomScore returns a random scoring of a stream of up to k classes:
// a true class (skewed to the first ones) and its prediction, right
// mostly, else another class, none (NoPrediction) or BeforeLabels.
func randomScore(rnd *rand.Rand, k int) (pred, truth int) {
	truth = min(rnd.IntN(k), rnd.IntN(k))
	switch r := rnd.IntN(20); {
	case r == 0:
		return BeforeLabels, truth
	case r <= 2:
		return NoPrediction, truth
	case r <= 7:
		return rnd.IntN(k), truth
	}
	return truth, truth
}

// TestScorerSparse: random scoring sequences, with classes appearing as
// they go (a prediction of a class past every true class so far too),
// give the Scorer the scores, to the bit, the dense counts and the
// row-major nonzero cells of the reference dense confusion, at every step.
func TestScorerSparse(t *testing.T) {
	for seed := range uint64(40) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		var s Scorer
		var ref refConfusion
		k := 1 + rnd.IntN(30)
		steps := rnd.IntN(400)
		for step := range steps {
			pred, truth := randomScore(rnd, 1+k*(step+1)/max(steps, 1))
			s.Score(pred, truth)
			if pred != BeforeLabels {
				ref.add(truth, pred)
			}
			if got, want := s.Scores(), denseScores(ref.n); !sameScores(got, want) {
				t.Fatalf("seed %d step %d: scores %+v, the dense confusion's %+v", seed, step, got, want)
			}
		}
		if got := s.conf.dense(); !reflect.DeepEqual(got, ref.n) {
			t.Fatalf("seed %d: dense counts %v, want %v", seed, got, ref.n)
		}
		if got, want := s.conf.cells(), refCells(ref.n, len(ref.n)); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: cells %v, want %v", seed, got, want)
		}
	}
}

// scorerLearner returns a Learner with a model's state (State needs one)
// and the classes c0 to c<k−1>, whose scorer is then driven directly.
func scorerLearner(t *testing.T, k int) *Learner {
	t.Helper()
	l := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 50}, Src: rand.NewPCG(1, 1)}}
	recs, _ := digitsStream(0, 100)
	b := batches(recs[:20], 20)[0]
	if _, err := l.Learn(b); err != nil {
		t.Fatal(err)
	}
	if l.Counters().Labeled != 0 || len(l.classes) != 0 {
		t.Fatalf("unlabeled samples scored %d, made %d classes", l.Counters().Labeled, len(l.classes))
	}
	for c := range k {
		l.class(fmt.Sprintf("c%d", c))
	}
	return l
}

// checkLearnerConfusion fails t unless l's scores, dense and sparse
// confusions and saved confusion are those of the reference ref.
func checkLearnerConfusion(t *testing.T, what string, l *Learner, ref *refConfusion) {
	t.Helper()
	k := len(ref.n)
	want := Confusion{Classes: slices.Clone(l.classes[:k]), N: ref.n}
	if got := l.Confusion(); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Confusion %+v, want %+v", what, got, want)
	}
	sparse := Confusion{Classes: want.Classes, Cells: refCells(ref.n, k)}
	if got := l.ConfusionCells(); !reflect.DeepEqual(got, sparse) {
		t.Fatalf("%s: ConfusionCells %+v, want %+v", what, got, sparse)
	}
	sc := denseScores(ref.n)
	for name, got := range map[string]Scores{"Scores": l.Scores(), "Confusion().Scores": l.Confusion().Scores(), "ConfusionCells().Scores": l.ConfusionCells().Scores()} {
		if !sameScores(got, sc) {
			t.Fatalf("%s: %s %+v, the dense confusion's %+v", what, name, got, sc)
		}
	}
	st, err := l.State()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Confusion, ref.n) {
		t.Fatalf("%s: saved confusion %v, want the dense counts %v", what, st.Confusion, ref.n)
	}
}

// TestLearnerConfusionSparse: a Learner scored at random gives the
// reference dense confusion's scores, dense counts and nonzero cells, and
// saves its dense counts (LearnerState.Confusion, unchanged); restored from
// that state (as from a checkpoint written before the sparse confusion),
// it gives them again and goes on scoring as the reference does.
func TestLearnerConfusionSparse(t *testing.T) {
	for seed := range uint64(8) {
		rnd := rand.New(rand.NewPCG(seed, 11))
		k := 2 + rnd.IntN(40)
		l := scorerLearner(t, k)
		var ref refConfusion
		score := func(l *Learner, n int) {
			for range n {
				pred, truth := randomScore(rnd, k)
				l.sc.Score(pred, truth)
				if pred != BeforeLabels {
					ref.add(truth, pred)
				}
			}
		}
		checkLearnerConfusion(t, fmt.Sprintf("seed %d, nothing scored", seed), l, &ref)
		score(l, 5*k)
		checkLearnerConfusion(t, fmt.Sprintf("seed %d", seed), l, &ref)
		st, err := l.State()
		if err != nil {
			t.Fatal(err)
		}
		back := &Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 3, Window: 50}, Src: rand.NewPCG(1, 1)}}
		if err := back.Restore(st); err != nil {
			t.Fatal(err)
		}
		checkLearnerConfusion(t, fmt.Sprintf("seed %d, restored", seed), back, &ref)
		score(back, 5*k)
		checkLearnerConfusion(t, fmt.Sprintf("seed %d, restored and scored", seed), back, &ref)
	}
}

// randomConfusion is testenv.RandomConfusion as a Confusion, of any
// number of the classes names.
func randomConfusion(rnd *rand.Rand, names []string, odd bool) Confusion {
	classes, n := testenv.RandomConfusion(rnd, names, 0, odd)
	return Confusion{Classes: classes, N: n}
}

// refAdd is the reference Add: the dense sum of c and o by class name.
func refAdd(c, o Confusion) Confusion {
	idx := map[string]int{}
	var out Confusion
	for _, x := range []Confusion{c, o} {
		for _, name := range x.Classes {
			if _, ok := idx[name]; !ok {
				idx[name] = len(out.Classes)
				out.Classes = append(out.Classes, name)
			}
		}
	}
	k := len(out.Classes)
	out.N = make([][]int64, k)
	for i := range out.N {
		out.N[i] = make([]int64, k+1)
	}
	for _, x := range []Confusion{c, o} {
		for i, row := range x.N[:min(len(x.N), len(x.Classes))] {
			for j, v := range row {
				col := k
				if j < len(x.Classes) {
					col = idx[x.Classes[j]]
				}
				out.N[idx[x.Classes[i]]][col] += v
			}
		}
	}
	return out
}

// sparseOf returns c in the sparse form: its nonzero cells of the rows
// below its classes, every column past its classes counted as none.
func sparseOf(c Confusion) Confusion {
	k := len(c.Classes)
	out := Confusion{Classes: c.Classes}
	for i, row := range c.N[:min(len(c.N), k)] {
		var none int64
		for j, v := range row {
			switch {
			case j >= k:
				none += v
			case v != 0:
				out.Cells = append(out.Cells, Cell{Row: i, Col: j, N: v})
			}
		}
		if none != 0 {
			out.Cells = append(out.Cells, Cell{Row: i, Col: k, N: none})
		}
	}
	return out
}

// TestConfusionSum: random confusions of overlapping classes in their own
// orders, dense (of odd shapes too) or sparse, added up by ConfusionSum
// give the scores, to the bit, of their sum by the reference Add, which
// Add gives too; and a sparse confusion scores as its dense form.
func TestConfusionSum(t *testing.T) {
	names := make([]string, 25)
	for i := range names {
		names[i] = fmt.Sprintf("class %d", i)
	}
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 13))
		names := names[:1+rnd.IntN(len(names))]
		var sum ConfusionSum
		var add, ref Confusion
		for p := range 1 + rnd.IntN(5) {
			c := randomConfusion(rnd, names, seed%2 == 1)
			ref = refAdd(ref, c)
			add = add.Add(c)
			if !reflect.DeepEqual(add, ref) {
				t.Fatalf("seed %d part %d: Add %+v, want %+v", seed, p, add, ref)
			}
			if rnd.IntN(2) == 0 {
				c = sparseOf(c)
			}
			sum.Add(c)
			if got, want := sum.Scores(), denseScores(ref.N); !sameScores(got, want) {
				t.Fatalf("seed %d part %d: ConfusionSum scores %+v, the dense sum's %+v", seed, p, got, want)
			}
		}
		if got, want := sparseOf(ref).Scores(), denseScores(ref.N); !sameScores(got, want) {
			t.Fatalf("seed %d: the sparse sum scores %+v, the dense one %+v", seed, got, want)
		}
		if got, want := sparseOf(ref).Add(Confusion{}), ref; !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the sparse sum added to nothing %+v, want %+v", seed, got, want)
		}
	}
	if got := (&ConfusionSum{}).Scores(); !sameScores(got, denseScores(nil)) || !math.IsNaN(got.Majority) {
		t.Fatalf("an empty sum scores %+v, want NaNs", got)
	}
}
