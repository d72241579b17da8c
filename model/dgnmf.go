package model

import (
	"fmt"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// DGNMF is discriminant graph-regularized NMF, called KNMF in An's thesis
// ("Nonnegative Matrix Factorization Regularized by k-NN Graphs", POSTECH
// 2009, §2.2). It minimizes
//
//	‖X − UVᵀ‖² + α tr(Vᵀ(L_w − L_b)V),   U, V ≥ 0,
//
// where L_w is the Laplacian of the intra-class k-NN graph W_w (labeled
// samples joined to their nearest same-class labeled samples) and L_b that
// of the inter-class k-NN graph W_b (nearest labeled samples of other
// classes). As a composition it is the Frobenius loss plus graph terms
// +α·W_w and −α·W_b on all columns of V, whose split gradients give the
// thesis' rule (2.8):
//
//	V ← V ⊙ (XᵀU + α(D_b + W_w)V) / (VUᵀU + α(D_w + W_b)V).
//
// Unlabeled samples carry no edges, so with partial labels DGNMF still
// factorizes every sample and only the labeled ones feel the graphs.
//
// The repelling term makes the thesis' objective unbounded below: U can
// shrink while V grows. On the digits with α = 0.01 the plain form runs to
// −∞ within 100 iterations. DGNMF therefore writes both graph terms on a
// column-normalized basis, as N²S²L does (NormalizedGraphTerm, U's columns
// normalized after every U update), which removes the scaling escape. For
// a fixed normalized U the objective in V is still unbounded once
// α·λ_max(L_b) exceeds λ_min(UᵀU) plus the attraction, so α must stay
// small: on the digits α = 0.01 converges and α ≥ 0.1 diverges (Fit then
// returns ErrDiverged). Only with the objective bounded does the update
// decrease it; the tests check that at the default α.
//
// DGNMF is not safe for concurrent use.
type DGNMF struct {
	Common
	// Alpha is α, the weight of both label graphs. If zero, it defaults to
	// 0.01, measured best on a validation split of the digits (the thesis
	// searches {0.01, …, 100}; on the digits α ≥ 0.1 diverges, see the type
	// documentation). It must not be negative.
	Alpha float64
	// Neighbors is k, the size of the intra- and inter-class neighbourhoods
	// (the thesis uses the same k for both, searched in 1…10). If zero, it
	// defaults to 5.
	Neighbors int

	fitted
	eng    Engine
	ww, wb *sparse.CSR
}

var _ Method = (*DGNMF)(nil)

func (m *DGNMF) alpha() float64 { return orDefault(m.Alpha, 0.01) }

func (m *DGNMF) neighbors() int { return orDefaultInt(m.Neighbors, labelNeighbors) }

// Fit factorizes x using labels (one per sample, −1 = unlabeled). It
// returns an error wrapping ErrNoLabels if no sample is labeled, and one
// wrapping ErrDiverged (a *DivergedError) if the objective runs away (lower
// Alpha).
func (m *DGNMF) Fit(x Data, labels []int) error {
	m.ok = false
	_, n := x.Dims()
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	if len(ls.ids) == 0 {
		return fmt.Errorf("model: DGNMF: %w", ErrNoLabels)
	}
	if m.Alpha < 0 || m.Neighbors < 0 {
		return fmt.Errorf("model: DGNMF: negative Alpha (%g) or Neighbors (%d)", m.Alpha, m.Neighbors)
	}
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	k := m.neighbors()
	if m.ww, m.wb, err = intraInterGraphs(x, ls, k, k, m.Metric); err != nil {
		return err
	}
	return m.fitGraphs(x)
}

// terms returns DGNMF's terms on the graphs W_w and W_b: +α·W_w and −α·W_b
// on all columns, written on a column-normalized basis.
func (m *DGNMF) terms(ww, wb *sparse.CSR) []Term {
	a := m.alpha()
	return []Term{
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "intra", Weight: a, S: ww}, Split: true},
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "inter", Weight: -a, S: wb}, Split: true},
	}
}

// fitGraphs runs the updates from the initialized U, V on the graphs
// m.ww and m.wb: the part of Fit after the graphs are built, which
// Online's first fit runs on the stream's graphs.
func (m *DGNMF) fitGraphs(x Data) error {
	loss, err := m.loss(x)
	if err != nil {
		return err
	}
	m.eng = Engine{Loss: loss, Terms: m.terms(m.ww, m.wb), Normalize: NormalizeEachIter}
	NormalizeColumns(&m.u, &m.v)
	return diverged(m.run(&m.fitted, &m.eng), "DGNMF", "lower Alpha")
}

// Graphs returns the intra-class and inter-class graphs W_w and W_b (N×N)
// of the last Fit. They are owned by m.
func (m *DGNMF) Graphs() (ww, wb *sparse.CSR) { return m.ww, m.wb }

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
