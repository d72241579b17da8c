//go:build !amd64 || purego

package gemm

const hasAVX2 = false

var rowNZAVX2 [nzVectors]func(n int, idx *int32, val *float64, b *float64, ldb int, c *float64, lim int) (q int)
