package gemm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// fma64 and fma32 are a·b + c rounded once, as the kernels' FMAs round.
func fma64(a, b, c float64) float64 { return math.FMA(a, b, c) }

// fma32 rounds a·b + c to float64 by round-to-odd, then to float32: a
// value rounded to odd in 53 bits rounds to 24 as the exact value would
// (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE TC 57(4), 2008). The
// product a·b is exact in float64; TwoSum gives the error of the sum.
func fma32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	bp := s - q
	e := (p - bp) + (q - (s - bp))
	if e != 0 && math.Float64bits(s)&1 == 0 {
		// s is even and inexact: its neighbor towards a·b + c is odd.
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// fmaOf returns fma64 or fma32 for T.
func fmaOf[T float]() func(a, b, c T) T {
	var f any
	switch any(*new(T)).(type) {
	case float64:
		f = fma64
	case float32:
		f = fma32
	}
	return f.(func(a, b, c T) T)
}

// fmaDot is Σ_t x[t·sx]·y[t·sy] over t < n as a chain of FMAs from zero in
// increasing t: the kernels' sum, bit for bit.
func fmaDot[T float](n int, x []T, sx int, y []T, sy int) T {
	fma := fmaOf[T]()
	var s T
	for t := range n {
		s = fma(x[t*sx], y[t*sy], s)
	}
	return s
}

// randMat returns r×c entries of T in [−0.2, 0.8) with stride c+pad, the
// padding (and pad entries beyond the last row) set to sentinel.
func randMat[T float](rnd *rand.Rand, r, c, pad int, sentinel T) matrix[T] {
	m := matrix[T]{r, c, c + pad, make([]T, r*(c+pad)+pad)}
	for i := range m.data {
		m.data[i] = sentinel
	}
	for i := range r {
		for j := range c {
			m.data[i*m.stride+j] = T(rnd.Float64() - 0.2)
		}
	}
	return m
}

// checkProduct compares c (r×k) with want(i, j): bit for bit when exact,
// else within γ_d·Σ|products| (mag(i, j)), which bounds the error of a
// float sum of d products in any order, fused or not; it checks that
// c's padding and the entries past its last row still hold sentinel.
func checkProduct[T float](t *testing.T, name string, c matrix[T], sentinel T, exact bool, d int, want, mag func(i, j int) float64) {
	t.Helper()
	u := 0x1p-53
	if _, ok := any(sentinel).(float32); ok {
		u = 0x1p-24
	}
	for l, got := range c.data {
		i, j := l/c.stride, l%c.stride
		if i >= c.rows || j >= c.cols {
			if got != sentinel {
				t.Fatalf("%s: (%d, %d) past c overwritten with %v", name, i, j, got)
			}
			continue
		}
		w := want(i, j)
		if exact {
			if float64(got) != w {
				t.Fatalf("%s: (%d, %d) = %v, want %v bit for bit", name, i, j, got, w)
			}
			continue
		}
		if tol := 2 * float64(d+1) * u * mag(i, j); math.Abs(float64(got)-w) > tol {
			t.Fatalf("%s: (%d, %d) = %v, want %v within %g", name, i, j, got, w, tol)
		}
	}
}

// testMulPacked checks mulPacked in T on rows 0–13 against widths 1–70,
// x and c with and without padding, bit for bit against chains of FMAs
// where kernels run (Fast) and to rounding against plain sums everywhere.
func testMulPacked[T float](t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	var p packed[T]
	const sentinel = -5
	for _, d := range []int{1, 3, 17, 64} {
		for k := 1; k <= 70; k++ {
			for rows := range 14 {
				pad := (rows + k) % 3
				x := randMat[T](rnd, rows, d, pad, 0)
				bt := randMat[T](rnd, k, d, 2*pad, 0)
				c := randMat[T](rnd, rows, k, pad+1, sentinel)
				for i := range rows {
					for j := range k {
						c.data[i*c.stride+j] = T(math.Inf(1)) // overwritten
					}
				}
				p.packT(bt)
				mulPacked("test", c, x, &p)
				name := fmt.Sprintf("%T %d×%d·(%d×%d)ᵀ", T(0), rows, d, k, d)
				checkProduct(t, name, c, sentinel, Fast, d,
					func(i, j int) float64 {
						if Fast {
							return float64(fmaDot(d, x.data[i*x.stride:], 1, bt.data[j*bt.stride:], 1))
						}
						var s float64
						for l := range d {
							s += float64(x.data[i*x.stride+l]) * float64(bt.data[j*bt.stride+l])
						}
						return s
					},
					func(i, j int) float64 {
						var s float64
						for l := range d {
							s += math.Abs(float64(x.data[i*x.stride+l]) * float64(bt.data[j*bt.stride+l]))
						}
						return s
					})
			}
		}
	}
}

func TestMulPackedShapes64(t *testing.T) { testMulPacked[float64](t) }
func TestMulPackedShapes32(t *testing.T) { testMulPacked[float32](t) }

// TestMulXTAShapes checks MulXTA on rows 0–13 and blocks of rows beyond
// xtaRows against widths 1–70, as testMulPacked does.
func TestMulXTAShapes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	var ws Workspace
	const sentinel = -5
	for _, n := range []int{0, 1, 2, 5, 6, 7, 13, xtaRows + 1, 2*xtaRows + 7} {
		for _, d := range []int{1, 5, 6, 13} {
			for k := 1; k <= 70; k++ {
				pad := (n + d + k) % 2 * 3
				x := randMat[float64](rnd, n, d, pad, 0)
				a := randMat[float64](rnd, n, k, pad, 0)
				c := randMat[float64](rnd, d, k, 2, sentinel)
				MulXTA(blas64.General{Rows: d, Cols: k, Stride: c.stride, Data: c.data},
					blas64.General{Rows: n, Cols: d, Stride: x.stride, Data: x.data},
					blas64.General{Rows: n, Cols: k, Stride: a.stride, Data: a.data}, &ws)
				name := fmt.Sprintf("(%d×%d)ᵀ·%d×%d", n, d, n, k)
				checkProduct(t, name, c, sentinel, Fast, n,
					func(i, j int) float64 {
						if n == 0 {
							return 0
						}
						if Fast {
							return fmaDot(n, x.data[i:], x.stride, a.data[j:], a.stride)
						}
						var s float64
						for l := range n {
							s += x.data[l*x.stride+i] * a.data[l*a.stride+j]
						}
						return s
					},
					func(i, j int) float64 {
						var s float64
						for l := range n {
							s += math.Abs(x.data[l*x.stride+i] * a.data[l*a.stride+j])
						}
						return s
					})
			}
		}
	}
}

// TestFMA32 checks fma32 against exact sums rounded once, and on a
// midpoint case that plain double rounding gets wrong.
func TestFMA32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		// Exponents 2⁻³⁰…2⁰ apart, signs mixed, so that sums round.
		r := func() float32 {
			return float32((rnd.Float64() - 0.3) * math.Ldexp(1, -rnd.IntN(30)))
		}
		a, b, c := r(), r(), r()
		exact := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		exact.Mul(exact, new(big.Float).SetFloat64(float64(b)))
		exact.Add(exact, new(big.Float).SetFloat64(float64(c)))
		want, _ := exact.Float32() // nearest, ties to even
		if got := fma32(a, b, c); got != want {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
	// a·b = 2⁻²⁴(1 + 2⁻¹¹)(1 − 2⁻¹¹ + 2⁻²²) = 2⁻²⁴ + 2⁻⁵⁷, so 1 + a·b lies
	// just above the float32 midpoint 1 + 2⁻²⁴ and rounds up; through a
	// float64 FMA it rounds to the midpoint, then to even (1).
	a, b := float32(1+0x1p-11), float32(0x1p-24*(1-0x1p-11+0x1p-22))
	if twice := float32(math.FMA(float64(a), float64(b), 1)); twice != 1 {
		t.Fatalf("the midpoint case does not bite: float64 FMA gives %v", twice)
	}
	if got, want := fma32(a, b, 1), float32(1+0x1p-23); got != want {
		t.Errorf("fma32 near a midpoint = %v, want %v", got, want)
	}
}

// TestTransposeTo checks transposeTo on rows 0–19 (eight at a time and the
// rest) by columns 0–70 (blocks of columns and the rest), with strides wider
// than the rows, against the plain loop; dst's other entries keep a
// sentinel.
func TestTransposeTo(t *testing.T) {
	for rows := range 20 {
		for cols := range 71 {
			lds, ldd := cols+3, rows+2
			src := make([]float32, rows*lds)
			for i := range src {
				src[i] = float32(i)
			}
			dst := make([]float32, cols*ldd+1)
			for i := range dst {
				dst[i] = -1
			}
			transposeTo(dst, ldd, src, lds, rows, cols)
			for l, got := range dst {
				j, i := l/ldd, l%ldd
				want := float32(-1)
				if j < cols && i < rows {
					want = src[i*lds+j]
				}
				if got != want {
					t.Fatalf("%d×%d: dst[%d] (row %d, column %d) = %v, want %v", rows, cols, l, j, i, got, want)
				}
			}
		}
	}
}
