package classify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Linear is multinomial (softmax) logistic regression with an L2 penalty on
// the weights, scikit-learn's LogisticRegression(multi_class="multinomial")
// with C = 1 by default. It minimizes over W (C×D) and b (C)
//
//	(1/n) Σᵢ [log Σ_c exp(z_ic) − z_{i,yᵢ}] + ‖W‖²/(2·C·n),  z_i = W xᵢ + b,
//
// (scikit-learn's C·Σ loss + ½‖W‖², divided by C·n; the intercept b is not
// penalized) with gonum's L-BFGS (optimize.LBFGS), driven so that Fit runs
// no goroutines. The objective is strictly convex in W, so the result does
// not depend on the start (zero).
//
// Logistic regression was chosen over the linear SVM of the KNMF thesis
// because it yields class probabilities for the score column. Features are
// used as given: scale them first if their ranges differ widely. Only the
// labels present in the training data are fitted; others get probability 0.
//
// The zero value uses the defaults below. A Linear is not safe for
// concurrent use.
type Linear struct {
	// C is the inverse regularization strength, as in scikit-learn. If
	// zero, it defaults to 1. It must be positive.
	C float64
	// MaxIter bounds the L-BFGS iterations. If zero, it defaults to 100
	// (scikit-learn's default).
	MaxIter int
	// Tol stops L-BFGS once the largest absolute gradient entry of the
	// objective above is at most Tol. If zero, it defaults to 1e-4.
	Tol float64

	w       mat.Dense // P×D weights of the P present classes
	b       []float64 // P intercepts
	present []int     // label of each fitted class
	classes int
	d       int
	iter    int
	fitted  bool

	z mat.Dense
}

func (li *Linear) params() (c float64, maxIter int, tol float64) {
	c, maxIter, tol = li.C, li.MaxIter, li.Tol
	if c == 0 {
		c = 1
	}
	if maxIter == 0 {
		maxIter = 100
	}
	if tol == 0 {
		tol = 1e-4
	}
	return
}

// Fit trains on the labeled rows of x (n×D) with labels y (length n, in
// [0, C) or −1 for unlabeled, which Fit skips). It returns ErrNoLabels if
// no row is labeled, and an error if a parameter is out of range, len(y) ≠
// n, or x has a non-finite entry. Reaching MaxIter is not an error; see
// Iterations.
func (li *Linear) Fit(x mat.Matrix, y []int) error {
	li.fitted = false
	c, maxIter, tol := li.params()
	switch {
	case !(c > 0) || math.IsInf(c, 0):
		return fmt.Errorf("classify: Linear C = %v, must be positive and finite", li.C)
	case maxIter < 0:
		return fmt.Errorf("classify: negative MaxIter %d", li.MaxIter)
	case !(tol >= 0):
		return fmt.Errorf("classify: negative Tol %v", li.Tol)
	}
	n, d := x.Dims()
	classes, labeled, err := checkLabels(n, y)
	if err != nil {
		return err
	}
	if err := checkFinite(x); err != nil {
		return err
	}
	var xl mat.Dense
	lab := labeledRows(&xl, nil, x, y, labeled)
	// Map labels to the present classes 0..P−1.
	pos := make([]int, classes)
	for i := range pos {
		pos[i] = -1
	}
	li.present = li.present[:0]
	for _, v := range lab {
		if pos[v] < 0 {
			pos[v] = 0
		}
	}
	for v := range pos {
		if pos[v] == 0 {
			pos[v] = len(li.present)
			li.present = append(li.present, v)
		}
	}
	p := len(li.present)
	for i, v := range lab {
		lab[i] = pos[v]
	}

	theta := make([]float64, p*d+p)
	li.iter = 0
	if p > 1 {
		obj := &softmaxObjective{x: &xl, y: lab, p: p, d: d, reg: 1 / (c * float64(labeled))}
		li.iter = lbfgs(obj.eval, theta, maxIter, tol)
	}
	li.w.Reset()
	li.w.ReuseAs(p, d)
	li.w.Copy(mat.NewDense(p, d, theta[:p*d]))
	li.b = append(li.b[:0], theta[p*d:]...)
	li.classes, li.d, li.fitted = classes, d, true
	return nil
}

// softmaxObjective evaluates the penalized mean cross-entropy and its
// gradient with respect to θ = [W row-major, b].
type softmaxObjective struct {
	x    *mat.Dense
	y    []int
	p, d int
	reg  float64 // 1/(C·n)
	z    mat.Dense
}

func (o *softmaxObjective) eval(theta, grad []float64) float64 {
	n, _ := o.x.Dims()
	p, d := o.p, o.d
	w := mat.NewDense(p, d, theta[:p*d])
	b := theta[p*d:]
	o.z.Reset()
	o.z.ReuseAs(n, p)
	o.z.Mul(o.x, w.T())
	var f float64
	for i := range n {
		row := o.z.RawRowView(i)
		floats.Add(row, b)
		zy := row[o.y[i]]
		f += logSumExpSoftmax(row) - zy // row becomes the softmax P_i
		row[o.y[i]]--                   // row becomes P_i − Y_i
	}
	inv := 1 / float64(n)
	f *= inv
	gw := mat.NewDense(p, d, grad[:p*d])
	gw.Mul(o.z.T(), o.x) // (P − Y)ᵀ X
	gw.Scale(inv, gw)
	gb := grad[p*d:]
	clear(gb)
	for i := range n {
		floats.Add(gb, o.z.RawRowView(i))
	}
	floats.Scale(inv, gb)
	wv := theta[:p*d]
	f += 0.5 * o.reg * floats.Dot(wv, wv)
	floats.AddScaled(grad[:p*d], o.reg, wv)
	return f
}

// logSumExpSoftmax overwrites z with softmax(z) and returns log Σ exp(z).
func logSumExpSoftmax(z []float64) float64 {
	m := floats.Max(z)
	var s float64
	for j, v := range z {
		z[j] = math.Exp(v - m)
		s += z[j]
	}
	for j := range z {
		z[j] /= s
	}
	return m + math.Log(s)
}

// Classes returns C, one more than the largest label seen by Fit.
func (li *Linear) Classes() int { return li.classes }

// Iterations returns the L-BFGS iterations of the last Fit.
func (li *Linear) Iterations() int { return li.iter }

// PredictTo stores the most probable label of each row of x (m×D) in dst
// and returns it. A nil dst is allocated; a non-nil one must have length m.
// A row with a non-finite entry is predicted −1. It panics if li is not
// fitted or x does not have D columns.
func (li *Linear) PredictTo(dst []int, x mat.Matrix) []int {
	dst, _ = li.PredictScoresTo(dst, nil, x)
	return dst
}

// PredictScoresTo is PredictTo that also stores the predicted label's
// probability in score (0 for rows predicted −1).
func (li *Linear) PredictScoresTo(dst []int, score []float64, x mat.Matrix) ([]int, []float64) {
	if !li.fitted {
		panic(ErrNotFitted)
	}
	checkDims(x, li.d)
	m, _ := x.Dims()
	dst = intsTo(dst, m)
	score = floatsTo(score, m)
	p := len(li.present)
	li.z.Reset()
	li.z.ReuseAs(m, p)
	li.z.Mul(x, li.w.T())
	for i := range m {
		row := li.z.RawRowView(i)
		floats.Add(row, li.b)
		logSumExpSoftmax(row)
		best := floats.MaxIdx(row)
		if math.IsNaN(row[best]) {
			dst[i], score[i] = -1, 0
			continue
		}
		dst[i], score[i] = li.present[best], row[best]
	}
	return dst, score
}
