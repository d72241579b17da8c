//go:build !amd64 || purego

package gemm

const hasAVX512 = false

func mulRows3(nv, n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16) {
	mulRowsGeneric(3, nv, n, a, b, ldb, c, mask)
}

func mulRows1(nv, n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16) {
	mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
}

func addOuter3(nv, n int, x *[3]*float64, v *float64, c *float64, ldc int) {
	addOuterGeneric(3, nv, n, x, v, c, ldc)
}

func addOuter1(nv, n int, x *[3]*float64, v *float64, c *float64, ldc int) {
	addOuterGeneric(1, nv, n, x, v, c, ldc)
}
