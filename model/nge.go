package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// NGE is non-negative graph embedding (Yang, Yan, Fu, Li and Huang,
// "Non-negative graph embedding", CVPR 2008) with Marginal Fisher
// Analysis' graphs. In this package's notation (U = W, V = Hᵀ) the codes
// are split as V = [V¹ V²], d and K − d columns, and the objective (eq. 12)
// is
//
//	‖X − UVᵀ‖² + α tr(Q¹V¹ᵀ(L + (β/α)Lˢ)V¹Q¹) + α tr(Q²V²ᵀLᵖV²Q²),
//
// with L MFA's intrinsic graph, Lᵖ its penalty graph and Q = diag(‖u_m‖),
// plus β tr(Q V ᵀLˢ V Q), a k-NN smoothness graph over all samples on all
// columns. The smoothness term is not in the paper (β = 0 gives the
// paper's NGE); it is GNMF's term, added for the semi-supervised setting:
// with few labels and β = 0, NGE's exact inner solves move the
// reconstruction into V², whose codes then classify poorly (BENCHMARKS.md,
// "Defaults and how they were chosen"). Sums of Laplacians keep the
// M-matrix property. These are the same NormalizedGraphTerms as N2S2L's,
// run by the same engine loop (Engine.Run); what differs is the inner V
// step (Engine.VStep):
//
//  1. U ← U ⊙ XV / (UVᵀV + U·diag(c)), c_m = α v_mᵀ L_b v_m, the row-wise
//     solution of eq. 17 (K and D^h are diagonal);
//  2. normalize U's columns and convey the norms to V (eq. 18);
//  3. for every column c of V (row of H) solve the M-matrix system
//     (diag(k_c) + G_b) v_c = Xᵀu_c, with k_c = (VUᵀU)_{·c} / V_{·c} and
//     G_b = α L + β Lˢ or α Lᵖ + β Lˢ (eq. 23 and 25), by Jacobi-preconditioned
//     conjugate gradients on the sparse matrix, warm-started from v_c;
//  4. reorder the columns: the d columns with the smallest
//     v_cᵀ(G₁ − G₂)v_c form V¹, with U's columns permuted alike (§2.3.3).
//
// Each step does not increase the objective (Theorem 3); the tests check it.
// The paper's factor 2 in front of L comes from summing over ordered pairs;
// here α carries it.
//
// NGE is not safe for concurrent use.
type NGE struct {
	Common
	// Alpha is α, the weight of the intrinsic and penalty graphs relative
	// to ‖X − UVᵀ‖². If zero, it defaults to 2: the paper's λ = 1 with its
	// sums over ordered pairs. It must not be negative.
	Alpha float64
	// Beta is β, the weight of the k-NN smoothness graph on all columns.
	// If zero, it defaults to 100 (measured on a validation split of the
	// digits); a negative value disables it (the paper's NGE).
	Beta float64
	// Dim is d, the number of columns of V¹. If zero, it defaults to the
	// number of classes, as in the paper. It must be below Rank.
	Dim int
	// IntrinsicK is k₁, the same-class neighbours of MFA's intrinsic graph.
	// If zero, it defaults to 3 (the paper's, 2 for FERET).
	IntrinsicK int
	// PenaltyPairs is k₂, the shortest between-class pairs per class of the
	// penalty graph. If zero, it defaults to 20 (the paper's).
	PenaltyPairs int
	// Neighbors is the k of the smoothness graph. If zero, it defaults to 5.
	Neighbors int
	// InnerIter bounds the CG iterations of one column solve. If zero, it
	// defaults to 10: every CG iterate from the warm start lowers the
	// auxiliary function, so an inexact solve still decreases the
	// objective.
	InnerIter int
	// InnerTol is the relative residual that stops a column solve. If zero,
	// it defaults to 1e-4.
	InnerTol float64

	fitted
	eng       Engine
	blocks    [2]*mMatrix
	s, sp, ss *sparse.CSR
	d         int

	xtu, utu, vutu mat.Dense
	col, rhs, k    []float64
}

var _ Method = (*NGE)(nil)

// Fit factorizes x using labels (one per sample, −1 = unlabeled). It
// returns an error wrapping ErrNoLabels if no sample is labeled, and one
// wrapping ErrDiverged if the objective runs away. Unlabeled samples have no
// edges in the MFA graphs; they join the smoothness graph.
func (m *NGE) Fit(x Data, labels []int) error {
	m.ok = false
	if m.Loss != LossFrobenius {
		return fmt.Errorf("model: NGE: loss %v not supported (its row solve is written for the Frobenius loss)", m.Loss)
	}
	_, n := x.Dims()
	ls, err := parseLabels(labels, n)
	if err != nil {
		return err
	}
	if len(ls.ids) == 0 {
		return fmt.Errorf("model: NGE: %w", ErrNoLabels)
	}
	if m.Alpha < 0 || m.Dim < 0 || m.IntrinsicK < 0 || m.PenaltyPairs < 0 ||
		m.Neighbors < 0 || m.InnerIter < 0 || m.InnerTol < 0 {
		return fmt.Errorf("model: NGE: negative hyperparameter")
	}
	d := orDefaultInt(m.Dim, ls.classes)
	if d <= 0 || d >= m.Rank {
		return fmt.Errorf("model: NGE: d = %d embedding columns, want 1 ≤ d < K = %d", d, m.Rank)
	}
	if err := m.start(&m.fitted, x); err != nil {
		return err
	}
	m.d = d
	if m.s, m.sp, err = mfaGraphs(x, ls, orDefaultInt(m.IntrinsicK, 3), orDefaultInt(m.PenaltyPairs, 20), m.Metric); err != nil {
		return err
	}
	m.ss = nil
	if m.beta() > 0 {
		if m.ss, err = knnGraph(x, orDefaultInt(m.Neighbors, 5), m.Metric, m.Split); err != nil {
			return err
		}
	}
	return m.fitGraphs(x)
}

func (m *NGE) beta() float64 { return orDefault(m.Beta, 100) }

// terms returns NGE's terms on the intrinsic, penalty and smoothness
// graphs (ss is ignored when Beta is negative) with d columns in V¹, and
// the graph terms of the M-matrices of the two column blocks.
func (m *NGE) terms(s, sp, ss *sparse.CSR, d int) (terms []Term, block1, block2 []*GraphTerm) {
	a := orDefault(m.Alpha, 2)
	intr := &NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "intrinsic", Weight: a, S: s, Hi: d}}
	pen := &NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "penalty", Weight: a, S: sp, Lo: d, Hi: m.Rank}}
	terms = []Term{intr, pen}
	block1 = []*GraphTerm{&intr.GraphTerm}
	block2 = []*GraphTerm{&pen.GraphTerm}
	if beta := m.beta(); beta > 0 {
		sm := &NormalizedGraphTerm{GraphTerm: GraphTerm{Label: "smooth", Weight: beta, S: ss}}
		terms = append(terms, sm)
		block1 = append(block1, &sm.GraphTerm)
		block2 = append(block2, &sm.GraphTerm)
	}
	return terms, block1, block2
}

// fitGraphs runs Algorithm 1 from the initialized U, V on the graphs m.s,
// m.sp and m.ss with m.d columns in V¹: the part of Fit after the graphs
// are built, which Online's first fit runs on the stream's graphs.
func (m *NGE) fitGraphs(x Data) (err error) {
	_, n := x.Dims()
	if m.Loss != LossFrobenius {
		return fmt.Errorf("model: NGE: loss %v not supported (its row solve is written for the Frobenius loss)", m.Loss)
	}
	terms, block1, block2 := m.terms(m.s, m.sp, m.ss, m.d)
	m.eng = Engine{Loss: NewFrobenius(x), Terms: terms}
	m.blocks = [2]*mMatrix{newMMatrix(n, block1), newMMatrix(n, block2)}
	NormalizeColumns(&m.u, &m.v) // Q = I from the start, as for N2S2L
	m.res, err = m.iterate(&m.u, &m.v)
	if err != nil {
		return diverged(err, "NGE", "lower Alpha")
	}
	m.ok = true
	return nil
}

// iterate runs Algorithm 1 of the paper from u, v on m.eng's loss and
// terms (set by the caller) and m.blocks: the engine's loop (step 1, the
// multiplicative U rule with the terms' exact diagonal U·diag(c); step 2,
// normalization; the convergence test) with NGE's own V step (ngeStep:
// steps 3 and 4).
func (m *NGE) iterate(u, v *mat.Dense) (Result, error) {
	e := &m.eng
	e.Normalize, e.VStep = NormalizeEachIter, ngeStep{m}
	e.MaxIter, e.Tol, e.Callback = m.MaxIter, m.Tol, m.Callback
	return e.Run(u, v)
}

// ngeStep is NGE's inner V step: the column-wise M-matrix solves (step 3),
// then the reordering of the columns (step 4). Neither increases the
// objective (Theorem 3 and §2.3.3).
type ngeStep struct{ m *NGE }

func (s ngeStep) StepV(u, v *mat.Dense) {
	s.m.stepV(u, v)
	s.m.reorder(u, v)
}

// stepV is step 3: one M-matrix solve per column of V.
func (m *NGE) stepV(u, v *mat.Dense) {
	n, k := v.Dims()
	m.xtu.Reset()
	m.eng.Loss.(*Frobenius).X.TMulTo(&m.xtu, u)
	m.utu.Reset()
	m.utu.Mul(u.T(), u)
	m.vutu.Reset()
	m.vutu.Mul(v, &m.utu)
	m.col = resize(m.col, n)
	m.rhs = resize(m.rhs, n)
	m.k = resize(m.k, n)
	tol := orDefault(m.InnerTol, 1e-4)
	maxIt := orDefaultInt(m.InnerIter, 10)
	vr, xr, pr := v.RawMatrix(), m.xtu.RawMatrix(), m.vutu.RawMatrix()
	for c := 0; c < k; c++ {
		mm := m.blocks[0]
		if c >= m.d {
			mm = m.blocks[1]
		}
		for j := 0; j < n; j++ {
			x := vr.Data[j*vr.Stride+c]
			m.col[j] = x
			m.rhs[j] = xr.Data[j*xr.Stride+c]
			// K^c_jj = (VUᵀU)_jc / V_jc ≥ ‖u_c‖² > 0 (eq. 26); a zero V_jc
			// stays zero, as in a multiplicative update.
			m.k[j] = pr.Data[j*pr.Stride+c] / max(x, math.SmallestNonzeroFloat64)
		}
		mm.setK(m.k)
		mm.solveCG(m.col, m.rhs, tol, maxIt)
		for j, x := range m.col {
			vr.Data[j*vr.Stride+c] = x
		}
	}
}

// reorder is step 4: move the d columns with the smallest
// v_cᵀ(G₁ − G₂)v_c to V¹ (keeping their relative order), and permute U's
// columns alike. The loss and the sum of the two costs over all columns
// are unchanged, so this can only lower the objective.
func (m *NGE) reorder(u, v *mat.Dense) {
	if perm := m.reorderPerm(v); perm != nil {
		permuteCols(u, perm)
		permuteCols(v, perm)
	}
}

// reorderPerm returns the column permutation of step 4 (column c becomes
// old column perm[c]), or nil if it is the identity.
func (m *NGE) reorderPerm(v *mat.Dense) []int {
	_, k := v.Dims()
	delta := make([]float64, k)
	col := make([]float64, v.RawMatrix().Rows)
	for c := 0; c < k; c++ {
		mat.Col(col, c, v)
		delta[c] = quadLaplacian(m.blocks[0], col) - quadLaplacian(m.blocks[1], col)
	}
	idx := make([]int, k)
	for c := range idx {
		idx[c] = c
	}
	// Ties keep the current block: a column already in V¹ goes first.
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(delta[a], delta[b]), cmp.Compare(blockOf(a, m.d), blockOf(b, m.d)))
	})
	first := slices.Clone(idx[:m.d])
	rest := slices.Clone(idx[m.d:])
	slices.Sort(first)
	slices.Sort(rest)
	perm := append(first, rest...)
	same := true
	for c, p := range perm {
		if c != p {
			same = false
			break
		}
	}
	if same {
		return nil
	}
	return perm
}

func blockOf(c, d int) int {
	if c < d {
		return 0
	}
	return 1
}

// quadLaplacian returns xᵀ(M − diag(k))x = Σ_i deg_i x_i² − Σ_ij O_ij x_i x_j,
// the graph part of an mMatrix.
func quadLaplacian(m *mMatrix, x []float64) float64 {
	var s float64
	for i, xi := range x {
		s += m.deg[i] * xi * xi
		ind, val := m.off.Row(i)
		for p, j := range ind {
			s -= val[p] * xi * x[j]
		}
	}
	return s
}

// permuteCols sets column c of a to its old column perm[c].
func permuteCols(a *mat.Dense, perm []int) {
	raw := a.RawMatrix()
	tmp := make([]float64, raw.Cols)
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for c, p := range perm {
			tmp[c] = row[p]
		}
		copy(row, tmp)
	}
}

// EmbeddingDim returns d, the number of columns of V¹, of the last Fit.
func (m *NGE) EmbeddingDim() int { return m.d }

// Graphs returns MFA's intrinsic and penalty graphs and the smoothness
// graph (nil when Beta is negative) of the last Fit.
func (m *NGE) Graphs() (s, sp, ss *sparse.CSR) { return m.s, m.sp, m.ss }

// reuseAs makes a an r×c matrix, keeping its memory when it already is.
func reuseAs(a *mat.Dense, r, c int) {
	if ar, ac := a.Dims(); !a.IsEmpty() && ar == r && ac == c {
		return
	}
	a.Reset()
	a.ReuseAs(r, c)
}

// solveRows runs step 3 on the given rows of V (R ascending slots) with U
// and the other rows fixed, sweeps times: for every column c,
//
//	(diag(k_c) + G_b)_AA v_A,c = (XᵀU)_A,c + (O_b)_AI v_I,c,
//
// where A are the rows, I the others, G_b = diag(deg) − O_b the block's
// graph matrix and k_c = (V_A UᵀU)_{·c} / V_A,c. The restricted matrix
// keeps each row's full degree, so it is still an M-matrix (strictly
// diagonally dominant with non-positive off-diagonal entries), and the
// edges to the fixed rows move to the right-hand side, which stays
// non-negative: this is the batch step's column solve with the fixed rows'
// values substituted, so it lowers the same auxiliary function. Rows of
// the block graphs are read through the terms' S (N×N). xtu holds x_iᵀU
// for the rows (R×K), local maps a slot to its position among the rows
// (−1 if fixed). blocks holds the graph terms of V¹'s and V²'s matrices.
func (m *NGE) solveRows(v *mat.Dense, rows []int, local []int32, xtu, utu *mat.Dense, blocks [2][]*GraphTerm, d, sweeps int) {
	r := len(rows)
	_, k := v.Dims()
	var mm [2]*mMatrix
	var out [2]mat.Dense // (O_b)_AI V_I, R×K
	for b, terms := range blocks {
		bld := sparse.NewBuilder(r, r)
		deg := make([]float64, r)
		out[b].ReuseAs(r, k)
		for _, t := range terms {
			if t.Weight <= 0 || t.S == nil {
				continue
			}
			for p, i := range rows {
				ind, val := t.S.Row(i)
				o := out[b].RawRowView(p)
				for q, j := range ind {
					x := t.Weight * val[q]
					if j == i || x == 0 {
						continue
					}
					deg[p] += x
					if l := local[j]; l >= 0 {
						bld.Add(p, int(l), x)
					} else {
						for c, vj := range v.RawRowView(j) {
							o[c] += x * vj
						}
					}
				}
			}
		}
		mm[b] = &mMatrix{off: bld.CSR(), deg: deg, diag: make([]float64, r)}
	}
	tol := orDefault(m.InnerTol, 1e-4)
	maxIt := orDefaultInt(m.InnerIter, 10)
	va := mat.NewDense(r, k, nil)
	for p, i := range rows {
		copy(va.RawRowView(p), v.RawRowView(i))
	}
	var vutu mat.Dense
	col, rhs, kc := make([]float64, r), make([]float64, r), make([]float64, r)
	for range sweeps {
		vutu.Reset()
		vutu.Mul(va, utu)
		for c := 0; c < k; c++ {
			b := blockOf(c, d)
			for p := range r {
				x := va.At(p, c)
				col[p] = x
				rhs[p] = xtu.At(p, c) + out[b].At(p, c)
				kc[p] = vutu.At(p, c) / max(x, math.SmallestNonzeroFloat64)
			}
			mm[b].setK(kc)
			mm[b].solveCG(col, rhs, tol, maxIt)
			for p, x := range col {
				va.Set(p, c, x)
			}
		}
	}
	for p, i := range rows {
		copy(v.RawRowView(i), va.RawRowView(p))
	}
}
