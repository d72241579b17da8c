package model

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// dpcaProblem returns n random non-negative samples of dimension d, three
// classes with every third sample labeled, and must- and cannot-links
// that reach unlabeled samples.
func dpcaProblem(n, d int, seed uint64) (x *mat.Dense, labels []int, must, cannot [][2]int) {
	rnd := rand.New(rand.NewPCG(seed, seed))
	x = mat.NewDense(n, d, nil)
	labels = make([]int, n)
	for i := 0; i < n; i++ {
		c := i % 3
		for j := 0; j < d; j++ {
			v := rnd.Float64()
			if j%3 == c { // a class-dependent shift, so that labels matter
				v += 1
			}
			if rnd.Float64() < 0.3 {
				v = 0
			}
			x.Set(i, j, v)
		}
		labels[i] = -1
		if i%3 == 0 || i < 9 {
			labels[i] = c
		}
	}
	must = [][2]int{{1, 4}, {2, 5}, {10, 13}}
	cannot = [][2]int{{1, 2}, {11, 13}, {14, 16}}
	return x, labels, must, cannot
}

// TestDPCAGramMatchesPrimal checks that the Gram form finds the primal
// form's directions and codes, with D above and below N, on dense and
// sparse data.
func TestDPCAGramMatchesPrimal(t *testing.T) {
	for _, tc := range []struct{ n, d int }{{30, 40}, {30, 12}} {
		x, labels, must, cannot := dpcaProblem(tc.n, tc.d, 1)
		fit := func(form DPCAForm, data Data) *DPCA {
			m := &DPCA{Rank: 4, Eta: 0.5, MustLink: must, CannotLink: cannot, Form: form}
			if err := m.Fit(data, labels); err != nil {
				t.Fatalf("%d×%d %v: %v", tc.n, tc.d, form, err)
			}
			if got := m.FittedForm(); got != form {
				t.Fatalf("FittedForm() = %v, want %v", got, form)
			}
			return m
		}
		p := fit(DPCAPrimal, DenseRows(x))
		for name, g := range map[string]*DPCA{
			"dense":  fit(DPCAGram, DenseRows(x)),
			"sparse": fit(DPCAGram, SparseRows(sparse.FromDense(x))),
		} {
			for c := 0; c < 4; c++ {
				// Up to sign: both forms fix it the same way, but a tie
				// in the largest entry could flip it.
				dot := mat.Dot(p.Basis().ColView(c), g.Basis().ColView(c))
				// 1e-9: the two eigensolvers' rounding on well-separated
				// eigenvalues of a 30-sample problem.
				if math.Abs(math.Abs(dot)-1) > 1e-9 {
					t.Errorf("%d×%d %s: direction %d: |⟨w_primal, w_gram⟩| = %.12f, want 1", tc.n, tc.d, name, c, math.Abs(dot))
				}
				pc, gc := p.Codes().ColView(c), g.Codes().ColView(c)
				s := math.Copysign(1, dot)
				for i := 0; i < tc.n; i++ {
					if a, b := pc.AtVec(i), s*gc.AtVec(i); math.Abs(a-b) > 1e-8*(1+math.Abs(a)) {
						t.Fatalf("%d×%d %s: code (%d, %d): primal %g, gram %g", tc.n, tc.d, name, i, c, a, b)
					}
				}
			}
		}
	}
}

func TestDPCAAutoForm(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		want DPCAForm
	}{{30, 40, DPCAGram}, {30, 12, DPCAPrimal}} {
		x, labels, _, _ := dpcaProblem(tc.n, tc.d, 2)
		m := &DPCA{Rank: 3}
		if err := m.Fit(DenseRows(x), labels); err != nil {
			t.Fatal(err)
		}
		if got := m.FittedForm(); got != tc.want {
			t.Errorf("%d×%d: form %v, want %v", tc.n, tc.d, got, tc.want)
		}
	}
	// The Gram form cannot give more directions than the data's rank.
	x := mat.NewDense(4, 10, nil)
	for i := 0; i < 4; i++ {
		x.Set(i, i, 1)
	}
	if err := (&DPCA{Rank: 6, Form: DPCAGram}).Fit(DenseRows(x), nil); err == nil {
		t.Errorf("rank 6 on rank-4 data: no error")
	}
}

// wideSparse returns n samples of dimension d with nnz entries each.
func wideSparse(n, d, nnz int, seed uint64) *sparse.CSR {
	rnd := rand.New(rand.NewPCG(seed, seed))
	b := sparse.NewBuilder(n, d)
	for i := 0; i < n; i++ {
		seen := map[int]bool{}
		for len(seen) < nnz {
			j := rnd.IntN(d)
			if !seen[j] {
				seen[j] = true
				b.Add(i, j, rnd.Float64())
			}
		}
	}
	return b.CSR()
}

// TestDPCAGramWideSparse fits DPCA on 10⁵ sparse columns, where the primal
// form's scatter alone would take 80 GB, and reports the bytes allocated.
func TestDPCAGramWideSparse(t *testing.T) {
	const n, d = 400, 100_000
	x := wideSparse(n, d, 30, 3)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = -1
		if i%10 == 0 {
			labels[i] = i % 4
		}
	}
	m := &DPCA{Rank: 8}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := m.Fit(SparseRows(x), labels); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("DPCA %d samples × %d sparse features (nnz %d), rank 8, form %v: %.1f MB allocated in Fit, heap in use after %.1f MB",
		n, d, x.NNZ(), m.FittedForm(), float64(alloc)/1e6, float64(after.HeapInuse)/1e6)
	// The total allocated bounds the peak. 64 MB: a few N×N matrices
	// (1.3 MB each), W (D×K, 6.4 MB) and a D-vector; one D×D scatter
	// would be 8·10¹⁰ bytes.
	if alloc > 64<<20 {
		t.Errorf("Fit allocated %d bytes, want < 64 MiB", alloc)
	}
	if m.FittedForm() != DPCAGram {
		t.Errorf("form %v, want gram", m.FittedForm())
	}
}

func BenchmarkDPCAGram400x100000(b *testing.B) {
	x := SparseRows(wideSparse(400, 100_000, 30, 3))
	b.ReportAllocs()
	for b.Loop() {
		if err := (&DPCA{Rank: 8}).Fit(x, nil); err != nil {
			b.Fatal(err)
		}
	}
}
