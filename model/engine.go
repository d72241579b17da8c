package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/internal/vec"
)

// eps keeps multiplicative updates finite: denominators are floored at eps
// (Cai's reference code uses 1e-10; scikit-learn's 'mu' solver uses
// machine epsilon).
const eps = 1e-10

// Loss is the reconstruction part of an objective: ‖X − UVᵀ‖² on data
// (Frobenius), its kernel form, or the generalized KL divergence D(X‖UVᵀ)
// (KL). Its gradients are split into a positive part pos and a negative
// part neg, so that a multiplicative update reads W ← W ⊙ neg/pos.
//
// Gradients are halved: for ‖X − UVᵀ‖², ∂/∂V = 2(VUᵀU − XᵀU), and the
// engine works with VUᵀU (pos) and XᵀU (neg). Every Loss and Term uses
// that scale, ½∂F for the objective F = Loss.Value + Σ Term.Value, so
// that a term's Weight means the same whatever the loss: KL stores
// ½(X ⊘ UVᵀ)ᵀU and ½·1 1ᵀU, and GNMF with it minimizes D(X‖UVᵀ) +
// α tr(VᵀLV).
type Loss interface {
	// Dims returns D (rows of U) and N (rows of V).
	Dims() (d, n int)
	// UGradTo stores the negative and positive parts of ½∂/∂U at (U, V)
	// into neg and pos (both D×K).
	UGradTo(neg, pos, u, v *mat.Dense)
	// VGradTo stores the negative and positive parts of ½∂/∂V at (U, V)
	// into neg and pos (both N×K).
	VGradTo(neg, pos, u, v *mat.Dense)
	// Value returns the loss at (U, V).
	Value(u, v *mat.Dense) float64
}

// FastLoss is a Loss that can evaluate itself cheaply from the products
// its last VGradTo call computed. The engine calls LastValue only when U has
// not changed since that call.
type FastLoss interface {
	Loss
	// LastValue returns the loss at (U, V), where U is the basis given to
	// the last VGradTo call.
	LastValue(v *mat.Dense) float64
}

// Term is a regularizer added to the loss, such as a graph term
// Weight·tr(Vᵀ L V) on a block of V's columns.
type Term interface {
	// Name identifies the term in Stats.
	Name() string
	// AddVGrad adds the negative and positive parts of the term's ½∂/∂V
	// at V into neg and pos (both N×K).
	AddVGrad(neg, pos, v *mat.Dense)
	// Value returns the term's contribution to the objective at V.
	Value(v *mat.Dense) float64
}

// UTerm is a Term that also depends on U (for example, terms written on a
// column-normalized basis).
type UTerm interface {
	Term
	// AddUGrad adds the negative and positive parts of ½∂/∂U at (U, V)
	// into neg and pos (both D×K).
	AddUGrad(neg, pos, u, v *mat.Dense)
}

// diagUTerm is a UTerm whose U parts are diagonal scalings of U, fixed for
// an engine run that keeps V fixed: U·diag(p) into pos and U·diag(q) into
// neg (frozenUTerm, the online U step's).
type diagUTerm interface {
	UTerm
	// uDiag writes p and q (K entries each) and reports whether the term
	// adds anything: false when AddUGrad adds nothing (p and q unwritten).
	uDiag(p, q []float64) bool
}

// heldNegULoss is a Loss whose U gradient's negative part is a matrix it
// holds rather than computes (statsLoss: the statistics B = XV).
type heldNegULoss interface {
	Loss
	// uPosTo stores the positive part of ½∂/∂U at U into pos and returns
	// the negative part, D×K, which the caller only reads.
	uPosTo(pos, u *mat.Dense) *mat.Dense
}

// RowsLoss is a Loss that can compute V's gradient parts for some rows
// only, so that an online update of a few rows costs in proportion to them.
type RowsLoss interface {
	Loss
	// VGradRowsTo stores the gradient parts of the given rows of V into
	// the same rows of neg and pos, leaving other rows untouched.
	VGradRowsTo(neg, pos, u, v *mat.Dense, rows []int)
}

// RowsTerm is a Term that can add its V gradient for some rows only.
type RowsTerm interface {
	Term
	// AddVGradRows adds the gradient parts of the given rows of V into the
	// same rows of neg and pos, leaving other rows untouched.
	AddVGradRows(neg, pos, v *mat.Dense, rows []int)
}

// Normalization says when the columns of U are rescaled to unit Euclidean
// norm, with V's columns scaled inversely so that UVᵀ is unchanged.
type Normalization int

const (
	// NormalizeNone never rescales.
	NormalizeNone Normalization = iota
	// NormalizeAtEnd rescales once after the last update, as Cai's GNMF
	// code does. The objective of graph-regularized methods is not invariant
	// to this rescaling, so it is left out of the iterations.
	NormalizeAtEnd
	// NormalizeEachIter rescales after every U update (methods whose
	// objective is written on a column-normalized basis).
	NormalizeEachIter
)

// Stats describes one iteration of the engine.
type Stats struct {
	// Iter counts completed iterations, from 1.
	Iter int
	// Objective is the loss plus all terms after the iteration.
	Objective float64
	// Parts holds the loss (first) and each term's value, in order.
	Parts []float64
	// Names labels Parts: "loss", then each term's Name.
	Names []string
}

// VStepper is an inner step that updates V in place, given U, in place of
// the engine's multiplicative V update. StepV must keep v non-negative and
// must not increase the objective (loss plus terms) at fixed u; the engine
// then computes the objective afresh, and Engine.Run's guarantees (the
// convergence test, DivergedError) hold as for its own update.
type VStepper interface {
	StepV(u, v *mat.Dense)
}

// Result summarizes an Engine run.
type Result struct {
	// Iters is the number of iterations run.
	Iters int
	// Objective is the final objective. It is left zero by a run with
	// Rows set or FixV, a negative Tol and no Callback (an online step).
	Objective float64
	// Converged reports whether the relative change fell below Tol.
	Converged bool
	// Warnings collects numerical trouble that did not stop the run.
	Warnings []error
	// Float32 reports whether the loss's products with X ran in float32
	// (Frobenius.Float32 with dense X on kernels that serve it), so a
	// caller can tell which precision a fit asked for with Float32 ran in.
	Float32 bool
}

// ErrDiverged is wrapped by every error of a fit whose objective became
// NaN or infinite or ran away to −∞ (see DivergedError).
var ErrDiverged = errors.New("model: objective diverged")

// DivergedError reports a fit stopped because its objective became NaN or
// infinite, or ran away to −∞: it fell below −10 times its scale (its
// magnitude at the start, or its largest positive value since). The loss and every attracting term are non-negative, so a
// negative objective is the gain of repelling terms (DGNMF's inter-class
// graph, SSKNMF's signed graph, the penalty graphs); a gain larger than all
// the fit started from comes from codes scaled up for the repulsion's sake,
// which the multiplicative updates then do without bound (the objective is
// unbounded below). Nothing the fit produced is usable then.
//
// It unwraps to ErrDiverged.
type DivergedError struct {
	// Method names the method ("SSKNMF"); empty when Engine.Run returns it.
	Method string
	// Iter is the iteration at which it was detected, from 1 (0: the
	// starting point).
	Iter int
	// Objective is the objective then.
	Objective float64
	// Hint says what to change, such as "lower Alpha"; it may be empty.
	Hint string
}

func (e *DivergedError) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	if e.Method != "" {
		b.WriteString(e.Method + ": ")
	}
	what := "diverging"
	if math.IsNaN(e.Objective) || math.IsInf(e.Objective, 0) {
		what = "not finite"
	}
	fmt.Fprintf(&b, "objective %s (%.3g at iteration %d)", what, e.Objective, e.Iter)
	if e.Hint != "" {
		b.WriteString(": " + e.Hint)
	}
	return b.String()
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

// diverged names the method and the hint in err if it is a DivergedError,
// and returns err.
func diverged(err error, method, hint string) error {
	var d *DivergedError
	if errors.As(err, &d) {
		d.Method, d.Hint = method, hint
	}
	return err
}

// runawayFactor is how far below zero, relative to the objective's scale,
// an objective may fall before it counts as running away. A bounded
// problem's repelling terms gain less than what the fit started from;
// a runaway grows geometrically (about 2× per iteration for SSKNMF's
// Laplacian form on the digits), so a factor of 10 costs a few iterations
// of detection and leaves room for bounded objectives that go negative.
const runawayFactor = 10

// runaway detects a diverging objective (see DivergedError).
type runaway struct {
	scale float64 // |objective at the start|, or the largest positive one since
}

// check returns a *DivergedError if f, the objective at iteration it (0:
// the starting point), is not finite, or below −runawayFactor × the
// objective's scale: its magnitude at the start, or its largest positive
// value since. Negative values do not raise the scale, so that a runaway
// cannot lift its own bar.
func (r *runaway) check(it int, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) || (it > 0 && f < -runawayFactor*r.scale) {
		return &DivergedError{Iter: it, Objective: f}
	}
	if it == 0 {
		r.scale = math.Abs(f)
	}
	r.scale = max(r.scale, f)
	return nil
}

// Engine runs multiplicative updates on U (D×K) and V (N×K) for a Loss plus
// a sum of Terms. Every algorithm in this package is an Engine with a
// particular Loss, Terms and Normalization.
//
// The update for a factor W with gradient parts (neg, pos) is
// W ← W ⊙ neg / max(pos, eps), which does not increase the objective for
// the Frobenius loss with non-negative graph terms (Lee and Seung 2001;
// Cai et al. 2011), nor for the KL divergence alone (Lee and Seung 2001;
// with graph terms, see KL).
//
// An Engine is not safe for concurrent use. It keeps its workspaces between
// calls to Run, so reuse one Engine for repeated partial updates.
type Engine struct {
	// Loss is the reconstruction part. It must be set.
	Loss Loss
	// Terms are added to the loss.
	Terms []Term
	// Normalize chooses when U's columns are normalized. Default NormalizeNone.
	Normalize Normalization
	// MaxIter bounds the iterations of one Run. If zero, it defaults to 200.
	MaxIter int
	// Tol stops a Run once |f_prev − f| ≤ Tol·|f_prev|. If zero, it
	// defaults to 1e-5; a negative Tol disables the test.
	Tol float64
	// FixU keeps U fixed (projection of new samples on a learned basis).
	FixU bool
	// FixV keeps V fixed (the U step of an online update, whose Loss
	// reads running statistics). V's gradient workspaces are then not
	// allocated.
	FixV bool
	// Rows, if non-nil, restricts V's update to these rows (online
	// updates of new samples and their graph neighbours). Other rows keep
	// their values but still enter the gradients.
	Rows []int
	// VStep, if non-nil, replaces the multiplicative update of V, the
	// inner step of a method whose V rule is not a ratio of gradient
	// parts (NGE's M-matrix solves). Rows does not restrict it.
	VStep VStepper
	// Callback, if non-nil, is called after every iteration. Returning
	// false stops the run.
	Callback func(s Stats) bool
	// Split, if set, runs the row-wise parts of each iteration at once:
	// the products with dense X (in row chunks), the graph terms'
	// products (in row blocks) and the updates themselves. split(n, body)
	// must call body on disjoint, non-empty ranges covering [0, n),
	// possibly on several goroutines, and return once all have returned
	// (pipeline.Share provides one, whose pieces go to whichever core is
	// free; pipeline.Split, one part per core). With OpenBLAS, run OpenBLAS on one
	// thread (openblas_set_num_threads(1)), or its idle threads spin on
	// the cores the parts need. VᵀX and VᵀV are summed over 8 fixed row
	// chunks, so results differ from a run without Split by rounding
	// only, and do not depend on the number of parts.
	Split func(n int, body func(lo, hi int))
	// Inner, if above 1, updates each factor Inner times per product with
	// the data: the accelerated multiplicative updates of Gillis and
	// Glineur, "Accelerated multiplicative updates and hierarchical ALS
	// algorithms for nonnegative matrix factorization", Neural Computation
	// 24(4), 2012. The first update reads the loss's gradient; the others
	// recompute only its positive part, U·VᵀV (or V·UᵀU), from the Gram
	// matrix the Frobenius loss kept, D·K² (N·K²) flops against the N·D·K
	// of a product with X. Only the Frobenius loss without Terms, Rows,
	// FixU, FixV or VStep takes it; Run returns an error otherwise.
	Inner int

	uNeg, uPos, vNeg, vPos mat.Dense
	parts                  []float64
	names                  []string
	diag                   []float64 // stepUDiag's factors: t rows of K for p, then t for q
}

func (e *Engine) maxIter() int {
	if e.MaxIter == 0 {
		return 200
	}
	return e.MaxIter
}

func (e *Engine) tol() float64 {
	if e.Tol == 0 {
		return 1e-5
	}
	return e.Tol
}

// Objective returns the loss plus all terms at (U, V), and stores the parts
// (loss first) into parts if it is non-nil and has the right length.
func (e *Engine) Objective(u, v *mat.Dense, parts []float64) float64 {
	return e.objective(u, v, parts, false)
}

func (e *Engine) objective(u, v *mat.Dense, parts []float64, fresh bool) float64 {
	var f float64
	if fl, ok := e.Loss.(FastLoss); ok && fresh {
		f = fl.LastValue(v)
	} else {
		f = e.Loss.Value(u, v)
	}
	if parts != nil {
		parts[0] = f
	}
	for i, t := range e.Terms {
		x := t.Value(v)
		if parts != nil {
			parts[i+1] = x
		}
		f += x
	}
	return f
}

// Run updates u and v in place. u must be D×K and v N×K with D and N
// those of the Loss, both non-negative; Run panics otherwise.
func (e *Engine) Run(u, v *mat.Dense) (Result, error) {
	d, n := e.Loss.Dims()
	ur, k := u.Dims()
	vr, vk := v.Dims()
	if ur != d || vr != n || vk != k {
		panic(fmt.Sprintf("model: Engine.Run: U is %d×%d and V is %d×%d, want %d×K and %d×K", ur, k, vr, vk, d, n))
	}
	for _, w := range []struct {
		m    *mat.Dense
		r, c int
		used bool
	}{{&e.uNeg, d, k, !e.FixU && !e.diagU()}, {&e.uPos, d, k, !e.FixU}, {&e.vNeg, n, k, !e.FixV && e.VStep == nil}, {&e.vPos, n, k, !e.FixV && e.VStep == nil}} {
		if w.used {
			reshapeDense(w.m, w.r, w.c)
		}
	}
	if e.Inner > 1 {
		if _, ok := e.Loss.(*Frobenius); !ok || len(e.Terms) > 0 || e.Rows != nil || e.FixU || e.FixV || e.VStep != nil {
			return Result{}, fmt.Errorf("model: Engine.Inner %d needs the Frobenius loss alone, no Rows, FixU, FixV or VStep", e.Inner)
		}
	}
	if len(e.parts) != len(e.Terms)+1 {
		e.parts = make([]float64, len(e.Terms)+1)
		e.names = make([]string, len(e.Terms)+1)
	}
	e.names[0] = "loss"
	for i, t := range e.Terms {
		e.names[i+1] = t.Name()
	}

	if su, ok := e.Loss.(splitUser); ok {
		su.setSplit(e.Split)
	}
	for _, t := range e.Terms {
		if su, ok := t.(splitUser); ok {
			su.setSplit(e.Split)
		}
	}
	var res Result
	tol := e.tol()
	// Without a tolerance or a callback nobody reads the objective between
	// iterations: compute it once at the end (online updates rely on this).
	track := tol > 0 || e.Callback != nil
	var prev float64
	var ra runaway
	fresh := false // the loss's cached products match the current U
	if track {
		prev = e.Objective(u, v, nil)
		if err := ra.check(0, prev); err != nil {
			return res, err
		}
	}
	for it := 1; it <= e.maxIter(); it++ {
		if !e.FixU {
			e.stepU(u, v)
			if e.Normalize == NormalizeEachIter {
				NormalizeColumns(u, v)
			}
		}
		fresh = false
		switch {
		case e.FixV:
		case e.VStep != nil:
			e.VStep.StepV(u, v) // the loss's cached products are not refreshed
		default:
			e.stepV(u, v)
			fresh = e.Rows == nil
		}
		res.Iters = it
		if !track {
			continue
		}
		f := e.objective(u, v, e.parts, fresh)
		res.Iters, res.Objective = it, f
		if err := ra.check(it, f); err != nil {
			return res, err
		}
		if e.Callback != nil && !e.Callback(Stats{Iter: it, Objective: f, Parts: e.parts, Names: e.names}) {
			break
		}
		if tol > 0 && math.Abs(prev-f) <= tol*math.Abs(prev) {
			res.Converged = true
			break
		}
		prev = f
	}
	if r, ok := e.Loss.(interface{ ranFloat32() bool }); ok {
		res.Float32 = r.ranFloat32()
	}
	if e.Normalize == NormalizeAtEnd && !e.FixU {
		NormalizeColumns(u, v)
		res.Objective = e.Objective(u, v, nil)
		if math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) {
			return res, &DivergedError{Iter: res.Iters, Objective: res.Objective}
		}
	} else if !track && e.Rows == nil && !e.FixV {
		// A row-restricted run, or one with V fixed, without Tol or
		// Callback is an online step whose cost must not scale with N: its
		// objective is not computed.
		res.Objective = e.objective(u, v, nil, fresh)
		if math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) {
			return res, &DivergedError{Iter: res.Iters, Objective: res.Objective}
		}
	}
	return res, nil
}

func (e *Engine) stepU(u, v *mat.Dense) {
	if e.diagU() {
		e.stepUDiag(u)
		return
	}
	e.Loss.UGradTo(&e.uNeg, &e.uPos, u, v)
	for _, t := range e.Terms {
		if ut, ok := t.(UTerm); ok {
			ut.AddUGrad(&e.uNeg, &e.uPos, u, v)
		}
	}
	e.mulUpdate(u, &e.uNeg, &e.uPos, nil)
	for range e.Inner - 1 { // Run has checked the loss: U·VᵀV from its VᵀV
		gemm.MulTo(&e.uPos, u, &e.Loss.(*Frobenius).vtv, e.Split != nil)
		e.mulUpdate(u, &e.uNeg, &e.uPos, nil)
	}
}

// reshapeDense makes m r×c (r, c > 0), keeping its backing array when
// that holds r·c entries: an online step whose row count changes from one
// step to the next (the phantom's seen rows) then reuses its memory
// instead of touching fresh pages. A kept array's entries are left as they
// were, as they are when the shape is unchanged: every caller writes them
// before it reads them. A new array has room for a quarter more.
func reshapeDense(m *mat.Dense, r, c int) {
	if mr, mc := m.Dims(); !m.IsEmpty() && mr == r && mc == c {
		return
	}
	data := m.RawMatrix().Data
	if n := r * c; cap(data) >= n {
		data = data[:n]
	} else {
		data = make([]float64, n, n+n/4)
	}
	*m = *mat.NewDense(r, c, data)
}

// diagU reports whether stepUDiag applies: the loss holds its U
// gradient's negative part (heldNegULoss) and every U term is a diagonal
// scaling (diagUTerm).
func (e *Engine) diagU() bool {
	if _, ok := e.Loss.(heldNegULoss); !ok || e.Inner > 1 {
		return false
	}
	for _, t := range e.Terms {
		if _, ok := t.(UTerm); ok {
			if _, ok := t.(diagUTerm); !ok {
				return false
			}
		}
	}
	return true
}

// stepUDiag is stepU where diagU holds, in one pass over U's rows
// (vec.MulDivDiag) after the loss's positive part: no copy of the
// negative part, no pass of each term. U gets the bits stepU's passes
// would give it, as long as the negative part holds no −0 (each term adds
// +0 to the columns it leaves, where stepU adds nothing).
func (e *Engine) stepUDiag(u *mat.Dense) {
	_, k := u.Dims()
	var t int
	for _, tm := range e.Terms {
		if _, ok := tm.(diagUTerm); ok {
			t++
		}
	}
	e.diag = slices.Grow(e.diag[:0], 2*t*k)[:2*t*k]
	ps, qs := e.diag[:t*k], e.diag[t*k:]
	n := 0
	for _, tm := range e.Terms {
		if dt, ok := tm.(diagUTerm); ok && dt.uDiag(ps[n*k:(n+1)*k], qs[n*k:(n+1)*k]) {
			n++
		}
	}
	ps, qs = ps[:n*k], qs[:n*k]
	neg := e.Loss.(heldNegULoss).uPosTo(&e.uPos, u)
	ur, nr, pr := u.RawMatrix(), neg.RawMatrix(), e.uPos.RawMatrix()
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			vec.MulDivDiag(ur.Data[i*ur.Stride:i*ur.Stride+k], nr.Data[i*nr.Stride:i*nr.Stride+k],
				pr.Data[i*pr.Stride:i*pr.Stride+k], ps, qs, n, eps)
		}
	}
	if e.Split == nil {
		rows(0, ur.Rows)
		return
	}
	e.Split(ur.Rows, rows)
}

// mulUpdate is mulUpdate on all rows in parts (Split), or on the given
// rows.
func (e *Engine) mulUpdate(w, neg, pos *mat.Dense, rows []int) {
	if rows != nil || e.Split == nil {
		mulUpdate(w, neg, pos, rows)
		return
	}
	r, _ := w.Dims()
	e.Split(r, func(lo, hi int) {
		mulUpdate(rowsOf(w, lo, hi), rowsOf(neg, lo, hi), rowsOf(pos, lo, hi), nil)
	})
}

func (e *Engine) stepV(u, v *mat.Dense) {
	rl, ok := e.Loss.(RowsLoss)
	if e.Rows != nil && ok {
		rl.VGradRowsTo(&e.vNeg, &e.vPos, u, v, e.Rows)
	} else {
		e.Loss.VGradTo(&e.vNeg, &e.vPos, u, v)
	}
	for _, t := range e.Terms {
		if rt, ok := t.(RowsTerm); ok && e.Rows != nil {
			rt.AddVGradRows(&e.vNeg, &e.vPos, v, e.Rows)
		} else {
			t.AddVGrad(&e.vNeg, &e.vPos, v)
		}
	}
	e.mulUpdate(v, &e.vNeg, &e.vPos, e.Rows)
	for range e.Inner - 1 { // V·UᵀU from the loss's UᵀU
		gemm.MulTo(&e.vPos, v, &e.Loss.(*Frobenius).utu, e.Split != nil)
		e.mulUpdate(v, &e.vNeg, &e.vPos, nil)
	}
}

// mulUpdate sets w ← w ⊙ neg / max(pos, eps) on the given rows (all if nil).
// Negative parts below zero (possible only through rounding) are clamped so
// that w stays non-negative.
func mulUpdate(w, neg, pos *mat.Dense, rows []int) {
	wr := w.RawMatrix()
	nr := neg.RawMatrix()
	pr := pos.RawMatrix()
	row := func(i int) {
		wi := wr.Data[i*wr.Stride : i*wr.Stride+wr.Cols]
		ni := nr.Data[i*nr.Stride : i*nr.Stride+wr.Cols]
		pi := pr.Data[i*pr.Stride : i*pr.Stride+wr.Cols]
		vec.MulDiv(wi, ni, pi, eps)
	}
	if rows == nil {
		for i := 0; i < wr.Rows; i++ {
			row(i)
		}
		return
	}
	for _, i := range rows {
		row(i)
	}
}

// tinyNorm is the column norm below which a basis column counts as dead:
// 1/tinyNorm is still far from overflow, and a column that small carries
// nothing the data could show.
const tinyNorm = 1e-150

// NormalizeColumns scales each column of U (D×K) to unit Euclidean norm and
// multiplies the matching column of V (N×K) by the old norm, so that UVᵀ is
// unchanged. A column whose norm is below 1e-150 (multiplicative updates
// drove it to zero) is set to zero in U and in V, since rescaling it would
// overflow.
func NormalizeColumns(u, v *mat.Dense) {
	_, k := u.Dims()
	nrm := columnNorms(u)
	scale := make([]float64, k)
	for j, n := range nrm {
		if n < tinyNorm {
			nrm[j] = 0
		} else {
			scale[j] = 1 / n
		}
	}
	scaleCols(u, scale)
	if v != nil {
		scaleCols(v, nrm)
	}
}

// columnNorms returns the Euclidean norm of each column of m, walking m by
// rows. Each column's norm is gonum's (mat.Norm of the column, BLAS
// Dnrm2's scaled sum of squares) bit for bit: the same operations on the
// same values in the same order, kept from fusing by the conversions.
func columnNorms(m *mat.Dense) []float64 {
	raw := m.RawMatrix()
	if raw.Cols == 1 { // a contiguous column: Dnrm2's unit-stride kernel
		return []float64{mat.Norm(m.ColView(0), 2)}
	}
	scale := make([]float64, raw.Cols)
	ssq := make([]float64, raw.Cols)
	for j := range ssq {
		ssq[j] = 1
	}
	var nan, inf []bool
	for i := 0; i < raw.Rows; i++ {
		for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if x == 0 {
				continue
			}
			a := math.Abs(x)
			if math.IsNaN(a) || math.IsInf(a, 1) {
				if nan == nil {
					nan, inf = make([]bool, raw.Cols), make([]bool, raw.Cols)
				}
				nan[j] = nan[j] || math.IsNaN(a)
				inf[j] = inf[j] || math.IsInf(a, 1)
			}
			if a > scale[j] {
				r := scale[j] / a
				ssq[j] = float64(float64(ssq[j]*r)*r) + 1
				scale[j] = a
			} else {
				r := a / scale[j]
				ssq[j] += float64(r * r)
			}
		}
	}
	out := make([]float64, raw.Cols)
	for j := range out {
		switch {
		case nan != nil && nan[j]:
			out[j] = math.NaN()
		case nan != nil && inf[j]:
			out[j] = math.Inf(1)
		case scale[j] != 0:
			out[j] = math.Sqrt(ssq[j]) * scale[j]
		}
	}
	return out
}

// scaleCols multiplies column j of m by s[j], walking m by rows.
func scaleCols(m *mat.Dense, s []float64) {
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] *= s[j]
		}
	}
}
