//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// kernelSets are the assembly kernel sets this machine runs, by name.
func kernelSets(t *testing.T) []string {
	var sets []string
	if hasAVX512 {
		sets = append(sets, "AVX-512")
	}
	if hasAVX2 {
		sets = append(sets, "AVX2")
	}
	if len(sets) == 0 {
		t.Skip("no AVX-512, no AVX2 with FMA")
	}
	return sets
}

func rowsTable64(set string, rows int) *[4]asmRows[float64] {
	switch {
	case set == "AVX2" && rows == 6:
		return &[4]asmRows[float64]{mulRows6x1AVX2, mulRows6x2AVX2, mulRows6x3AVX2, mulRows6x4AVX2}
	case set == "AVX2":
		return &[4]asmRows[float64]{mulRows1x1AVX2, mulRows1x2AVX2, mulRows1x3AVX2, mulRows1x4AVX2}
	case rows == 6:
		return &[4]asmRows[float64]{mulRows6x1, mulRows6x2, mulRows6x3, mulRows6x4}
	}
	return &[4]asmRows[float64]{mulRows1x1, mulRows1x2, mulRows1x3, mulRows1x4}
}

func rowsTable32(set string, rows int) *[4]asmRows[float32] {
	switch {
	case set == "AVX2" && rows == 6:
		return &[4]asmRows[float32]{mulRows32_6x1AVX2, mulRows32_6x2AVX2, mulRows32_6x3AVX2, mulRows32_6x4AVX2}
	case set == "AVX2":
		return &[4]asmRows[float32]{mulRows32_1x1AVX2, mulRows32_1x2AVX2, mulRows32_1x3AVX2, mulRows32_1x4AVX2}
	case rows == 6:
		return &[4]asmRows[float32]{mulRows32_6x1, mulRows32_6x2, mulRows32_6x3, mulRows32_6x4}
	}
	return &[4]asmRows[float32]{mulRows32_1x1, mulRows32_1x2, mulRows32_1x3, mulRows32_1x4}
}

func colsTable(set string, rows int) *[4]colsKernel {
	switch {
	case set == "AVX2" && rows == 6:
		return &[4]colsKernel{mulCols6x1AVX2, mulCols6x2AVX2, mulCols6x3AVX2, mulCols6x4AVX2}
	case set == "AVX2":
		return &[4]colsKernel{mulCols1x1AVX2, mulCols1x2AVX2, mulCols1x3AVX2, mulCols1x4AVX2}
	case rows == 6:
		return &[4]colsKernel{mulCols6x1, mulCols6x2, mulCols6x3, mulCols6x4}
	}
	return &[4]colsKernel{mulCols1x1, mulCols1x2, mulCols1x3, mulCols1x4}
}

// testRowsKernels calls each mulRows kernel of each set directly, on
// every width of its last vector (every mask), strides of b wider than the
// panel, and rows of c apart in one buffer with sentinels between and
// after them: bit for bit against chains of FMAs, and against the plain-Go
// form to rounding.
func testRowsKernels[T float](t *testing.T, table func(set string, rows int) *[4]asmRows[T]) {
	rnd := rand.New(rand.NewPCG(15, 16))
	l := lanes[T]()
	const sentinel = -9
	for _, set := range kernelSets(t) {
		for _, rows := range []int{6, 1} {
			for nv := 1; nv <= 4; nv++ {
				k := table(set, rows)[nv-1]
				for w := l*(nv-1) + 1; w <= l*nv; w++ {
					mask := uint16(uint32(1)<<(w-l*(nv-1)) - 1)
					for _, n := range []int{0, 1, 2, 5, 33} {
						ldb := l*nv + l*(w%2)
						a := randMat[T](rnd, rows, n, w%3, 0)
						b := randMat[T](rnd, n, ldb, 0, 0)
						// c: rows of w entries, 2l apart, and 2l more after.
						c := make([]T, rows*(l*nv+2*l)+2*l)
						for i := range c {
							c[i] = sentinel
						}
						var ap, cp [tileRows]*T
						for r := range rows {
							if n > 0 {
								ap[r] = &a.data[r*a.stride]
							} else {
								ap[r] = new(T)
							}
							cp[r] = &c[r*(l*nv+2*l)]
						}
						bp := new(T)
						if n > 0 {
							bp = &b.data[0]
						}
						k(n, &ap, bp, ldb, &cp, mask)
						name := fmt.Sprintf("%s %T mulRows%dx%d, %d wide, n = %d", set, T(0), rows, nv, w, n)
						for r := range rows {
							for j := range l*nv + 2*l {
								got := c[r*(l*nv+2*l)+j]
								if j >= w {
									if got != sentinel {
										t.Fatalf("%s: row %d, %d past its end overwritten with %v", name, r, j-w, got)
									}
									continue
								}
								var want T
								if n > 0 {
									want = fmaDot(n, a.data[r*a.stride:], 1, b.data[j:], ldb)
								}
								if got != want {
									t.Fatalf("%s: (%d, %d) = %v, want %v", name, r, j, got, want)
								}
							}
						}
						// The plain-Go form, to rounding: entries in [−0.2, 0.8)
						// make each |sum| at most n·0.64.
						cg := make([]T, len(c))
						var cgp [tileRows]*T
						for r := range rows {
							cgp[r] = &cg[r*(l*nv+2*l)]
						}
						mulRowsGeneric(rows, nv, n, &ap, bp, ldb, &cgp, mask)
						u := float64(1) / (1 << 52)
						if l == 16 {
							u = 1.0 / (1 << 23)
						}
						for r := range rows {
							for j := range w {
								d := float64(c[r*(l*nv+2*l)+j] - cg[r*(l*nv+2*l)+j])
								if d < 0 {
									d = -d
								}
								if d > float64(n+1)*u*float64(n) {
									t.Fatalf("%s: (%d, %d) = %v, the plain-Go form %v", name, r, j, c[r*(l*nv+2*l)+j], cg[r*(l*nv+2*l)+j])
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestRowsKernels64(t *testing.T) { testRowsKernels(t, rowsTable64) }
func TestRowsKernels32(t *testing.T) { testRowsKernels(t, rowsTable32) }

// TestColsKernels calls each mulCols kernel of each set directly, with c
// holding earlier sums (the kernels add to it), strides apart, sentinels
// after each row's 8V entries, and a prefetch pointer that runs out
// before n.
func TestColsKernels(t *testing.T) {
	rnd := rand.New(rand.NewPCG(17, 18))
	const sentinel = -9
	for _, set := range kernelSets(t) {
		for _, rows := range []int{6, 1} {
			for nv := 1; nv <= 4; nv++ {
				k := colsTable(set, rows)[nv-1]
				vw := 8 * nv
				for _, n := range []int{0, 1, 2, 7, 48} {
					x := randMat[float64](rnd, max(n, 1), rows, 3, 0)
					a := randMat[float64](rnd, max(n, 1), vw, 5, 0)
					ldc := vw + 8
					c := randMat[float64](rnd, rows, vw, 8, sentinel)
					before := append([]float64(nil), c.data...)
					pf := uintptr(unsafe.Pointer(&x.data[0]))
					k(n, &x.data[0], x.stride, &a.data[0], a.stride, &c.data[0], ldc, pf, min(n, 3))
					name := fmt.Sprintf("%s mulCols%dx%d, n = %d", set, rows, nv, n)
					for r := range rows {
						for j := range ldc {
							got := c.data[r*ldc+j]
							if j >= vw {
								if got != sentinel {
									t.Fatalf("%s: row %d, %d past its end overwritten with %v", name, r, j-vw, got)
								}
								continue
							}
							want := before[r*ldc+j]
							for i := range n {
								want = fma64(x.data[i*x.stride+r], a.data[i*a.stride+j], want)
							}
							if got != want {
								t.Fatalf("%s: (%d, %d) = %v, want %v", name, r, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}
