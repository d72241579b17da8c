//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

// The kernel sets, chosen once: AVX-512 where there is AVX-512F, else
// AVX2 with FMA (same bits, narrower tiles), else the plain-Go forms.
var (
	hasAVX512 = cpu.X86.HasAVX512F
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// hasKernels is whether an assembly kernel set runs here.
var hasKernels = hasAVX512 || hasAVX2

// The kernels for nv = 1…4 vectors.
var (
	mulRows6 = viaRows(
		&[4]asmRows[float64]{mulRows6x1, mulRows6x2, mulRows6x3, mulRows6x4},
		&[4]asmRows[float64]{mulRows6x1AVX2, mulRows6x2AVX2, mulRows6x3AVX2, mulRows6x4AVX2}, 6)
	mulRows1 = viaRows(
		&[4]asmRows[float64]{mulRows1x1, mulRows1x2, mulRows1x3, mulRows1x4},
		&[4]asmRows[float64]{mulRows1x1AVX2, mulRows1x2AVX2, mulRows1x3AVX2, mulRows1x4AVX2}, 1)
	mulRows32x6 = viaRows(
		&[4]asmRows[float32]{mulRows32_6x1, mulRows32_6x2, mulRows32_6x3, mulRows32_6x4},
		&[4]asmRows[float32]{mulRows32_6x1AVX2, mulRows32_6x2AVX2, mulRows32_6x3AVX2, mulRows32_6x4AVX2}, 6)
	mulRows32x1 = viaRows(
		&[4]asmRows[float32]{mulRows32_1x1, mulRows32_1x2, mulRows32_1x3, mulRows32_1x4},
		&[4]asmRows[float32]{mulRows32_1x1AVX2, mulRows32_1x2AVX2, mulRows32_1x3AVX2, mulRows32_1x4AVX2}, 1)
	mulCols6 = viaCols(
		&[4]colsKernel{mulCols6x1, mulCols6x2, mulCols6x3, mulCols6x4},
		&[4]colsKernel{mulCols6x1AVX2, mulCols6x2AVX2, mulCols6x3AVX2, mulCols6x4AVX2}, 6)
	mulCols1 = viaCols(
		&[4]colsKernel{mulCols1x1, mulCols1x2, mulCols1x3, mulCols1x4},
		&[4]colsKernel{mulCols1x1AVX2, mulCols1x2AVX2, mulCols1x3AVX2, mulCols1x4AVX2}, 1)
)

type asmRows[T float] func(n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16)

// viaRows returns the kernel that calls table[nv−1] of the set this
// machine runs (avx512 or avx2), or the plain-Go form for the given rows.
func viaRows[T float](avx512, avx2 *[4]asmRows[T], rows int) rowsKernel[T] {
	table := avx512
	switch {
	case hasAVX512:
	case hasAVX2:
		table = avx2
	default:
		return plainRows[T](rows)
	}
	return func(nv, n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16) {
		table[nv-1](n, a, b, ldb, c, mask)
	}
}

// viaCols is viaRows for the mulCols kernels.
func viaCols(avx512, avx2 *[4]colsKernel, rows int) func(nv int) colsKernel {
	table := avx512
	switch {
	case hasAVX512:
	case hasAVX2:
		table = avx2
	default:
		return func(nv int) colsKernel { return plainCols(rows, nv) }
	}
	return func(nv int) colsKernel { return table[nv-1] }
}
