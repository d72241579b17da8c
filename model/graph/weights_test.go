package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func isSymmetric(m mat.Matrix) bool {
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			if m.At(i, j) != m.At(j, i) {
				return false
			}
		}
	}
	return true
}

func TestSymmetrization(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randData(60, 3, rng)
	g, err := KNN{K: 4}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []Scheme{Binary, HeatKernel, DotProduct, CosineSimilarity} {
		w := map[Symmetrize]*mat.Dense{}
		for _, sym := range []Symmetrize{Max, Mean, Mutual} {
			s := g.Weights(Weighting{Scheme: sc, Sym: sym})
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			w[sym] = s.ToDense()
			if !isSymmetric(w[sym]) {
				t.Fatalf("scheme %d sym %d: not symmetric", sc, sym)
			}
		}
		for i := 0; i < 60; i++ {
			nb, dist := g.Neighbors(i)
			for j := 0; j < 60; j++ {
				out := slices.Contains(nb, j)
				jn, _ := g.Neighbors(j)
				in := slices.Contains(jn, i)
				mx, mn, mu := w[Max].At(i, j), w[Mean].At(i, j), w[Mutual].At(i, j)
				switch {
				case out && in:
					if mx == 0 || mn != mx || mu != mx {
						t.Fatalf("mutual pair (%d,%d): max %v mean %v mutual %v", i, j, mx, mn, mu)
					}
				case out || in:
					if mx == 0 || mn != mx/2 || mu != 0 {
						t.Fatalf("one-way pair (%d,%d): max %v mean %v mutual %v", i, j, mx, mn, mu)
					}
				default:
					if mx != 0 || mn != 0 || mu != 0 {
						t.Fatalf("non-neighbours (%d,%d) joined", i, j)
					}
				}
			}
			// Weight values against their definitions.
			j := nb[0]
			a, b := x.RawRowView(i), x.RawRowView(j)
			var want float64
			switch sc {
			case Binary:
				want = 1
			case HeatKernel:
				// t defaults to the mean neighbour distance.
				var s float64
				for p := 0; p < 60; p++ {
					_, d := g.Neighbors(p)
					for _, v := range d {
						s += v
					}
				}
				tt := s / (60 * 4)
				want = math.Exp(-dist[0] * dist[0] / (2 * tt * tt))
			case DotProduct:
				want = mat.Dot(mat.NewVecDense(3, a), mat.NewVecDense(3, b))
			case CosineSimilarity:
				want = mat.Dot(mat.NewVecDense(3, a), mat.NewVecDense(3, b)) / (mat.Norm(mat.NewVecDense(3, a), 2) * mat.Norm(mat.NewVecDense(3, b), 2))
			}
			// 1e-12: a few roundings in sums of 3 terms of order 1.
			if got := w[Max].At(i, j); math.Abs(got-want) > 1e-12 {
				t.Fatalf("scheme %d: S(%d,%d) = %v, want %v", sc, i, j, got, want)
			}
		}
	}
	// An explicit heat width.
	s := g.Weights(Weighting{Scheme: HeatKernel, HeatT: 0.5})
	nb, d := g.Neighbors(5)
	// 1e-14: exp of the same argument up to a rounding.
	if got, want := s.At(5, nb[0]), math.Exp(-d[0]*d[0]/0.5); math.Abs(got-want) > 1e-14 {
		t.Errorf("heat t=0.5: %v, want %v", got, want)
	}
}

func TestLaplacian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randData(30, 4, rng)
	g, err := KNN{K: 3}.Dense(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []Scheme{Binary, HeatKernel} {
		s := g.Weights(Weighting{Scheme: sc})
		l := Laplacian(s)
		if err := l.Validate(); err == nil {
			t.Error("L has no negative entries")
		}
		ld := l.ToDense()
		sd := s.ToDense()
		for i := 0; i < 30; i++ {
			var sum float64
			for j := 0; j < 30; j++ {
				sum += ld.At(i, j)
			}
			// 1e-12: the row sum cancels a degree of order k.
			if math.Abs(sum) > 1e-12 {
				t.Fatalf("row %d of L sums to %v", i, sum)
			}
		}
		deg := Degrees(s, nil)
		for trial := 0; trial < 5; trial++ {
			v := make([]float64, 30)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			xv := mat.NewVecDense(30, v)
			quad := mat.Inner(xv, ld, xv)
			var half float64
			for i := 0; i < 30; i++ {
				for j := 0; j < 30; j++ {
					half += sd.At(i, j) * (v[i] - v[j]) * (v[i] - v[j])
				}
			}
			half /= 2
			// 1e-10: two sums of ~100 terms of order 10.
			if math.Abs(quad-half) > 1e-10 || quad < -1e-12 {
				t.Fatalf("xᵀLx = %v, ½ΣS(xi−xj)² = %v", quad, half)
			}
		}
		var es mat.EigenSym
		if !es.Factorize(mat.NewSymDense(30, ld.RawMatrix().Data), false) {
			t.Fatal("eigen failed")
		}
		// −1e-12: the zero eigenvalue computed with rounding.
		if min := slices.Min(es.Values(nil)); min < -1e-12 {
			t.Errorf("L has eigenvalue %v < 0", min)
		}
		nl := NormalizedLaplacian(s).ToDense()
		for i := 0; i < 30; i++ {
			// diag of I − D^{−½}SD^{−½} is 1 on a graph with no self-loops.
			if nl.At(i, i) != 1 {
				t.Fatalf("normalized L(%d,%d) = %v", i, i, nl.At(i, i))
			}
			for j := 0; j < 30; j++ {
				if i != j {
					want := -sd.At(i, j) / math.Sqrt(deg[i]*deg[j])
					if math.Abs(nl.At(i, j)-want) > 1e-15 {
						t.Fatalf("normalized L(%d,%d) = %v, want %v", i, j, nl.At(i, j), want)
					}
				}
			}
		}
	}
}
