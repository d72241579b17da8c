//go:build !amd64 || purego

package gemm

const hasAVX512 = false

func mulRows6(nv, n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16) {
	mulRowsGeneric(6, nv, n, a, b, ldb, c, mask)
}

func mulRows1(nv, n int, a *[tileRows]*float64, b *float64, ldb int, c *[tileRows]*float64, mask uint16) {
	mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
}

func addOuter6(nv, n int, x *[tileRows]*float64, v *float64, c *float64, ldc int) {
	addOuterGeneric(6, nv, n, x, v, c, ldc)
}

func addOuter1(nv, n int, x *[tileRows]*float64, v *float64, c *float64, ldc int) {
	addOuterGeneric(1, nv, n, x, v, c, ldc)
}

func mulRows32x6(nv, n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16) {
	mulRowsGeneric(6, nv, n, a, b, ldb, c, mask)
}

func mulRows32x1(nv, n int, a *[tileRows]*float32, b *float32, ldb int, c *[tileRows]*float32, mask uint16) {
	mulRowsGeneric(1, nv, n, a, b, ldb, c, mask)
}
