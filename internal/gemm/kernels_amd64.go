//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

var hasAVX512 = cpu.X86.HasAVX512F

func mulRows6(nv, n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(6, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows6Kernels[nv-1](n, a, b, ldb, c, mask)
}

func mulRows1(nv, n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows1Kernels[nv-1](n, a, b, ldb, c, mask)
}

func addOuter6(nv, n int, x *[tileRows]*float64, v *float64, c *float64, ldc int) {
	if !hasAVX512 {
		addOuterGeneric(6, nv, n, x, v, c, ldc)
		return
	}
	addOuter6Kernels[nv-1](n, x, v, c, ldc)
}

func addOuter1(nv, n int, x *[tileRows]*float64, v *float64, c *float64, ldc int) {
	if !hasAVX512 {
		addOuterGeneric(1, nv, n, x, v, c, ldc)
		return
	}
	addOuter1Kernels[nv-1](n, x, v, c, ldc)
}

type (
	mulRowsKernel  func(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)
	addOuterKernel func(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)
)

var (
	mulRows6Kernels  = [4]mulRowsKernel{mulRows6x1, mulRows6x2, mulRows6x3, mulRows6x4}
	mulRows1Kernels  = [4]mulRowsKernel{mulRows1x1, mulRows1x2, mulRows1x3, mulRows1x4}
	addOuter6Kernels = [4]addOuterKernel{addOuter6x1, addOuter6x2, addOuter6x3, addOuter6x4}
	addOuter1Kernels = [4]addOuterKernel{addOuter1x1, addOuter1x2, addOuter1x3, addOuter1x4}
)

//go:noescape
func mulRows6x1(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows6x2(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows6x3(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows6x4(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows1x1(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows1x2(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows1x3(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func mulRows1x4(n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16)

//go:noescape
func addOuter6x1(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter6x2(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter6x3(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter6x4(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x1(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x2(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x3(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x4(n int, x *[tileRows]*float64, v *float64, c *float64, ldc int)

func mulRows32x6(nv, n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(6, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows32x6Kernels[nv-1](n, a, b, ldb, c, mask)
}

func mulRows32x1(nv, n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows32x1Kernels[nv-1](n, a, b, ldb, c, mask)
}

type mulRows32Kernel func(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

var (
	mulRows32x6Kernels = [4]mulRows32Kernel{mulRows32_6x1, mulRows32_6x2, mulRows32_6x3, mulRows32_6x4}
	mulRows32x1Kernels = [4]mulRows32Kernel{mulRows32_1x1, mulRows32_1x2, mulRows32_1x3, mulRows32_1x4}
)

//go:noescape
func mulRows32_6x1(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_6x2(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_6x3(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_6x4(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_1x1(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_1x2(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_1x3(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)

//go:noescape
func mulRows32_1x4(n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16)
