package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/nmfstream/nmfstream/internal/cputime"
)

// randGeneral returns an r×c matrix of entries in [0, 1) with stride
// c+pad, its padding set to sentinel.
func randGeneral(rnd *rand.Rand, r, c, pad int, sentinel float64) blas64.General {
	m := blas64.General{Rows: r, Cols: c, Stride: c + pad, Data: make([]float64, r*(c+pad))}
	for i := range r {
		for j := range c + pad {
			if j < c {
				m.Data[i*m.Stride+j] = rnd.Float64()
			} else {
				m.Data[i*m.Stride+j] = sentinel
			}
		}
	}
	return m
}

// naive returns op(a)·b summed in float64 in the plain order.
func naive(ta bool, a, b blas64.General) [][]float64 {
	r, inner := a.Rows, a.Cols
	if ta {
		r, inner = a.Cols, a.Rows
	}
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, b.Cols)
		for j := range b.Cols {
			var s float64
			for t := range inner {
				var av float64
				if ta {
					av = a.Data[t*a.Stride+i]
				} else {
					av = a.Data[i*a.Stride+t]
				}
				s += av * b.Data[t*b.Stride+j]
			}
			out[i][j] = s
		}
	}
	return out
}

// check compares c with want entry by entry (relative 1e-13 of the sum of
// magnitudes, which here is the sum itself) and checks that c's padding
// still holds the sentinel.
func check(t *testing.T, name string, c blas64.General, want [][]float64, sentinel float64) {
	t.Helper()
	for i := range c.Rows {
		for j := range c.Stride {
			got := c.Data[i*c.Stride+j]
			if j >= c.Cols {
				if got != sentinel && !(math.IsNaN(got) && math.IsNaN(sentinel)) {
					t.Fatalf("%s: padding (%d, %d) overwritten with %v", name, i, j, got)
				}
				continue
			}
			if w := want[i][j]; math.Abs(got-w) > 1e-13*math.Max(1, w) {
				t.Fatalf("%s: (%d, %d) = %v, want %v", name, i, j, got, w)
			}
		}
	}
}

var shapes = []struct{ rows, d, k int }{
	{0, 5, 3}, {4, 0, 9}, {1, 1, 1}, {2, 7, 8}, {3, 9, 9}, {4, 16, 7}, {7, 33, 50}, {61, 64, 56},
	{62, 65, 57}, {125, 130, 100}, {40, 200, 113}, {121, 784, 50},
}

func TestMulPacked(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var p Packed
	for _, s := range shapes {
		name := fmt.Sprintf("%d×%d·%d×%d", s.rows, s.d, s.d, s.k)
		x := randGeneral(rnd, s.rows, s.d, 3, 0)
		b := randGeneral(rnd, s.d, s.k, 2, 0)
		c := randGeneral(rnd, s.rows, s.k, 5, math.NaN())
		for i := range c.Rows { // c's own entries are overwritten
			for j := range c.Cols {
				c.Data[i*c.Stride+j] = math.Inf(1)
			}
		}
		p.Pack(b)
		MulPacked(c, x, &p)
		check(t, name, c, naive(false, x, b), math.NaN())

		// The same product from bᵀ, packed transposed.
		bt := randGeneral(rnd, s.k, s.d, 1, 0)
		for i := range s.k {
			for j := range s.d {
				bt.Data[i*bt.Stride+j] = b.Data[j*b.Stride+i]
			}
		}
		var pt Packed
		pt.PackT(bt)
		ct := randGeneral(rnd, s.rows, s.k, 5, math.NaN())
		MulPacked(ct, x, &pt)
		for i := range s.rows {
			for j := range s.k {
				if a, b := c.Data[i*c.Stride+j], ct.Data[i*ct.Stride+j]; math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("%s: (%d, %d) from PackT %v, from Pack %v", name, i, j, b, a)
				}
			}
		}

		// Each row is its own: the rows in two calls, bit for bit.
		if s.rows >= 2 {
			cut := s.rows / 2
			c2 := randGeneral(rnd, s.rows, s.k, 5, math.NaN())
			MulPacked(rowsOf(c2, 0, cut), rowsOf(x, 0, cut), &p)
			MulPacked(rowsOf(c2, cut, s.rows), rowsOf(x, cut, s.rows), &p)
			for i := range s.rows {
				for j := range s.k {
					if a, b := c.Data[i*c.Stride+j], c2.Data[i*c2.Stride+j]; math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%s: row %d differs when the rows are cut at %d: %v against %v", name, i, cut, b, a)
					}
				}
			}
		}
	}
}

// TestMulXTA checks MulXTA against plain sums, with x's rows apart (a
// stride wider than the rows) and one after the other (the layout for
// which it prefetches the next block of rows).
func TestMulXTA(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	var ws Workspace
	for _, pad := range []int{3, 0} {
		for _, s := range shapes {
			name := fmt.Sprintf("(%d×%d)ᵀ·%d×%d, x's stride %d", s.rows, s.d, s.rows, s.k, s.d+pad)
			x := randGeneral(rnd, s.rows, s.d, pad, 0)
			a := randGeneral(rnd, s.rows, s.k, 2, 0)
			c := randGeneral(rnd, s.d, s.k, 4, -7)
			MulXTA(c, x, a, &ws)
			check(t, name, c, naive(true, x, a), -7)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	var p Packed
	p.Pack(blas64.General{Rows: 3, Cols: 2, Stride: 2, Data: make([]float64, 6)})
	for name, f := range map[string]func(){
		"MulPacked inner": func() {
			MulPacked(blas64.General{Rows: 1, Cols: 2, Stride: 2, Data: make([]float64, 2)}, blas64.General{Rows: 1, Cols: 4, Stride: 4, Data: make([]float64, 4)}, &p)
		},
		"MulPacked short data": func() {
			MulPacked(blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: make([]float64, 3)}, blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 6)}, &p)
		},
		"MulXTA rows": func() {
			MulXTA(blas64.General{Rows: 3, Cols: 2, Stride: 2, Data: make([]float64, 6)}, blas64.General{Rows: 5, Cols: 3, Stride: 3, Data: make([]float64, 15)}, blas64.General{Rows: 4, Cols: 2, Stride: 2, Data: make([]float64, 8)}, &Workspace{})
		},
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

func rowsOf(m blas64.General, lo, hi int) blas64.General {
	if lo == hi {
		return blas64.General{Cols: m.Cols, Stride: m.Stride}
	}
	return blas64.General{Rows: hi - lo, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride:]}
}

// The benchmarks time the shapes, 20000×784 data and K = 50,
// against blas64 (gonum's native BLAS, or OpenBLAS with -tags openblas
// and CGO_LDFLAGS=-lopenblas) on the same products, in GFLOP/s.
func benchShapes() (x, u, v blas64.General) {
	rnd := rand.New(rand.NewPCG(1, 1))
	return randGeneral(rnd, 20000, 784, 0, 0), randGeneral(rnd, 784, 50, 0, 0), randGeneral(rnd, 20000, 50, 0, 0)
}

// inTwo runs f(0) and f(1) on two goroutines at once.
func inTwo(f func(g int)) {
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() { f(g) })
	}
	wg.Wait()
}

// cpuNow returns the process's CPU time so far, or −1 if unknown.
func cpuNow() time.Duration {
	if t, ok := cputime.Used(); ok {
		return t
	}
	return -1
}

// gflops reports the rate of b's loop of flops an op in GFLOP/s of wall
// time and, from the process's CPU time since cpu0, in GFLOP/cpu-s: a
// shared machine stretches wall time, not CPU time.
func gflops(b *testing.B, flops float64, cpu0 time.Duration) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu1 := cpuNow(); cpu0 >= 0 && cpu1 > cpu0 {
		b.ReportMetric(flops*float64(b.N)/(cpu1-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
	}
}

// BenchmarkMulPacked20000x784x50 is X·U; the blas64 line computes the
// same product as UᵀXᵀ (K×N), the faster of the two BLAS layouts here.
func BenchmarkMulPacked20000x784x50(b *testing.B) {
	x, u, _ := benchShapes()
	c := blas64.General{Rows: 20000, Cols: 50, Stride: 50, Data: make([]float64, 20000*50)}
	flops := 2.0 * 20000 * 784 * 50
	b.Run("gemm", func(b *testing.B) {
		var p Packed
		cpu0 := cpuNow()
		for b.Loop() {
			p.Pack(u)
			MulPacked(c, x, &p)
		}
		gflops(b, flops, cpu0)
	})
	b.Run("gemm-2parts", func(b *testing.B) {
		var p Packed
		cpu0 := cpuNow()
		for b.Loop() {
			p.Pack(u)
			inTwo(func(g int) {
				lo, hi := g*x.Rows/2, (g+1)*x.Rows/2
				MulPacked(rowsOf(c, lo, hi), rowsOf(x, lo, hi), &p)
			})
		}
		gflops(b, flops, cpu0)
	})
	b.Run("blas64", func(b *testing.B) {
		ut := blas64.General{Rows: 50, Cols: 784, Stride: 784, Data: make([]float64, 50*784)}
		ct := blas64.General{Rows: 50, Cols: 20000, Stride: 20000, Data: make([]float64, 50*20000)}
		cpu0 := cpuNow()
		for b.Loop() {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, ut, x, 0, ct)
		}
		gflops(b, flops, cpu0)
	})
}

// BenchmarkMulXTA20000x784x50 is XᵀV (D×K); the blas64 line computes
// the same product as VᵀX (K×D), the faster of the two BLAS layouts here.
func BenchmarkMulXTA20000x784x50(b *testing.B) {
	x, _, v := benchShapes()
	flops := 2.0 * 20000 * 784 * 50
	b.Run("gemm", func(b *testing.B) {
		c := blas64.General{Rows: 784, Cols: 50, Stride: 50, Data: make([]float64, 50*784)}
		var ws Workspace
		cpu0 := cpuNow()
		for b.Loop() {
			MulXTA(c, x, v, &ws)
		}
		gflops(b, flops, cpu0)
	})
	b.Run("gemm-2parts", func(b *testing.B) {
		// As model.Frobenius runs it under Engine.Split on two cores: eight
		// row chunks, four on each goroutine, each with its own result.
		var ws [8]Workspace
		cs := make([]blas64.General, 8)
		for i := range cs {
			cs[i] = blas64.General{Rows: 784, Cols: 50, Stride: 50, Data: make([]float64, 50*784)}
		}
		cpu0 := cpuNow()
		for b.Loop() {
			inTwo(func(g int) {
				for ch := 4 * g; ch < 4*g+4; ch++ {
					lo, hi := ch*x.Rows/8, (ch+1)*x.Rows/8
					MulXTA(cs[ch], rowsOf(x, lo, hi), rowsOf(v, lo, hi), &ws[ch])
				}
			})
		}
		gflops(b, flops, cpu0)
	})
	b.Run("blas64", func(b *testing.B) {
		c := blas64.General{Rows: 50, Cols: 784, Stride: 784, Data: make([]float64, 50*784)}
		cpu0 := cpuNow()
		for b.Loop() {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, v, x, 0, c)
		}
		gflops(b, flops, cpu0)
	})
}

func TestMulPacked32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	var p Packed32
	for _, s := range []struct{ rows, d, k int }{
		{0, 5, 3}, {4, 0, 9}, {1, 1, 1}, {2, 7, 16}, {7, 33, 17}, {13, 64, 64}, {61, 65, 65}, {125, 130, 200}, {40, 784, 512},
	} {
		name := fmt.Sprintf("%d×%d·(%d×%d)ᵀ", s.rows, s.d, s.k, s.d)
		x32 := rand32(rnd, s.rows, s.d, 3, 0)
		b32 := rand32(rnd, s.k, s.d, 1, 0)
		c32 := rand32(rnd, s.rows, s.k, 5, -3)
		p.PackT(b32)
		MulPacked32(c32, x32, &p)
		for i := range s.rows {
			for j := range s.k + 5 {
				got := float64(c32.Data[i*c32.Stride+j])
				if j >= s.k {
					if got != -3 {
						t.Fatalf("%s: padding (%d, %d) overwritten with %v", name, i, j, got)
					}
					continue
				}
				var want, mag float64
				for l := range s.d {
					pr := float64(x32.Data[i*x32.Stride+l]) * float64(b32.Data[j*b32.Stride+l])
					want += pr
					mag += math.Abs(pr)
				}
				// γ_d·Σ|products| bounds a float32 sum in any order.
				if tol := float64(s.d+1) * 0x1p-24 * mag; math.Abs(got-want) > tol {
					t.Fatalf("%s: (%d, %d) = %v, want %v within %g", name, i, j, got, want, tol)
				}
			}
		}
		if s.rows >= 2 {
			cut := s.rows / 2
			c2 := rand32(rnd, s.rows, s.k, 5, -3)
			MulPacked32(rows32(c2, 0, cut), rows32(x32, 0, cut), &p)
			MulPacked32(rows32(c2, cut, s.rows), rows32(x32, cut, s.rows), &p)
			for i := range s.rows {
				for j := range s.k {
					if a, b := c32.Data[i*c32.Stride+j], c2.Data[i*c2.Stride+j]; math.Float32bits(a) != math.Float32bits(b) {
						t.Fatalf("%s: row %d differs when the rows are cut at %d", name, i, cut)
					}
				}
			}
		}
	}
}

func rand32(rnd *rand.Rand, r, c, pad int, sentinel float32) blas32.General {
	m := blas32.General{Rows: r, Cols: c, Stride: c + pad, Data: make([]float32, r*(c+pad))}
	for i := range r {
		for j := range c + pad {
			if j < c {
				m.Data[i*m.Stride+j] = float32(rnd.Float64() - 0.2)
			} else {
				m.Data[i*m.Stride+j] = sentinel
			}
		}
	}
	return m
}

func rows32(m blas32.General, lo, hi int) blas32.General {
	if lo == hi {
		return blas32.General{Cols: m.Cols, Stride: m.Stride}
	}
	return blas32.General{Rows: hi - lo, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride:]}
}

// BenchmarkMulPacked32Block512x784 is one block of the k-NN search's
// float32 inner products: 512 rows against 512, D = 784, packing
// included, against blas32.
func BenchmarkMulPacked32Block512x784(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x, r := rand32(rnd, 512, 784, 0, 0), rand32(rnd, 512, 784, 0, 0)
	c := blas32.General{Rows: 512, Cols: 512, Stride: 512, Data: make([]float32, 512*512)}
	flops := 2.0 * 512 * 512 * 784
	b.Run("gemm", func(b *testing.B) {
		var p Packed32
		cpu0 := cpuNow()
		for b.Loop() {
			p.PackT(r)
			MulPacked32(c, x, &p)
		}
		gflops(b, flops, cpu0)
	})
	b.Run("blas32", func(b *testing.B) {
		cpu0 := cpuNow()
		for b.Loop() {
			blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, r, 0, c)
		}
		gflops(b, flops, cpu0)
	})
}

// TestMulABT checks both orientations (a the larger set, then b) against
// each other bit for bit and against the plain sum, in float64 and
// float32.
func TestMulABT(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	var ws ABTWorkspace
	var ws32 ABTWorkspace32
	for _, s := range []struct{ m, n, d int }{{1, 1, 1}, {3, 40, 70}, {40, 3, 70}, {7, 7, 9}, {100, 513, 64}, {0, 5, 3}, {5, 0, 3}} {
		a, b := randGeneral(rnd, s.m, s.d, 2, 0), randGeneral(rnd, s.n, s.d, 1, 0)
		c := randGeneral(rnd, s.m, s.n, 3, -1)
		MulABT(c, a, b, &ws)
		bt := randGeneral(rnd, s.d, s.n, 0, 0)
		for i := range s.n {
			for j := range s.d {
				bt.Data[j*bt.Stride+i] = b.Data[i*b.Stride+j]
			}
		}
		check(t, fmt.Sprintf("%d×%d·(%d×%d)ᵀ", s.m, s.d, s.n, s.d), c, naive(false, a, bt), -1)
		// The other orientation: cᵀ = b·aᵀ.
		ct := randGeneral(rnd, s.n, s.m, 0, 0)
		MulABT(ct, b, a, &ws)
		for i := range s.m {
			for j := range s.n {
				if x, y := c.Data[i*c.Stride+j], ct.Data[j*ct.Stride+i]; math.Float64bits(x) != math.Float64bits(y) {
					t.Fatalf("%d×%d against %d×%d: (%d, %d) = %v one way, %v the other", s.m, s.d, s.n, s.d, i, j, x, y)
				}
			}
		}

		a32, b32 := rand32(rnd, s.m, s.d, 2, 0), rand32(rnd, s.n, s.d, 1, 0)
		c32, ct32 := rand32(rnd, s.m, s.n, 3, -1), rand32(rnd, s.n, s.m, 0, 0)
		MulABT32(c32, a32, b32, &ws32)
		MulABT32(ct32, b32, a32, &ws32)
		for i := range s.m {
			for j := range s.n + 3 {
				x := c32.Data[i*c32.Stride+j]
				if j >= s.n {
					if x != -1 {
						t.Fatalf("float32 %d×%d: padding (%d, %d) overwritten", s.m, s.n, i, j)
					}
					continue
				}
				if y := ct32.Data[j*ct32.Stride+i]; math.Float32bits(x) != math.Float32bits(y) {
					t.Fatalf("float32 %d×%d against %d×%d: (%d, %d) = %v one way, %v the other", s.m, s.d, s.n, s.d, i, j, x, y)
				}
				var want float64
				for l := range s.d {
					want += float64(a32.Data[i*a32.Stride+l]) * float64(b32.Data[j*b32.Stride+l])
				}
				if math.Abs(float64(x)-want) > float64(s.d+1)*0x1p-24*float64(s.d) {
					t.Fatalf("float32 (%d, %d) = %v, want %v", i, j, x, want)
				}
			}
		}
	}
}

// BenchmarkMulABT32Rows512x784 is the k-NN search's float32 inner
// products of m query rows against a block of 512 window rows, D = 784
// (model/graph's dots32: MulABT32 packs the smaller set), for the batch
// sizes of a stream (100, 200) and the few rows of a repair or a single
// insertion, against blas32.
func BenchmarkMulABT32Rows512x784(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	r := rand32(rnd, 512, 784, 0, 0)
	for _, m := range []int{1, 3, 8, 16, 100, 200} {
		x := rand32(rnd, m, 784, 0, 0)
		c := blas32.General{Rows: m, Cols: 512, Stride: 512, Data: make([]float32, m*512)}
		flops := 2.0 * float64(m) * 512 * 784
		b.Run(fmt.Sprintf("m=%d/gemm", m), func(b *testing.B) {
			b.ReportAllocs()
			var ws ABTWorkspace32
			cpu0 := cpuNow()
			for b.Loop() {
				MulABT32(c, x, r, &ws)
			}
			gflops(b, flops, cpu0)
		})
		b.Run(fmt.Sprintf("m=%d/blas32", m), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuNow()
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, r, 0, c)
			}
			gflops(b, flops, cpu0)
		})
	}
}

// BenchmarkPackT32Rows100x784 is MulABT32's packing of the search's 100
// query rows (D = 784), done once per block of 512 window rows.
func BenchmarkPackT32Rows100x784(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 1))
	x := rand32(rnd, 100, 784, 0, 0)
	var p Packed32
	b.ReportAllocs()
	for b.Loop() {
		p.PackT(x)
	}
	b.ReportMetric(float64(100*784*b.N)/b.Elapsed().Seconds()/1e9, "Gentries/s")
}

// BenchmarkTranspose32Rows512x100 is MulABT32's transpose of a block of
// the search's products (512 window rows by 100 queries) into c.
func BenchmarkTranspose32Rows512x100(b *testing.B) {
	src := make([]float32, 512*100)
	dst := make([]float32, 100*512)
	b.ReportAllocs()
	for b.Loop() {
		transposeInto(dst, 512, src, 512, 100)
	}
	b.ReportMetric(float64(512*100*b.N)/b.Elapsed().Seconds()/1e9, "Gentries/s")
}

// BenchmarkTranspose32Rows512x100Stride1024 is BenchmarkTranspose32Rows512x100
// into rows 4 KiB apart, whose lines share an L1 set.
func BenchmarkTranspose32Rows512x100Stride1024(b *testing.B) {
	src := make([]float32, 512*100)
	dst := make([]float32, 100*1024)
	b.ReportAllocs()
	for b.Loop() {
		transposeInto(dst, 1024, src, 512, 100)
	}
	b.ReportMetric(float64(512*100*b.N)/b.Elapsed().Seconds()/1e9, "Gentries/s")
}
