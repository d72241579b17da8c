package vec

// Screen32 returns the least b in [from, len(dots)) that a k-NN scan must
// look at, or len(dots) if there is none. With the squared distance
//
//	key(b) = (base + sq[b]) − 2·float64(dots[b])
//
// (base the query's squared norm, sq[b] candidate b's, dots[b] their
// inner product in float32), b is passed over when key(b) > thr and, if
// rthr is not nil, also key(b) > rthr[b] + dq; every other b is returned,
// a NaN key or bound included (the comparisons are Go's >). Each key and
// bound is rounded as that Go expression is, so the caller's own tests on
// the b returned see the same values. sq, and rthr when not nil, must be
// at least as long as dots. The assembly (AVX2) and the plain Go return
// the same b.
func Screen32(from int, dots []float32, sq []float64, base, thr float64, rthr []float64, dq float64) int {
	n := len(dots)
	if from >= n {
		return n
	}
	if len(sq) < n || (rthr != nil && len(rthr) < n) {
		panic("vec: Screen32: sq or rthr shorter than dots")
	}
	return screen32(from, dots, sq[:n], base, thr, rthr, dq)
}

func screen32Generic(from int, dots []float32, sq []float64, base, thr float64, rthr []float64, dq float64) int {
	sq = sq[:len(dots)]
	if rthr == nil {
		for b := from; b < len(dots); b++ {
			if !(base+sq[b]-2*float64(dots[b]) > thr) {
				return b
			}
		}
		return len(dots)
	}
	rthr = rthr[:len(dots)]
	for b := from; b < len(dots); b++ {
		key := base + sq[b] - 2*float64(dots[b])
		if !(key > thr && key > rthr[b]+dq) {
			return b
		}
	}
	return len(dots)
}
