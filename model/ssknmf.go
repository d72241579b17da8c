package model

import (
	"fmt"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// SSKNMF is the semi-supervised extension of KNMF (An, thesis §2.3). It
// minimizes
//
//	‖X − UVᵀ‖² + α tr(Vᵀ L¹ V) + β tr(Vᵀ L² V),   U, V ≥ 0,
//
// where W¹ is the signed labeled graph (+1 between intra-class k-NN pairs
// of labeled samples, −1 between inter-class k-NN pairs, 0 elsewhere and
// for unlabeled samples) and W² the k-NN graph over all samples. The thesis
// uses one α for both; β is exposed separately. As a composition it is the Frobenius loss plus graph
// terms α·W¹ and β·W²; GraphTerm moves the negative
// entries of W¹ (and the matching degree part) to the other side of the
// multiplicative update, which the thesis' rule (2.11) leaves implicit.
//
// Like DGNMF, the repelling part of W¹ makes the thesis' objective
// unbounded below, so both terms are written on a column-normalized basis
// (NormalizedGraphTerm, U normalized after every U update). That is not
// enough: in the Laplacian form an inter-class edge contributes
// −½‖v_i − v_j‖², which rewards large codes, and once enough samples are
// labeled the objective is unbounded below for any α (on the digits with
// every training sample labeled it ran to −1e88 in 200 iterations, the
// codes to 3e43). SSKNMF therefore writes the inter-class edges as the
// inner product v_iᵀv_j (GraphTerm.DotRepulsion): for V ≥ 0 the term is
// bounded below by 0, and samples of different classes are pushed onto
// different columns of V instead of apart in scale, at no cost in
// accuracy with few labels (BENCHMARKS.md, "Defaults and how they were
// chosen").
//
// SSKNMF is not safe for concurrent use.
type SSKNMF struct {
	Common
	// Alpha is α, the weight of the signed labeled graph W¹. If zero, it
	// defaults to 1 (measured on a validation split of the digits; α = 10
	// runs away there). It must not be negative.
	Alpha float64
	// Beta is β, the weight of the k-NN graph W² over all samples. If
	// zero, it defaults to ssknmfBeta, 10 (validation split of the digits).
	// It must not be negative.
	Beta float64
	// LabelNeighbors is the k of the intra- and inter-class neighbourhoods
	// in W¹. If zero, it defaults to 5.
	LabelNeighbors int
	// Neighbors is the k of the k-NN graph W². If zero, it defaults to 5
	// (Cai et al.'s GNMF default).
	Neighbors int

	fitted
	eng    Engine
	w1, w2 *sparse.CSR
}

var _ Method = (*SSKNMF)(nil)

// ssknmfBeta is SSKNMF's default β, the k-NN graph's weight, in batch;
// online on sparse samples too (Online.onlineSSKNMFBeta).
const ssknmfBeta = 10

// Fit factorizes x using labels (one per sample, −1 = unlabeled; nil means
// none, and then only W² acts, as in GNMF). It returns an error wrapping
// ErrDiverged (a *DivergedError) if the objective is not finite or runs
// away (lower Alpha or Beta).
func (m *SSKNMF) Fit(x Data, labels []int) error {
	m.ok = false
	_, n := x.Dims()
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	if m.Alpha < 0 || m.Beta < 0 || m.Neighbors < 0 || m.LabelNeighbors < 0 {
		return fmt.Errorf("model: SSKNMF: negative hyperparameter")
	}
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	kl := orDefaultInt(m.LabelNeighbors, labelNeighbors)
	if m.w1, err = signedLabelGraph(x, ls, kl, kl, m.Metric); err != nil {
		return err
	}
	if m.w2, err = knnGraph(x, orDefaultInt(m.Neighbors, 5), m.Metric, m.Split); err != nil {
		return err
	}
	return m.fitGraphs(x)
}

// terms returns SSKNMF's terms on the graphs W¹ and W²: α·W¹ and β·W² on
// all columns, written on a column-normalized basis, W¹'s repulsion in its
// inner-product form (GraphTerm.DotRepulsion).
func (m *SSKNMF) terms(w1, w2 *sparse.CSR) []Term {
	return []Term{
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "labeled", Weight: orDefault(m.Alpha, 1), S: w1, DotRepulsion: true}, Split: true},
		&NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "knn", Weight: orDefault(m.Beta, ssknmfBeta), S: w2}, Split: true},
	}
}

// fitGraphs runs the updates from the initialized U, V on the graphs
// m.w1 and m.w2 (see DGNMF.fitGraphs).
func (m *SSKNMF) fitGraphs(x Data) error {
	loss, err := m.loss(x)
	if err != nil {
		return err
	}
	m.eng = Engine{Loss: loss, Terms: m.terms(m.w1, m.w2), Normalize: NormalizeEachIter}
	NormalizeColumns(&m.u, &m.v)
	return diverged(m.run(&m.fitted, &m.eng), "SSKNMF", "lower Alpha or Beta")
}

// Graphs returns W¹ (signed, labeled) and W² (k-NN) of the last Fit.
func (m *SSKNMF) Graphs() (w1, w2 *sparse.CSR) { return m.w1, m.w2 }
