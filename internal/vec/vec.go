// Package vec holds the vector kernels of nmfstream's sparse graph
// products: y += a·x for rows of a few dozen entries, one at a time or four
// at a time.
//
// Every kernel rounds exactly as the scalar loop it replaces: each product
// a·x[i] is rounded, then added to y[i], in the order the scalar code would
// (no fused multiply-add). So the results are the same bit for bit on every
// machine, with or without the assembly (build tag purego turns it off);
// only the speed differs. On amd64 with AVX2 the kernels use 256-bit
// vectors; elsewhere they are plain Go.
package vec

// Axpy sets y[i] += a·x[i] for i < len(y). x must be at least as long as
// y.
func Axpy(a float64, x, y []float64) {
	if len(x) < len(y) {
		panic("vec: Axpy: x shorter than y")
	}
	if len(y) == 0 {
		return
	}
	axpy(a, x[:len(y)], y)
}

// Axpy4 sets y[i] = (((y[i] + a[0]·x0[i]) + a[1]·x1[i]) + a[2]·x2[i]) +
// a[3]·x3[i] for i < len(y): four Axpy calls in one pass over y. Each x
// must be at least as long as y.
func Axpy4(y []float64, a *[4]float64, x0, x1, x2, x3 []float64) {
	n := len(y)
	if len(x0) < n || len(x1) < n || len(x2) < n || len(x3) < n {
		panic("vec: Axpy4: x shorter than y")
	}
	if n == 0 {
		return
	}
	axpy4(y, a, &x0[0], &x1[0], &x2[0], &x3[0])
}

func axpyGeneric(a float64, x, y []float64) {
	for i, v := range x[:len(y)] {
		y[i] += a * v
	}
}

func axpy4Generic(y []float64, a *[4]float64, x0, x1, x2, x3 []float64) {
	x0, x1, x2, x3 = x0[:len(y)], x1[:len(y)], x2[:len(y)], x3[:len(y)]
	for i := range y {
		s := y[i] + a[0]*x0[i]
		s += a[1] * x1[i]
		s += a[2] * x2[i]
		y[i] = s + a[3]*x3[i]
	}
}
