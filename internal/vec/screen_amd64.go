//go:build amd64 && !purego

package vec

// screen32AVX2 is Screen32 over the whole blocks of 8 in [from, n):
// it returns the first b there that is not passed over, or the end of
// the last whole block. rthr is nil when rev is false.
//
//go:noescape
func screen32AVX2(dots *float32, sq, rthr *float64, from, n int, base, thr, dq float64, rev bool) int

func screen32(from int, dots []float32, sq []float64, base, thr float64, rthr []float64, dq float64) int {
	n := len(dots)
	if hasAVX2 && n-from >= 8 {
		var rp *float64
		if rthr != nil {
			rp = &rthr[0]
		}
		end := from + (n-from)&^7
		b := screen32AVX2(&dots[0], &sq[0], rp, from, end, base, thr, dq, rthr != nil)
		if b < end {
			return b
		}
		from = end
	}
	return screen32Generic(from, dots, sq, base, thr, rthr, dq)
}
