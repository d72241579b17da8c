package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestAccuracy(t *testing.T) {
	for _, tc := range []struct {
		pred, truth []int
		want        float64
	}{
		{[]int{0, 1, 2, 2}, []int{0, 1, 1, 2}, 0.75},
		{[]int{0, 1, 2, 2}, []int{0, -1, -1, 2}, 1}, // unlabeled skipped
		{[]int{-1, 1, 0}, []int{0, 1, 1}, 1.0 / 3},  // −1 prediction is wrong
		{[]int{}, []int{}, math.NaN()},
		{[]int{3}, []int{-1}, math.NaN()},
	} {
		got := Accuracy(tc.pred, tc.truth)
		if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("Accuracy(%v, %v) = %v, want %v", tc.pred, tc.truth, got, tc.want)
		}
	}
}

func TestConfusionMatrix(t *testing.T) {
	pred := []int{0, 1, 1, 2, 0, -1, 2}
	truth := []int{0, 1, 0, 2, 2, 1, -1}
	got := ConfusionMatrix(pred, truth, 3)
	want := [][]int{
		{1, 1, 0}, // truth 0: predicted 0 and 1
		{0, 1, 0}, // truth 1: one 1, one −1 (in no cell)
		{1, 0, 1}, // truth 2: predicted 0 and 2
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("row %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestMisusePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Accuracy length":   func() { Accuracy([]int{1}, []int{1, 2}) },
		"Confusion truth":   func() { ConfusionMatrix([]int{0}, []int{3}, 3) },
		"NMI length":        func() { NMI([]int{1}, nil) },
		"Assign non-finite": func() { Assign(mat.NewDense(1, 1, []float64{math.NaN()})) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// bruteAssign returns the minimal total cost over all injective maps of
// the smaller side into the larger one.
func bruteAssign(cost [][]float64) float64 {
	r, c := len(cost), len(cost[0])
	best := math.Inf(1)
	used := make([]bool, max(r, c))
	var rec func(i int, sum float64)
	if r <= c {
		rec = func(i int, sum float64) {
			if i == r {
				best = min(best, sum)
				return
			}
			for j := range c {
				if !used[j] {
					used[j] = true
					rec(i+1, sum+cost[i][j])
					used[j] = false
				}
			}
		}
	} else {
		rec = func(j int, sum float64) {
			if j == c {
				best = min(best, sum)
				return
			}
			for i := range r {
				if !used[i] {
					used[i] = true
					rec(j+1, sum+cost[i][j])
					used[i] = false
				}
			}
		}
	}
	rec(0, 0)
	return best
}

func TestAssignBruteForce(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for trial := range 300 {
		r, c := 1+rnd.IntN(6), 1+rnd.IntN(6)
		cost := make([][]float64, r)
		m := mat.NewDense(r, c, nil)
		for i := range cost {
			cost[i] = make([]float64, c)
			for j := range cost[i] {
				// Small integers make ties common, which is where a wrong
				// potential update shows.
				v := float64(rnd.IntN(10) - 3)
				if trial%2 == 0 {
					v = rnd.NormFloat64()
				}
				cost[i][j] = v
				m.Set(i, j, v)
			}
		}
		got := Assign(m)
		if len(got) != r {
			t.Fatalf("%d×%d: %d assignments", r, c, len(got))
		}
		seen := map[int]bool{}
		var sum float64
		assigned := 0
		for i, j := range got {
			if j < 0 {
				continue
			}
			if j >= c || seen[j] {
				t.Fatalf("%d×%d: invalid assignment %v", r, c, got)
			}
			seen[j] = true
			sum += cost[i][j]
			assigned++
		}
		if assigned != min(r, c) {
			t.Fatalf("%d×%d: %d rows assigned, want %d", r, c, assigned, min(r, c))
		}
		// Sums of ≤ 6 terms: rounding differences stay far below 1e-9.
		if want := bruteAssign(cost); math.Abs(sum-want) > 1e-9 {
			t.Fatalf("%d×%d: cost %v, brute force %v (assignment %v)", r, c, sum, want, got)
		}
	}
}

func TestClusteringAccuracy(t *testing.T) {
	// Clusters 1→class 0, 0→class 1; the lone 2 has no class left.
	pred := []int{1, 1, 0, 0, 2, 0}
	truth := []int{0, 0, 1, 1, 1, -1}
	if got, want := ClusteringAccuracy(pred, truth), 4.0/5; got != want {
		t.Errorf("ClusteringAccuracy = %v, want %v", got, want)
	}
	// Renaming clusters does not matter.
	if got := ClusteringAccuracy([]int{7, 7, 3, 3}, []int{0, 0, 1, 1}); got != 1 {
		t.Errorf("perfect relabeled clustering: %v, want 1", got)
	}
	// Against brute force over all relabelings, on random labelings.
	rnd := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		n, k, c := 20, 1+rnd.IntN(5), 1+rnd.IntN(5)
		pred, truth := make([]int, n), make([]int, n)
		for i := range n {
			pred[i], truth[i] = rnd.IntN(k), rnd.IntN(c)
		}
		table, _ := contingency(pred, truth)
		neg := make([][]float64, len(table))
		for i, row := range table {
			for _, v := range row {
				neg[i] = append(neg[i], -v)
			}
		}
		want := -bruteAssign(neg) / float64(n)
		if got := ClusteringAccuracy(pred, truth); math.Abs(got-want) > 1e-12 {
			t.Fatalf("ClusteringAccuracy(%v, %v) = %v, brute force %v", pred, truth, got, want)
		}
	}
}

func TestNMI(t *testing.T) {
	check := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: NMI = %v, want %v ± %v", name, got, want, tol)
		}
	}
	a := []int{0, 0, 1, 1, 2, 2, 2}
	check("identical", NMI(a, a), 1, 1e-12)
	check("renamed", NMI([]int{5, 5, 9, 9, 1, 1, 1}, a), 1, 1e-12)
	check("one cluster each", NMI([]int{3, 3}, []int{0, 0}), 1, 0)
	check("one cluster vs two", NMI([]int{3, 3}, []int{0, 1}), 0, 0)
	// Exactly independent: truth = i mod 2, pred = ⌊i/2⌋ mod 2.
	var p, q []int
	for i := range 40 {
		q = append(q, i%2)
		p = append(p, (i/2)%2)
	}
	check("independent", NMI(p, q), 0, 1e-12)
	// Random independent labelings of 20000 samples: the plug-in MI is
	// biased up by about (k−1)(c−1)/(2n) = 0.0009 nats, far below 0.01.
	rnd := rand.New(rand.NewPCG(1, 1))
	p, q = nil, nil
	for range 20000 {
		p = append(p, rnd.IntN(5))
		q = append(q, rnd.IntN(5))
	}
	check("random independent", NMI(p, q), 0, 0.01)
	// By hand: truth [0 0 1 1], pred [0 0 0 1]. Table ((2,0),(1,1)),
	// marginals a = (2,2), b = (3,1), n = 4.
	mi := 0.5*math.Log(4.0/3) + 0.25*math.Log(2.0/3) + 0.25*math.Log(2)
	ha := math.Log(2)
	hb := -(0.75*math.Log(0.75) + 0.25*math.Log(0.25))
	want := mi / ((ha + hb) / 2) // 0.34371…, by scikit-learn's formula (not run against it)
	check("hand", NMI([]int{0, 0, 0, 1}, []int{0, 0, 1, 1}), want, 1e-12)
	check("symmetric", NMI([]int{0, 0, 1, 1}, []int{0, 0, 0, 1}), want, 1e-12)
	check("hand value", want, 0.3437110184854508, 1e-12)
	if got := NMI([]int{1}, []int{-1}); !math.IsNaN(got) {
		t.Errorf("NMI with no truth = %v, want NaN", got)
	}
}

func TestLabelEncoder(t *testing.T) {
	var e LabelEncoder
	e.Fit([]string{"b", "a", "c", "a", "B"})
	if got, want := e.Classes(), []string{"B", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("Classes = %q, want %q", got, want)
	}
	y, err := e.Encode(nil, []string{"c", "a", "B"})
	if err != nil || !slices.Equal(y, []int{3, 1, 0}) {
		t.Fatalf("Encode = %v, %v; want [3 1 0]", y, err)
	}
	s, err := e.Decode(nil, y)
	if err != nil || !slices.Equal(s, []string{"c", "a", "B"}) {
		t.Fatalf("Decode = %q, %v", s, err)
	}
	if _, err := e.Encode(nil, []string{"a", "z"}); err == nil {
		t.Error("Encode of an unknown label: no error")
	}
	if _, err := e.Decode(nil, []int{-1}); err == nil {
		t.Error("Decode of −1: no error")
	}
	if _, err := e.Decode(nil, []int{4}); err == nil {
		t.Error("Decode of 4 with 4 classes: no error")
	}
}

func TestSplit(t *testing.T) {
	// Classes 0 and 1 (30 and 31 rows, interleaved), class 2 (15 rows), and
	// two rows with unknown labels.
	var y []int
	for i := range 76 {
		switch {
		case i < 45:
			y = append(y, i%2)
		case i < 60:
			y = append(y, 2)
		default:
			y = append(y, i%2)
		}
	}
	y = append(y, -1, -1)
	count := map[int]int{}
	for _, c := range y {
		count[c]++
	}
	const l = 3
	s, err := Split(y, 1.0/3, l, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Disjoint and covering: every row is in exactly one of Test, Labeled, Unlabeled.
	seen := make([]int, len(y))
	for _, part := range [][]int{s.Test, s.Labeled, s.Unlabeled} {
		if !slices.IsSorted(part) {
			t.Errorf("unsorted part %v", part)
		}
		for _, i := range part {
			seen[i]++
		}
	}
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("row %d is in %d parts", i, k)
		}
	}
	train := append(slices.Clone(s.Labeled), s.Unlabeled...)
	slices.Sort(train)
	if !slices.Equal(train, s.Train) {
		t.Errorf("Train ≠ Labeled ∪ Unlabeled")
	}
	labeled, test := map[int]int{}, map[int]int{}
	for _, i := range s.Labeled {
		labeled[y[i]]++
	}
	for _, i := range s.Test {
		test[y[i]]++
	}
	for c, n := range count {
		if c == -1 {
			if labeled[c] != 0 || test[c] != 0 {
				t.Errorf("rows with y = −1 in Labeled or Test")
			}
			continue
		}
		if labeled[c] != l {
			t.Errorf("class %d: %d labeled, want %d", c, labeled[c], l)
		}
		if want := int(math.Round(float64(n) / 3)); test[c] != want {
			t.Errorf("class %d: %d in test, want %d", c, test[c], want)
		}
	}
	// Same seed, same split; another seed, another split.
	s2, _ := Split(y, 1.0/3, l, rand.NewPCG(1, 1))
	if !slices.Equal(s.Test, s2.Test) || !slices.Equal(s.Labeled, s2.Labeled) {
		t.Error("same seed gave a different split")
	}
	s3, _ := Split(y, 1.0/3, l, rand.NewPCG(2, 1))
	if slices.Equal(s.Test, s3.Test) && slices.Equal(s.Labeled, s3.Labeled) {
		t.Error("seeds 1 and 2 gave the same split")
	}
	// Class 2 (15 rows, 5 held out) has a pool of 10: L = 9 fits, L = 10 does not.
	if _, err := Split(y, 1.0/3, 9, nil); err != nil {
		t.Errorf("L = 9: %v", err)
	}
	if _, err := Split(y, 1.0/3, 10, nil); err == nil {
		t.Error("L = 10 with a pool of 10: no error")
	}
	for _, f := range []float64{-0.1, 1, math.NaN()} {
		if _, err := Split(y, f, 1, nil); err == nil {
			t.Errorf("test fraction %v: no error", f)
		}
	}
}

func BenchmarkAssign100x100(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	m := mat.NewDense(100, 100, nil)
	for i := range 100 {
		for j := range 100 {
			m.Set(i, j, rnd.Float64())
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Assign(m)
	}
}

func BenchmarkNMI10000(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	p, q := make([]int, 10000), make([]int, 10000)
	for i := range p {
		p[i], q[i] = rnd.IntN(10), rnd.IntN(10)
	}
	b.ReportAllocs()
	for b.Loop() {
		NMI(p, q)
	}
}
