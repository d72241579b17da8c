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
	addOuter6   = viaOuter(&[4]asmOuter{addOuter6x1, addOuter6x2, addOuter6x3, addOuter6x4}, 6)
	addOuter1   = viaOuter(&[4]asmOuter{addOuter1x1, addOuter1x2, addOuter1x3, addOuter1x4}, 1)
)

type (
	asmRows[T float] func(n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16)
	asmOuter         func(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)
)

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

// viaOuter is viaRows for the addOuter kernels.
func viaOuter(table *[4]asmOuter, rows int) outerKernel {
	if !hasAVX512 {
		return plainOuter(rows)
	}
	return func(nv, n int, x *[tileRows]*float64, v *float64, c *float64, ldc int) {
		table[nv-1](n, x, v, c, ldc)
	}
}
