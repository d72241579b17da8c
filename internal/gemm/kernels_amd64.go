//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

var hasAVX512 = cpu.X86.HasAVX512F

// The kernels for nv = 1…4 vectors, from the assembly without AVX-512
// support from the plain-Go forms.
var (
	mulRows6    = viaRows(&[4]asmRows[float64]{mulRows6x1, mulRows6x2, mulRows6x3, mulRows6x4}, 6)
	mulRows1    = viaRows(&[4]asmRows[float64]{mulRows1x1, mulRows1x2, mulRows1x3, mulRows1x4}, 1)
	mulRows32x6 = viaRows(&[4]asmRows[float32]{mulRows32_6x1, mulRows32_6x2, mulRows32_6x3, mulRows32_6x4}, 6)
	mulRows32x1 = viaRows(&[4]asmRows[float32]{mulRows32_1x1, mulRows32_1x2, mulRows32_1x3, mulRows32_1x4}, 1)
	mulCols6    = viaCols(&[4]colsKernel{mulCols6x1, mulCols6x2, mulCols6x3, mulCols6x4}, 6)
	mulCols1    = viaCols(&[4]colsKernel{mulCols1x1, mulCols1x2, mulCols1x3, mulCols1x4}, 1)
)

type asmRows[T float] func(n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16)

// viaRows returns the kernel that calls table[nv−1], or the plain-Go form
// for the given rows without AVX-512.
func viaRows[T float](table *[4]asmRows[T], rows int) rowsKernel[T] {
	if !hasAVX512 {
		return plainRows[T](rows)
	}
	return func(nv, n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16) {
		table[nv-1](n, a, b, ldb, c, mask)
	}
}

// viaCols is viaRows for the mulCols kernels.
func viaCols(table *[4]colsKernel, rows int) func(nv int) colsKernel {
	if !hasAVX512 {
		return func(nv int) colsKernel { return plainCols(rows, nv) }
	}
	return func(nv int) colsKernel { return table[nv-1] }
}
