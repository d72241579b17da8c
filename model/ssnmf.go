package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/vec"
)

// SSNMF is semi-supervised NMF with a label factor (Lee, Yoo and Choi,
// "Semi-supervised nonnegative matrix factorization", IEEE Signal
// Processing Letters 17(1), 2010; Haddock, Kassab, Needell et al.,
// "Semi-supervised NMF: models and methods for classification", 2020, the
// Frobenius model). In this package's orientation (X is D×N, the codes
// V are N×K) it minimizes
//
//	‖X − AVᵀ‖² + λ‖M ⊙ (Y − BVᵀ)‖² + α tr(Vᵀ L V),   A, B, V ≥ 0,
//
// where Y (C×N) holds the one-hot labels, M masks the unlabeled samples'
// columns out, A (D×K) is the basis and B (C×K) the label factor, so that
// B·v is a linear classifier on the code v. The last term is GNMF's graph
// term on the k-NN graph of all samples (the default; a negative Alpha
// leaves it out), which carries the unlabeled structure: with 10 labels
// per class the plain model's B fits the labeled samples and classifies
// held-out ones at 0.2–0.8 on the digits, the graph-regularized one at
// 0.96–0.98 (BENCHMARKS.md, "What the codes add", SSNMF).
//
// On the engine (docs/DESIGN.md §2–3: one engine, methods as terms) the
// label block is a loss beside the data: the engine's basis is A stacked
// on B ((D+C)×K), and its multiplicative updates are exactly the
// multiplicative updates both papers give for the Frobenius model (here
// with S = Vᵀ transposed into this package's V; TestSSNMFOneIterationByHand
// checks one iteration against them written out on A, B and S):
//
//	A ← A ⊙ XV / AVᵀV
//	B ← B ⊙ (M⊙Y)V / (M⊙BVᵀ)V
//	V ← V ⊙ (XᵀA + λ(M⊙Y)ᵀB + αSV) / (VAᵀA + λ(M⊙BVᵀ)ᵀB + αDV)
//
// which never increase the objective (Lee and Seung 2001 for the stacked
// Frobenius loss; Cai et al. 2011 with the graph term).
//
// Lambda is given relative to the data's scale: the label block's weight is
// λ_eff = Lambda · ‖X‖²_F / N, so that at Lambda = 1 a labeled sample coded
// into the wrong class (a label error of about 1) costs what an average
// sample's whole squared norm does.
//
// After the fit A's columns are scaled to unit norm (B's divided and V's
// multiplied by the same factors, so AVᵀ and BVᵀ are unchanged).
//
// SSNMF is not safe for concurrent use.
type SSNMF struct {
	Common
	// Lambda is λ, the weight of the label block relative to the data's
	// scale (see above). If zero, it defaults to DefaultSSNMFLambda. It
	// must not be negative.
	Lambda float64
	// Alpha is α, the weight of the k-NN graph term. If zero, it defaults
	// to DefaultSSNMFAlpha; a negative Alpha leaves the term out (the
	// plain SSNMF of Lee et al. and Haddock et al.).
	Alpha float64
	// Neighbors is the k of the k-NN graph. If zero, it defaults to 5.
	Neighbors int

	fitted
	b      mat.Dense // C×K label factor
	x      Data
	lambda float64 // λ_eff of the last fit
	alpha  float64 // α of the last fit (0: no graph term)
	eng    Engine
}

// DefaultSSNMFLambda and DefaultSSNMFAlpha are SSNMF's defaults, chosen on
// the validation splits of the digits' pools (seeds 1 and 2, 10 labels per
// class, held-out accuracy of argmax(B·s); BENCHMARKS.md, "What the codes
// add", SSNMF): without the graph term the label factor fits the 100
// labeled samples and the held-out accuracy is 0.2–0.8; with α = 100,
// every λ from 100 to 1000 scores within a point of the best.
const (
	DefaultSSNMFLambda = 300
	DefaultSSNMFAlpha  = DefaultGNMFAlpha
)

var _ Method = (*SSNMF)(nil)

// Fit factorizes x using labels (one class in [0, C) per sample, −1 =
// unlabeled; C is the largest class + 1). At least one sample must be
// labeled (else an error wrapping ErrNoLabels). It returns an error
// wrapping ErrDiverged if the objective is not finite. The method keeps x
// until the next Fit, for graph-aware projection (Projector).
func (m *SSNMF) Fit(x Data, labels []int) error {
	m.ok = false
	d, n := x.Dims()
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	if len(ls.ids) == 0 {
		return fmt.Errorf("model: SSNMF: %w (its label factor needs at least one)", ErrNoLabels)
	}
	if m.Lambda < 0 || m.Neighbors < 0 || math.IsNaN(m.Lambda) || math.IsInf(m.Lambda, 0) || math.IsNaN(m.Alpha) || math.IsInf(m.Alpha, 0) {
		return fmt.Errorf("model: SSNMF: negative or non-finite hyperparameter (Lambda %g, Alpha %g, Neighbors %d)", m.Lambda, m.Alpha, m.Neighbors)
	}
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	c := 0
	for _, y := range ls.y {
		c = max(c, y+1)
	}
	k := m.Rank
	m.x = x
	m.lambda = orDefault(m.Lambda, DefaultSSNMFLambda) * x.SqNorm() / float64(n)
	m.alpha = max(orDefault(m.Alpha, DefaultSSNMFAlpha), 0)
	inner, err := m.loss(x)
	if err != nil {
		return err
	}
	lb := newLabelBlock(inner, d, c, m.lambda, labels, ls.ids)
	// The engine's basis is [A; B]: A from the initialization, B the least
	// squares scale of the labeled codes' class sums (positive everywhere,
	// since a multiplicative update never moves an entry off zero).
	stack := mat.NewDense(d+c, k, nil)
	stack.Slice(0, d, 0, k).(*mat.Dense).Copy(&m.u)
	initLabelFactor(stack.Slice(d, d+c, 0, k).(*mat.Dense), &m.v, labels, ls.ids)
	m.u.Reset()
	m.u.CloneFrom(stack)

	m.eng = Engine{Loss: lb}
	if m.alpha > 0 {
		w, err := knnGraph(x, orDefaultInt(m.Neighbors, 5), m.Metric, m.Split)
		if err != nil {
			return err
		}
		m.eng.Terms = []Term{&GraphTerm{Label: "graph", Weight: m.alpha, S: w}}
	}
	err = m.run(&m.fitted, &m.eng)
	// Split [A; B] into the basis A (m.u) and the label factor B.
	full := mat.DenseCopyOf(&m.u)
	m.u.Reset()
	m.u.CloneFrom(full.Slice(0, d, 0, k))
	m.b.Reset()
	m.b.CloneFrom(full.Slice(d, d+c, 0, k))
	if err != nil {
		m.ok = false
		return diverged(err, "SSNMF", "lower Lambda or Alpha")
	}
	// Unit columns of A, B and V rescaled to match.
	nrm := columnNorms(&m.u)
	s := make([]float64, k)
	for j, n := range nrm {
		if n >= tinyNorm {
			s[j] = 1 / n
		}
		if s[j] == 0 { // a dead (or infinite) column: V's scaled by n·0
			nrm[j] *= 0
		}
	}
	scaleCols(&m.u, s)
	scaleCols(&m.b, s)
	scaleCols(&m.v, nrm)
	return nil
}

// LabelBasis returns the label factor B (C×K): B·v scores the classes of
// a code v. It is owned by the method and valid until the next Fit. It
// panics with ErrNotFitted before a successful Fit.
func (m *SSNMF) LabelBasis() *mat.Dense {
	if !m.ok {
		panic(ErrNotFitted)
	}
	return &m.b
}

// EffectiveLambda returns λ_eff, the label block's absolute weight in the last fit.
func (m *SSNMF) EffectiveLambda() float64 { return m.lambda }

// ClassifyCodes returns argmax_c (B·v)_c for each row v of codes (N×K),
// the lowest class on ties (class 0 for a zero code).
func (m *SSNMF) ClassifyCodes(codes *mat.Dense) []int {
	b := m.LabelBasis()
	c, k := b.Dims()
	n, ck := codes.Dims()
	if ck != k {
		panic(fmt.Sprintf("model: SSNMF.ClassifyCodes: codes have %d columns, B has %d", ck, k))
	}
	out := make([]int, n)
	for i := 0; i < n; i++ {
		v := codes.RawRowView(i)
		best, arg := math.Inf(-1), 0
		for cl := 0; cl < c; cl++ {
			if s := vec.Dot(b.RawRowView(cl), v); s > best {
				best, arg = s, cl
			}
		}
		out[i] = arg
	}
	return out
}

// PredictTrain returns the transductive classes of the training samples,
// argmax(B·v_i) on their fitted codes.
func (m *SSNMF) PredictTrain() []int { return m.ClassifyCodes(m.Codes()) }

// Predict codes x's samples on A by the projection p and returns
// argmax(B·s) for each.
func (m *SSNMF) Predict(x Data, p Projection) ([]int, error) {
	var s mat.Dense
	if err := m.Projector(p).ProjectTo(&s, x); err != nil {
		return nil, err
	}
	return m.ClassifyCodes(&s), nil
}

// Projector returns a projector of new samples on the basis A. Graph-aware
// projection (ProjectGraph) uses the k-NN graph of the training samples
// with the training α when the fit had the graph term, and falls back to
// NNLS otherwise.
func (m *SSNMF) Projector(p Projection) *Projector {
	pr := &Projector{Method: p, U: m.Basis(), TrainCodes: m.Codes(), Alpha: m.alpha, Loss: m.Loss}
	if p == ProjectGraph {
		if m.alpha == 0 {
			pr.Method = ProjectNNLS
		} else {
			q := &Query{Train: m.x, K: orDefaultInt(m.Neighbors, 5)}
			pr.Neighbors = q.Weights
		}
	}
	return pr
}

// initLabelFactor stores into b (C×K) the class sums of the labeled codes,
// Y_M V, scaled by the least squares factor that best fits Y_M ≈ B V_Mᵀ,
// plus a floor of 1e-3 of its mean so that no entry starts at zero.
func initLabelFactor(b, v *mat.Dense, labels []int, ids []int) {
	c, k := b.Dims()
	b.Zero()
	for _, i := range ids {
		row := b.RawRowView(labels[i])
		for j, x := range v.RawRowView(i) {
			row[j] += x
		}
	}
	// s minimizes Σ_i ‖e_{y_i} − s B v_i‖²: s = Σ (Bv_i)_{y_i} / Σ ‖Bv_i‖².
	var num, den float64
	bv := make([]float64, c)
	for _, i := range ids {
		vi := v.RawRowView(i)
		for cl := 0; cl < c; cl++ {
			bv[cl] = vec.Dot(b.RawRowView(cl), vi)
			den += bv[cl] * bv[cl]
		}
		num += bv[labels[i]]
	}
	s := 1.0
	if den > 0 && num > 0 {
		s = num / den
	}
	b.Scale(s, b)
	mean := mat.Sum(b) / float64(c*k)
	if mean <= 0 {
		mean = 1
	}
	raw := b.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] += 1e-3 * mean
	}
}

// labelBlock is the loss ‖X − AVᵀ‖² + λ‖M ⊙ (Y − BVᵀ)‖² on the stacked
// basis U = [A; B] ((D+C)×K): the inner loss on the first D rows of U, the
// masked one-hot labels on the last C. Its gradient parts are halved as
// every Loss's (engine.go).
type labelBlock struct {
	inner  Loss
	d, c   int
	lambda float64
	labels []int // per sample, −1 = unlabeled
	ids    []int // the labeled samples

	g     mat.Dense  // K×K, V_MᵀV_M or BᵀB
	lastU *mat.Dense // the basis of the last VGradTo (LastValue)
}

var _ FastLoss = (*labelBlock)(nil)

func newLabelBlock(inner Loss, d, c int, lambda float64, labels, ids []int) *labelBlock {
	return &labelBlock{inner: inner, d: d, c: c, lambda: lambda, labels: labels, ids: ids}
}

func (l *labelBlock) Dims() (d, n int) {
	_, n = l.inner.Dims()
	return l.d + l.c, n
}

// top and bottom are the A and B rows of a (D+C)×K matrix, as views
// (contiguous: every column is kept).
func (l *labelBlock) top(m *mat.Dense) *mat.Dense {
	_, k := m.Dims()
	return m.Slice(0, l.d, 0, k).(*mat.Dense)
}

func (l *labelBlock) bottom(m *mat.Dense) *mat.Dense {
	_, k := m.Dims()
	return m.Slice(l.d, l.d+l.c, 0, k).(*mat.Dense)
}

// UGradTo stores the inner loss's parts for A, and λ(M⊙Y)V (neg) and
// λB(V_MᵀV_M) (pos) for B.
func (l *labelBlock) UGradTo(neg, pos, u, v *mat.Dense) {
	l.inner.UGradTo(l.top(neg), l.top(pos), l.top(u), v)
	_, k := v.Dims()
	nb, pb := l.bottom(neg), l.bottom(pos)
	nb.Zero()
	l.g.Reset()
	l.g.ReuseAs(k, k)
	l.g.Zero()
	g := l.g.RawMatrix()
	for _, i := range l.ids {
		vi := v.RawRowView(i)
		row := nb.RawRowView(l.labels[i])
		for a, x := range vi {
			row[a] += l.lambda * x
			ga := g.Data[a*g.Stride : a*g.Stride+k]
			for b, y := range vi {
				ga[b] += x * y
			}
		}
	}
	pb.Mul(l.bottom(u), &l.g)
	pb.Scale(l.lambda, pb)
}

// VGradTo adds λ B_{y_i} (neg) and λ v_i BᵀB (pos) to the inner loss's
// parts on the labeled rows.
func (l *labelBlock) VGradTo(neg, pos, u, v *mat.Dense) {
	l.inner.VGradTo(neg, pos, l.top(u), v)
	l.lastU = u
	b := l.bottom(u)
	_, k := v.Dims()
	l.g.Reset()
	l.g.ReuseAs(k, k)
	l.g.Mul(b.T(), b)
	tmp := make([]float64, k)
	tv := mat.NewVecDense(k, tmp)
	for _, i := range l.ids {
		ni, pi := neg.RawRowView(i), pos.RawRowView(i)
		for a, x := range b.RawRowView(l.labels[i]) {
			ni[a] += l.lambda * x
		}
		tv.MulVec(&l.g, mat.NewVecDense(k, v.RawRowView(i)))
		for a, x := range tmp {
			pi[a] += l.lambda * x
		}
	}
}

// labelValue returns λ Σ_{i labeled} ‖e_{y_i} − B v_i‖².
func (l *labelBlock) labelValue(u, v *mat.Dense) float64 {
	b := l.bottom(u)
	var f float64
	for _, i := range l.ids {
		vi := v.RawRowView(i)
		for cl := 0; cl < l.c; cl++ {
			r := vec.Dot(b.RawRowView(cl), vi)
			if cl == l.labels[i] {
				r -= 1
			}
			f += r * r
		}
	}
	return l.lambda * f
}

func (l *labelBlock) Value(u, v *mat.Dense) float64 {
	return l.inner.Value(l.top(u), v) + l.labelValue(u, v)
}

func (l *labelBlock) LastValue(v *mat.Dense) float64 {
	if fl, ok := l.inner.(FastLoss); ok {
		return fl.LastValue(v) + l.labelValue(l.lastU, v)
	}
	return l.Value(l.lastU, v)
}

// setSplit passes the engine's Split on to the inner loss.
func (l *labelBlock) setSplit(split func(n int, body func(lo, hi int))) {
	if su, ok := l.inner.(splitUser); ok {
		su.setSplit(split)
	}
}
