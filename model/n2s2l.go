package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// N2S2L is non-negative semi-supervised learning (Wang, Yan, Zhang and
// Zhang, "Non-Negative Semi-Supervised Learning", AISTATS 2009, §2). The
// codes are split as V = [V¹ V²]: V¹ (N×q) carries the discriminative
// information and V² (N×(K−q)) the rest of the reconstruction, and the
// objective (eq. 12) is
//
//	‖X − UVᵀ‖² + tr(Q¹V¹ᵀ(αL + βLˢ)V¹Q¹) + tr(Q²V²ᵀ(αLᵖ)V²Q²),   U, V ≥ 0,
//
// with Q = diag(‖u_m‖), L the Laplacian of MFA's intrinsic graph (labeled
// samples joined to same-class labeled samples), Lᵖ that of MFA's penalty
// graph (the shortest between-class pairs of each class) and Lˢ that of
// the k-NN graph over all samples. All three terms are positive: the
// penalty graph is minimized on V², the complement of V¹ (eq. 6), which
// approximates maximizing it on V¹.
//
// As a composition it is the Frobenius loss plus three NormalizedGraphTerms
// (split, as in eq. 20–21) on the column blocks [0, q) and [q, K), with
// U's columns normalized after every U update and the norms conveyed to V
// (eq. 35–36). The U rule is eq. 25, U ← U ⊙ (XV + UY_u⁻)/(UVᵀV + UY_u⁺),
// and the V rule eq. 44; the paper proves that eq. 12 does not increase, and
// the tests check it.
//
// N2S2L is not safe for concurrent use.
type N2S2L struct {
	Common
	// Alpha is α, the weight of the intrinsic and penalty graphs. If zero,
	// it defaults to 10, the paper's value. On three validation splits of
	// the digits pool α = 100 scored 0.959 against 0.956 (1-NN; one error
	// is 0.25%, so not a difference), and on MNIST α = β = 100 collapses
	// the codes (0.592 held-out). It must not be negative.
	Alpha float64
	// Beta is β, the weight of the k-NN smoothness graph Lˢ on V¹. If zero,
	// it defaults to 100 (the paper searches 10⁻⁶…10³; 100 measured best
	// on a validation split of the digits). It must not be negative. At
	// 100 the multiplicative updates drive V²'s columns of U to zero on
	// the digits (none at 1 or 10), leaving a rank-q factorization
	// (BENCHMARKS.md, "What the codes add").
	Beta float64
	// Q is q, the number of discriminative columns V¹. If zero, it defaults
	// to the number of classes among the labels, as in the paper. It must
	// be below Rank.
	Q int
	// IntrinsicK is k₁, the number of same-class neighbours in the intrinsic
	// graph. If zero, all same-class labeled samples are joined (the
	// paper's n_c − 1).
	IntrinsicK int
	// PenaltyPairs is k₂, the number of shortest between-class pairs per
	// class in the penalty graph. If zero, it defaults to 20 (the paper's).
	PenaltyPairs int
	// Neighbors is p, the size of the k-NN smoothness graph. If zero, it
	// defaults to 5 (the paper does not give p; 5 is Cai et al.'s GNMF
	// default).
	Neighbors int

	fitted
	eng       Engine
	s, sp, ss *sparse.CSR
	q         int
}

var _ Method = (*N2S2L)(nil)

// Fit factorizes x using labels (one per sample, −1 = unlabeled). With no
// labels, only the smoothness graph acts; Q must then be set, or Fit
// returns an error wrapping ErrNoLabels. It returns an error wrapping
// ErrDiverged if the objective runs away (lower Alpha).
func (m *N2S2L) Fit(x Data, labels []int) error {
	m.ok = false
	_, n := x.Dims()
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	if m.Alpha < 0 || m.Beta < 0 || m.Q < 0 || m.IntrinsicK < 0 || m.PenaltyPairs < 0 || m.Neighbors < 0 {
		return fmt.Errorf("model: N2S2L: negative hyperparameter")
	}
	if m.Q == 0 && len(ls.ids) == 0 {
		return fmt.Errorf("model: N2S2L: %w (set Q to fit without labels)", ErrNoLabels)
	}
	q := orDefaultInt(m.Q, ls.classes)
	if q <= 0 || q >= m.Rank {
		return fmt.Errorf("model: N2S2L: q = %d discriminative columns, want 1 ≤ q < K = %d", q, m.Rank)
	}
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	m.q = q
	k1 := m.IntrinsicK
	if k1 == 0 {
		k1 = -1
	}
	if m.s, m.sp, err = mfaGraphs(x, ls, k1, orDefaultInt(m.PenaltyPairs, 20), m.Metric); err != nil {
		return err
	}
	if m.ss, err = knnGraph(x, orDefaultInt(m.Neighbors, 5), m.Metric, m.Split); err != nil {
		return err
	}
	return m.fitGraphs(x)
}

// terms returns N²S²L's terms on the intrinsic, penalty and smoothness
// graphs with q discriminative columns: (αS + βSˢ) on [0, q) and αSᵖ on
// [q, K), written on a column-normalized basis.
func (m *N2S2L) terms(s, sp, ss *sparse.CSR, q int) []Term {
	a, b := orDefault(m.Alpha, 10), orDefault(m.Beta, 100)
	return []Term{
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "intrinsic", Weight: a, S: s, Hi: q}, Split: true},
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "smooth", Weight: b, S: ss, Hi: q}, Split: true},
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "penalty", Weight: a, S: sp, Lo: q, Hi: m.Rank}, Split: true},
	}
}

// fitGraphs runs the updates from the initialized U, V on the graphs
// m.s, m.sp and m.ss with m.q discriminative columns (see
// DGNMF.fitGraphs).
func (m *N2S2L) fitGraphs(x Data) error {
	loss, err := m.loss(x)
	if err != nil {
		return err
	}
	m.eng = Engine{Loss: loss, Terms: m.terms(m.s, m.sp, m.ss, m.q), Normalize: NormalizeEachIter}
	// Eq. 12 is written on Q; normalizing first makes Q = I, so that the
	// terms' values (taken at Q = I) are the objective from the start.
	NormalizeColumns(&m.u, &m.v)
	return diverged(m.run(&m.fitted, &m.eng), "N2S2L", "lower Alpha")
}

// DiscriminativeCols returns q, the number of columns of V¹, of the last
// Fit (Q, or its default).
func (m *N2S2L) DiscriminativeCols() int { return m.q }

// Graphs returns the intrinsic, penalty and smoothness graphs (N×N) of the
// last Fit.
func (m *N2S2L) Graphs() (s, sp, ss *sparse.CSR) { return m.s, m.sp, m.ss }

// NormalizedGraphTerm is a GraphTerm written on a column-normalized basis:
// its value is Weight·tr(Q V_bᵀ L V_b Q) = Weight·Σ_{m∈b} ‖u_m‖² (V_bᵀLV_b)_mm
// with Q = diag(‖u_m‖), as in N²S²L (eq. 12) and NGE (eq. 12). It is a
// UTerm: for fixed V it adds Weight·‖u_m‖²·c_m to the objective, whose
// half-gradient with respect to U is U·diag(Weight·c_m) (N²S²L's UY_u).
//
// Value ignores U: it is the objective only while U's columns have unit
// norm, so use it with NormalizeEachIter and normalize before the first
// iteration. The engine evaluates the objective after the V update, when
// that holds.
type NormalizedGraphTerm struct {
	GraphTerm
	// Split selects the U rule. If true, U·diag(Vᵀ(D⁺+S⁻)V) goes to the
	// denominator and U·diag(Vᵀ(D⁻+S⁺)V) to the numerator (N²S²L's Y_u⁺ and
	// Y_u⁻, eq. 20–21). If false, the exact diagonal U·diag(VᵀLV) goes to
	// the side its sign selects (NGE's D^h, eq. 15), a tighter bound.
	Split bool

	cpos, cneg []float64
}

var _ UTerm = (*NormalizedGraphTerm)(nil)

// colQuad stores, for each column m in the block, the
// repelling part cp[m] = v_mᵀ(D⁺ + S⁻)v_m and the attracting part
// cn[m] = v_mᵀ(D⁻ + S⁺)v_m, so that v_mᵀLv_m = cp[m] − cn[m].
func (t *NormalizedGraphTerm) colQuad(v *mat.Dense) (lo, hi int) {
	lo, hi = t.prepare(v)
	nb := hi - lo
	t.cpos = resize(t.cpos, nb)
	t.cneg = resize(t.cneg, nb)
	clear(t.cpos)
	clear(t.cneg)
	vr := v.RawMatrix()
	for i := 0; i < vr.Rows; i++ {
		vi := vr.Data[i*vr.Stride+lo : i*vr.Stride+hi]
		dp, dn := t.degPos[i], t.degNeg[i]
		for c, x := range vi {
			t.cpos[c] += dp * x * x
			t.cneg[c] += dn * x * x
		}
		ind, val := t.S.Row(i)
		for p, j := range ind {
			s := val[p]
			vj := vr.Data[j*vr.Stride+lo : j*vr.Stride+hi]
			if s > 0 {
				for c, x := range vi {
					t.cneg[c] += s * x * vj[c]
				}
			} else {
				for c, x := range vi {
					t.cpos[c] -= s * x * vj[c]
				}
			}
		}
	}
	return lo, hi
}

// uFactors writes the factors of the last colQuad's columns [lo, hi)
// (len(ps) = len(qs) = hi − lo) that U's columns are scaled by into the
// update's positive (ps) and negative (qs) parts: Weight·c⁺ and Weight·c⁻
// (swapped for a negative Weight), or, without Split, their difference on
// the side its sign selects.
func (t *NormalizedGraphTerm) uFactors(ps, qs []float64) {
	w := t.Weight
	rep, att := t.cpos, t.cneg
	if w < 0 {
		rep, att, w = att, rep, -w
	}
	for c := range ps {
		p, q := w*rep[c], w*att[c]
		if !t.Split {
			p, q = max(p-q, 0), max(q-p, 0)
		}
		ps[c], qs[c] = p, q
	}
}

// AddUGrad adds U·diag(Weight·c) to the sides of the update (see Split).
func (t *NormalizedGraphTerm) AddUGrad(neg, pos, u, v *mat.Dense) {
	if t.Weight == 0 {
		return
	}
	lo, hi := t.colQuad(v)
	t.addUParts(neg, pos, u, lo, hi)
}

// addUParts adds U·diag(Weight·c) for the column quadratic forms of the
// last colQuad, on the columns [lo, hi). It walks U by rows (U is
// row-major, with up to 2¹⁶ rows on documents); each entry's sum is the
// same whatever the order.
func (t *NormalizedGraphTerm) addUParts(neg, pos, u *mat.Dense, lo, hi int) {
	n := hi - lo
	var buf [128]float64 // the columns' two factors, on the stack up to K = 64
	f := buf[:]
	if 2*n > len(f) {
		f = make([]float64, 2*n)
	}
	ps, qs := f[:n], f[n:2*n]
	t.uFactors(ps, qs)
	ur, nr, pr := u.RawMatrix(), neg.RawMatrix(), pos.RawMatrix()
	for i := 0; i < ur.Rows; i++ {
		ui := ur.Data[i*ur.Stride+lo : i*ur.Stride+hi]
		pi := pr.Data[i*pr.Stride+lo : i*pr.Stride+hi]
		ni := nr.Data[i*nr.Stride+lo : i*nr.Stride+hi]
		for c, x := range ui {
			pi[c] += ps[c] * x
			ni[c] += qs[c] * x
		}
	}
}
