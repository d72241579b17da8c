//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

var hasAVX512 = cpu.X86.HasAVX512F

func mulRows3(nv, n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(3, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows3Kernels[nv-1](n, a, b, ldb, c, mask)
}

func mulRows1(nv, n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16) {
	if !hasAVX512 {
		mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
		return
	}
	mulRows1Kernels[nv-1](n, a, b, ldb, c, mask)
}

func addOuter3(nv, n int, x *[3]*float64, v *float64, c *float64, ldc int) {
	if !hasAVX512 {
		addOuterGeneric(3, nv, n, x, v, c, ldc)
		return
	}
	addOuter3Kernels[nv-1](n, x, v, c, ldc)
}

func addOuter1(nv, n int, x *[3]*float64, v *float64, c *float64, ldc int) {
	if !hasAVX512 {
		addOuterGeneric(1, nv, n, x, v, c, ldc)
		return
	}
	addOuter1Kernels[nv-1](n, x, v, c, ldc)
}

type mulRowsKernel func(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)
type addOuterKernel func(n int, x *[3]*float64, v *float64, c *float64, ldc int)

var (
	mulRows3Kernels  = [7]mulRowsKernel{mulRows3x1, mulRows3x2, mulRows3x3, mulRows3x4, mulRows3x5, mulRows3x6, mulRows3x7}
	mulRows1Kernels  = [7]mulRowsKernel{mulRows1x1, mulRows1x2, mulRows1x3, mulRows1x4, mulRows1x5, mulRows1x6, mulRows1x7}
	addOuter3Kernels = [7]addOuterKernel{addOuter3x1, addOuter3x2, addOuter3x3, addOuter3x4, addOuter3x5, addOuter3x6, addOuter3x7}
	addOuter1Kernels = [7]addOuterKernel{addOuter1x1, addOuter1x2, addOuter1x3, addOuter1x4, addOuter1x5, addOuter1x6, addOuter1x7}
)

//go:noescape
func mulRows3x1(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x2(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x3(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x4(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x5(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x6(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows3x7(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x1(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x2(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x3(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x4(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x5(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x6(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func mulRows1x7(n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16)

//go:noescape
func addOuter3x1(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x2(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x3(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x4(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x5(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x6(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter3x7(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x1(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x2(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x3(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x4(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x5(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x6(n int, x *[3]*float64, v *float64, c *float64, ldc int)

//go:noescape
func addOuter1x7(n int, x *[3]*float64, v *float64, c *float64, ldc int)
