package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// tieData returns n×d rows with small integer values (many exact distance
// ties) and some duplicated rows.
func tieData(n, d int, rng *rand.Rand) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		if i > 2 && rng.IntN(5) == 0 {
			x.SetRow(i, x.RawRowView(rng.IntN(i))) // duplicate
			continue
		}
		for j := 0; j < d; j++ {
			x.Set(i, j, float64(rng.IntN(3)))
		}
		x.Set(i, rng.IntN(d), 1+float64(rng.IntN(3))) // no zero rows (cosine)
	}
	return x
}

func randData(n, d int, rng *rand.Rand) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.Float64())
		}
	}
	return x
}

// brute returns the k nearest of each row by a plain double loop, ranked by
// (distance, index). For integer-valued rows all arithmetic is exact int64
// (cosines compared by cross-multiplication), so exact ties are ties here
// too; other rows use float64.
func brute(x mat.Matrix, k int, m Metric) [][]int {
	n, d := x.Dims()
	rows := make([][]float64, n)
	integer := true
	for i := range rows {
		rows[i] = mat.Row(nil, i, x)
		for _, v := range rows[i] {
			integer = integer && v == math.Trunc(v) && math.Abs(v) < 1<<10
		}
	}
	type c struct {
		j        int
		num, den int64   // integer cosine key: num/den = sgn·dot²/‖b‖² (larger is nearer)
		f        float64 // float key, smaller is nearer
	}
	nearer := func(a, b c) bool {
		if integer && m == Cosine {
			l, r := a.num*b.den, b.num*a.den
			return l > r || (l == r && a.j < b.j)
		}
		return a.f < b.f || (a.f == b.f && a.j < b.j)
	}
	out := make([][]int, n)
	for i := 0; i < n; i++ {
		var cs []c
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			var dot, nb, sq float64
			for l := 0; l < d; l++ {
				dot += rows[i][l] * rows[j][l]
				nb += rows[j][l] * rows[j][l]
				t := rows[i][l] - rows[j][l]
				sq += t * t
			}
			e := c{j: j, f: sq}
			if m == Cosine {
				var na float64
				for l := 0; l < d; l++ {
					na += rows[i][l] * rows[i][l]
				}
				e.f = -dot / math.Sqrt(na*nb)
				e.num, e.den = int64(dot)*int64(math.Abs(dot)), int64(nb)
			}
			cs = append(cs, e)
		}
		sort.Slice(cs, func(a, b int) bool { return nearer(cs[a], cs[b]) })
		for _, v := range cs[:min(k, len(cs))] {
			out[i] = append(out[i], v.j)
		}
	}
	return out
}

func checkLists(t *testing.T, g *Graph, ids []int, want [][]int) {
	t.Helper()
	for a, id := range ids {
		got, _ := g.Neighbors(id)
		w := make([]int, len(want[a]))
		for p, j := range want[a] {
			w[p] = ids[j]
		}
		if !slices.Equal(got, w) {
			t.Fatalf("node %d: neighbours %v, want %v", id, got, w)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestDenseMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		k    int
		bs   int
	}{
		{"ties", tieData(300, 7, rng), 6, 64},
		{"ties-oneblock", tieData(120, 5, rng), 10, 0},
		{"random", randData(257, 33, rng), 4, 50},
		{"k1", randData(40, 3, rng), 1, 7},
	} {
		for _, m := range []Metric{Euclidean, Cosine} {
			t.Run(tc.name+"/"+m.String(), func(t *testing.T) {
				g, err := KNN{K: tc.k, Metric: m, BlockSize: tc.bs}.Dense(tc.x)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := tc.x.Dims()
				checkLists(t, g, seq(n), brute(tc.x, tc.k, m))
				// Distances are the metric's, nearest first.
				_, dist := g.Neighbors(0)
				nb, _ := g.Neighbors(0)
				want := distance(mat.Row(nil, 0, tc.x), mat.Row(nil, nb[0], tc.x), m)
				// 1e-12: a canonical sum of ≤ 33 terms of order 1 against a plain one.
				if math.Abs(dist[0]-want) > 1e-12 {
					t.Errorf("distance %v, want %v", dist[0], want)
				}
				if !slices.IsSorted(dist) {
					t.Errorf("distances not ascending: %v", dist)
				}
			})
		}
	}
}

func distance(a, b []float64, m Metric) float64 {
	var s, na, nb, dot float64
	for l := range a {
		s += (a[l] - b[l]) * (a[l] - b[l])
		na += a[l] * a[l]
		nb += b[l] * b[l]
		dot += a[l] * b[l]
	}
	if m == Cosine {
		return 1 - dot/math.Sqrt(na*nb)
	}
	return math.Sqrt(s)
}

func sparseOf(x *mat.Dense) *sparse.CSR { return sparse.FromDense(x) }

// sparseData returns TF-IDF-like rows: few non-zeros among d columns.
func sparseData(n, d, nnz int, rng *rand.Rand) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		if i > 2 && rng.IntN(6) == 0 {
			x.SetRow(i, x.RawRowView(rng.IntN(i)))
			continue
		}
		for p := 0; p < nnz; p++ {
			x.Set(i, rng.IntN(d), float64(1+rng.IntN(2)))
		}
	}
	return x
}

func TestSparseMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := sparseData(300, 60, 4, rng)
	for _, m := range []Metric{Cosine, Euclidean} {
		t.Run(m.String(), func(t *testing.T) {
			g, err := KNN{K: 5, Metric: m, BlockSize: 64}.Sparse(sparseOf(x))
			if err != nil {
				t.Fatal(err)
			}
			checkLists(t, g, seq(300), brute(x, 5, m))
			// Dense and sparse builds agree exactly.
			gd, err := KNN{K: 5, Metric: m, BlockSize: 100}.Dense(x)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 300; i++ {
				a, da := g.Neighbors(i)
				b, db := gd.Neighbors(i)
				if !slices.Equal(a, b) {
					t.Fatalf("node %d: sparse %v, dense %v", i, a, b)
				}
				for p := range da {
					// 1e-12: the same canonical sum over a different set of zeros.
					if math.Abs(da[p]-db[p]) > 1e-12 {
						t.Fatalf("node %d: sparse dist %v, dense %v", i, da, db)
					}
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	huge := mat.DenseCopyOf(x) // finite, but its square overflows
	huge.Set(1, 0, 1e200)
	for _, tc := range []struct {
		name string
		c    KNN
		x    mat.Matrix
	}{
		{"k=N", KNN{K: 5}, x},
		{"k>N", KNN{K: 9}, x},
		{"k<0", KNN{K: -1}, x},
		{"empty", KNN{K: 1}, &mat.Dense{}},
		{"nan", KNN{K: 2}, nan},
		{"squares overflow", KNN{K: 2}, huge},
		{"bad metric", KNN{K: 2, Metric: 7}, x},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				_, err = tc.c.Dense(tc.x)
			}()
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := (KNN{K: 1}).Sparse(sparse.Zeros(0, 3)); err == nil {
		t.Error("empty sparse: no error")
	}
	g, err := KNN{K: 2}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.InsertDense(nan); err == nil {
		t.Error("insert NaN: no error")
	}
	if _, err := g.InsertDense(huge); err == nil || !strings.Contains(err.Error(), "row 1's squared norm overflows") {
		t.Errorf("insert a row whose squares overflow: %v", err)
	}
	if g.Len() != 5 {
		t.Errorf("failed insert changed the graph: %d nodes", g.Len())
	}
	if _, err := g.InsertDense(mat.NewDense(1, 3, nil)); err == nil {
		t.Error("insert wrong width: no error")
	}
	if _, err := g.Remove(7); err == nil {
		t.Error("remove dead node: no error")
	}
	if _, err := g.SetLabel(1, -2); err == nil {
		t.Error("label -2: no error")
	}
}

// TestCancellation uses points far from the origin and close to each other,
// where ‖a‖² + ‖b‖² − 2aᵀb loses most digits: the exact refinement must
// still rank by the true distance.
func TestCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(200, 16, nil)
	for i := 0; i < 200; i++ {
		for j := 0; j < 16; j++ {
			x.Set(i, j, 1e4+1e-4*rng.Float64())
		}
	}
	g, err := KNN{K: 5, BlockSize: 64}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, g, seq(200), brute(x, 5, Euclidean))
}

// TestHeatKernelCosineDuplicates checks that heat-kernel weights stay
// finite on a Cosine graph of near-duplicate rows: rounding put the cosine
// of such rows above 1 and the squared distance below 0, and the default
// width t, the mean distance, came out NaN.
func TestHeatKernelCosineDuplicates(t *testing.T) {
	g, err := KNN{K: 4, Metric: Cosine}.Dense(nearTies(300, 64, rand.New(rand.NewPCG(1, 1))))
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range []Symmetrize{Max, Mean, Mutual} {
		w := g.Weights(Weighting{Scheme: HeatKernel, Sym: sym})
		for p, v := range w.Val {
			if math.IsNaN(v) || v <= 0 || v > 1 {
				t.Fatalf("symmetrized %v: weight %d is %v, want it in (0, 1]", sym, p, v)
			}
		}
	}
}

// TestCosineZeroRow checks that the cosine graph takes a zero row, which
// has no direction, as a row of cosine 0 to every other, worked by hand:
// of the rows (1, 0), (2, 0.1), (0, 0), (0, 1), (0.1, 2) at K = 2, the
// zero row's neighbours are the first two rows (every cosine 0, ties to
// the lower index) at distance 1, and the first row's are the second
// (cosine 0.9988) and the fifth (0.0499), ahead of the zero row and the
// fourth (0); a zero row inserted later is taken alike.
func TestCosineZeroRow(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{1, 0, 2, 0.1, 0, 0, 0, 1, 0.1, 2})
	g, err := KNN{K: 2, Metric: Cosine}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	ids, dist := g.Neighbors(2)
	if !slices.Equal(ids, []int{0, 1}) || dist[0] != 1 || dist[1] != 1 {
		t.Errorf("the zero row's neighbours %v at %v, want [0 1] at distance 1", ids, dist)
	}
	if ids, _ := g.Neighbors(0); !slices.Equal(ids, []int{1, 4}) {
		t.Errorf("row 0's neighbours %v, want [1 4]", ids)
	}
	added, err := g.InsertDense(mat.NewDense(1, 2, []float64{0, 0}))
	if err != nil {
		t.Fatalf("insert a zero row: %v", err)
	}
	if ids, _ := g.Neighbors(added.Added[0]); !slices.Equal(ids, []int{0, 1}) {
		t.Errorf("the inserted zero row's neighbours %v, want [0 1]", ids)
	}
}
