package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scalarAxpy is the loop the kernels replace, as the graph term wrote it.
func scalarAxpy(a float64, x, y []float64) {
	for i := range y {
		y[i] += a * x[i]
	}
}

func randSlice(rnd *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		// Mixed magnitudes and signs, so that a different rounding order
		// would show in the last bits.
		s[i] = (rnd.Float64() - 0.3) * math.Pow(10, float64(rnd.IntN(12)-6))
	}
	return s
}

// TestAxpyBits checks both kernels against the scalar loops bit for bit,
// at every length up to 70 and at offsets that unalign the vectors.
func TestAxpyBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 70; n++ {
		for off := 0; off < 3; off++ {
			x := randSlice(rnd, n+off+2)[off:]
			y := randSlice(rnd, n+off)[off:]
			a := randSlice(rnd, 1)[0]
			want := append([]float64(nil), y...)
			scalarAxpy(a, x, want)
			got := append([]float64(nil), y...)
			Axpy(a, x, got)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("Axpy n=%d off=%d: y[%d] = %v, want %v", n, off, i, got[i], want[i])
				}
			}

			var c [4]float64
			xs := make([][]float64, 4)
			for j := range xs {
				c[j] = randSlice(rnd, 1)[0]
				xs[j] = randSlice(rnd, n+off+1)[off:]
			}
			want = append(want[:0], y...)
			for j := range xs {
				scalarAxpy(c[j], xs[j], want)
			}
			got = append(got[:0], y...)
			Axpy4(got, &c, xs[0], xs[1], xs[2], xs[3])
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("Axpy4 n=%d off=%d: y[%d] = %v, want %v", n, off, i, got[i], want[i])
				}
			}
			// Nothing past len(y) is written.
			if n > 0 {
				full := y[:n:n]
				Axpy(a, x, full[:n-1])
				if math.Float64bits(full[n-1]) != math.Float64bits(y[n-1]) {
					t.Fatalf("Axpy n=%d wrote past len(y)", n)
				}
			}
		}
	}
}

func TestAxpyShortX(t *testing.T) {
	for name, f := range map[string]func(){
		"Axpy":  func() { Axpy(1, make([]float64, 3), make([]float64, 4)) },
		"Axpy4": func() { x := make([]float64, 4); Axpy4(make([]float64, 5), &[4]float64{}, x, x, x, x) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with x shorter than y did not panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkAxpy50 times a row of K = 50, the graph term's unit of work:
// one Axpy per entry, or Axpy4 per four entries, against the scalar loop.
func BenchmarkAxpy50(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	x := [4][]float64{randSlice(rnd, 50), randSlice(rnd, 50), randSlice(rnd, 50), randSlice(rnd, 50)}
	y := randSlice(rnd, 50)
	b.Run("scalar", func(b *testing.B) {
		for b.Loop() {
			for j := range x {
				scalarAxpy(1e-9, x[j], y)
			}
		}
	})
	b.Run("Axpy", func(b *testing.B) {
		for b.Loop() {
			for j := range x {
				Axpy(1e-9, x[j], y)
			}
		}
	})
	b.Run("Axpy4", func(b *testing.B) {
		a := [4]float64{1e-9, 1e-9, 1e-9, 1e-9}
		for b.Loop() {
			Axpy4(y, &a, x[0], x[1], x[2], x[3])
		}
	})
}

// TestPrefetch checks that Prefetch, a hint, reads nothing past x and
// changes nothing, at every length up to a few cache lines.
func TestPrefetch(t *testing.T) {
	buf := make([]float64, 64)
	for i := range buf {
		buf[i] = float64(i)
	}
	for n := 0; n <= 40; n++ {
		Prefetch(buf[3 : 3+n])
	}
	for i, x := range buf {
		if x != float64(i) {
			t.Fatalf("buf[%d] = %v after Prefetch", i, x)
		}
	}
}

// TestSumRowsBits checks SumRows against one scalar Axpy per entry, bit
// for bit, for widths up to 70 (so more than one block of 64 columns),
// with empty rows, row ranges that start inside the matrix, strides wider
// than the rows, and sentinels around the rows of dst that must stay
// untouched.
func TestSumRowsBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	const n, cols, ldv = 40, 25, 73
	ptr := []int32{0}
	var idx []int32
	var val []float64
	for r := range n {
		for range rnd.IntN(25) * min(r%5, 1) { // every fifth row empty
			idx = append(idx, int32(rnd.IntN(cols)))
			val = append(val, randSlice(rnd, 1)[0])
		}
		ptr = append(ptr, int32(len(idx)))
	}
	s := NewRows(cols, ptr, idx, val)
	v := randSlice(rnd, cols*ldv)
	const sentinel = -7.5
	for m := 0; m <= 70; m++ {
		for _, rr := range [][2]int{{0, n}, {3, 17}, {9, 10}, {5, 5}} {
			r0, r1 := rr[0], rr[1]
			ldd := m + 3
			dst := make([]float64, (r1-r0)*ldd)
			for i := range dst {
				if i%ldd < m {
					dst[i] = randSlice(rnd, 1)[0]
				} else {
					dst[i] = sentinel
				}
			}
			want := append([]float64(nil), dst...)
			w := randSlice(rnd, 1)[0]
			for r := r0; r < r1; r++ {
				for p := ptr[r]; p < ptr[r+1]; p++ {
					j := int(idx[p])
					scalarAxpy(w*val[p], v[j*ldv:j*ldv+m], want[(r-r0)*ldd:(r-r0)*ldd+m])
				}
			}
			SumRows(dst, ldd, m, w, s, r0, r1, v, ldv)
			for i := range dst {
				if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%d columns, rows [%d, %d): entry %d is %v, want %v", m, r0, r1, i, dst[i], want[i])
				}
			}
		}
	}
}

// TestRowsChecks checks that a malformed matrix or call panics before a
// kernel could read or write out of bounds.
func TestRowsChecks(t *testing.T) {
	ok := NewRows(3, []int32{0, 1, 2}, []int32{0, 2}, []float64{1, 1})
	v := make([]float64, 3*8)
	for name, f := range map[string]func(){
		"index":    func() { NewRows(3, []int32{0, 1}, []int32{3}, []float64{1}) },
		"negative": func() { NewRows(3, []int32{0, 1}, []int32{-1}, []float64{1}) },
		"order":    func() { NewRows(3, []int32{0, 2, 1}, []int32{0, 1}, []float64{1, 1}) },
		"end":      func() { NewRows(3, []int32{0, 1}, []int32{0, 1}, []float64{1, 1}) },
		"values":   func() { NewRows(3, []int32{0, 1}, []int32{0}, nil) },
		"v":        func() { SumRows(make([]float64, 16), 8, 8, 1, ok, 0, 2, v[:20], 8) },
		"dst":      func() { SumRows(make([]float64, 15), 8, 8, 1, ok, 0, 2, v, 8) },
		"rows":     func() { SumRows(make([]float64, 24), 8, 8, 1, ok, 1, 3, v, 8) },
		"ldd":      func() { SumRows(make([]float64, 24), 7, 8, 1, ok, 0, 2, v, 8) },
		"ldv":      func() { SumRows(make([]float64, 24), 8, 8, 1, ok, 0, 2, v, 7) },
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

// TestMulDivBits checks MulDiv against the scalar rule bit for bit (NaN
// as NaN) at every length up to 40, with negative, zero, signed-zero,
// tiny, infinite and NaN entries among the ordinary ones.
func TestMulDivBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	special := []float64{0, math.Copysign(0, -1), -1, 1e-300, 1e-20, math.Inf(1), math.NaN()}
	pick := func() float64 {
		if rnd.IntN(3) == 0 {
			return special[rnd.IntN(len(special))]
		}
		return rnd.Float64() * 10
	}
	const eps = 1e-16
	for n := 0; n <= 40; n++ {
		for range 20 {
			w, num, den := make([]float64, n), make([]float64, n+1), make([]float64, n+2)
			for i := range den {
				if i < n {
					w[i] = pick()
				}
				if i <= n {
					num[i] = pick()
				}
				den[i] = pick()
			}
			want := append([]float64(nil), w...)
			mulDivGeneric(want, num, den, eps)
			got := append([]float64(nil), w...)
			MulDiv(got, num, den, eps)
			for i := range got {
				same := math.Float64bits(got[i]) == math.Float64bits(want[i]) || (math.IsNaN(got[i]) && math.IsNaN(want[i]))
				if !same {
					t.Fatalf("n = %d, entry %d: w %v, num %v, den %v: got %v, want %v", n, i, w[i], num[i], den[i], got[i], want[i])
				}
			}
		}
	}
}

// TestMulDivDiagBits checks MulDivDiag against its scalar rule and
// against the passes it stands for (each ps row times w added to den,
// each qs row to num, then MulDiv) bit for bit, NaN as NaN, at every
// length up to 40 with 0 to 3 rows of factors, special entries among the
// ordinary ones.
func TestMulDivDiagBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	special := []float64{0, math.Copysign(0, -1), -1, 1e-300, 1e-20, math.Inf(1), math.NaN()}
	pick := func() float64 {
		if rnd.IntN(4) == 0 {
			return special[rnd.IntN(len(special))]
		}
		return rnd.Float64()*10 - 1
	}
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = pick()
		}
		return x
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	const eps = 1e-16
	for n := 0; n <= 40; n++ {
		for rows := 0; rows <= 3; rows++ {
			for range 10 {
				w, num, den, ps, qs := fill(n), fill(n+1), fill(n+2), fill(rows*n), fill(rows*n)
				want := append([]float64(nil), w...)
				mulDivDiagGeneric(want, num, den, ps, qs, rows, eps)
				got := append([]float64(nil), w...)
				MulDivDiag(got, num, den, ps, qs, rows, eps)
				// The passes: den and num built whole, then MulDiv.
				d, m := append([]float64(nil), den[:n]...), append([]float64(nil), num[:n]...)
				for r := range rows {
					for i, x := range w {
						d[i] += ps[r*n+i] * x
						m[i] += qs[r*n+i] * x
					}
				}
				passes := append([]float64(nil), w...)
				MulDiv(passes, m, d, eps)
				for i := range got {
					if !same(got[i], want[i]) || !same(got[i], passes[i]) {
						t.Fatalf("n = %d, %d rows, entry %d: got %v, scalar %v, passes %v", n, rows, i, got[i], want[i], passes[i])
					}
				}
			}
		}
	}
}

// TestDot32Bits checks Dot32 against its plain Go order bit for bit at
// every length up to 100 and at unaligned offsets, and against the float64
// inner product within its error bound.
func TestDot32Bits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 100; n++ {
		for off := 0; off < 3; off++ {
			x := make([]float32, n+off)[off:]
			y := make([]float32, n+off+1)[off:]
			var exact, abs float64
			for i := range x {
				x[i] = float32((rnd.Float64() - 0.3) * math.Pow(10, float64(rnd.IntN(8)-4)))
				y[i] = float32((rnd.Float64() - 0.3) * math.Pow(10, float64(rnd.IntN(8)-4)))
				exact += float64(x[i]) * float64(y[i])
				abs += math.Abs(float64(x[i]) * float64(y[i]))
			}
			got := Dot32(x, y)
			var want float32
			if n > 0 {
				want = dot32Generic(x, y[:n])
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("Dot32 n=%d off=%d: %v, plain Go %v", n, off, got, want)
			}
			u := float64(n) * 0x1p-24
			if d := math.Abs(float64(got) - exact); d > u/(1-u)*abs+1e-300 {
				t.Fatalf("Dot32 n=%d: error %g above the bound %g", n, d, u/(1-u)*abs)
			}
		}
	}
}

func BenchmarkDot32(b *testing.B) {
	x, y := make([]float32, 784), make([]float32, 784)
	for i := range x {
		x[i], y[i] = float32(i%7), float32(i%5)
	}
	b.SetBytes(2 * 4 * 784)
	for b.Loop() {
		Dot32(x, y)
	}
}

// TestDotInOrder: Dot sums from +0 in increasing index, a multiply and an
// add each: 1e16 + 1 rounds back to 1e16, so the sum of (1e16, 1, −1e16) is
// 0 in that order (1 in another), and 1·4 + 2·5 + 3·6 = 32.
func TestDotInOrder(t *testing.T) {
	if got := Dot([]float64{1e16, 1, -1e16}, []float64{1, 1, 1, 7}); got != 0 {
		t.Errorf("Dot of (1e16, 1, −1e16) with ones: %g, want 0 (summed in order)", got)
	}
	if got := Dot([]float64{1, 2, 3}, []float64{4, 5, 6}); got != 32 {
		t.Errorf("Dot: %g, want 32", got)
	}
}
