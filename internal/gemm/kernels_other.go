//go:build !amd64 || purego

package gemm

const hasKernels = false

var (
	mulRows6, mulRows1       = plainRows[float64](6), plainRows[float64](1)
	mulRows32x6, mulRows32x1 = plainRows[float32](6), plainRows[float32](1)
	mulCols6                 = func(nv int) colsKernel { return plainCols(6, nv) }
	mulCols1                 = func(nv int) colsKernel { return plainCols(1, nv) }
)
