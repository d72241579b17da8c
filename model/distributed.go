package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// This file holds the pieces of the Frobenius multiplicative updates that a
// partitioned learner needs (package distributed): the U step reads only
// the sufficient statistics B = XV (D×K) and A = VᵀV (K×K), which are sums
// over samples, so partitions can add their parts; the V step is row-wise,
// so each partition sweeps its own rows given U. Summing the partitions'
// statistics and alternating the two steps is the NMF engine's iteration
// (Engine: U step, then V step), equal to it up to the rounding of the sums.

// StepU applies steps multiplicative updates U ← U ⊙ B / max(U·A, eps) to u
// (D×K) in place, the Frobenius U step of NMF written on the statistics
// b = XV (D×K) and a = VᵀV (K×K). It panics if the shapes disagree or
// steps < 1.
func StepU(u, b, a *mat.Dense, steps int) {
	d, k := u.Dims()
	if br, bc := b.Dims(); br != d || bc != k {
		panic(fmt.Sprintf("model: StepU: B is %d×%d, want %d×%d", br, bc, d, k))
	}
	if ar, ac := a.Dims(); ar != k || ac != k {
		panic(fmt.Sprintf("model: StepU: A is %d×%d, want %d×%d", ar, ac, k, k))
	}
	if steps < 1 {
		panic("model: StepU: steps < 1")
	}
	var v mat.Dense // never read: the statistics stand for V
	v.ReuseAs(1, k)
	e := Engine{Loss: &sumStatsLoss{b: b, a: a, d: d}, FixV: true, MaxIter: steps, Tol: -1}
	if _, err := e.Run(u, &v); err != nil {
		// Not reachable: an untracked FixV run reports no objective.
		panic(err)
	}
}

// SweepRows applies sweeps multiplicative updates V ← V ⊙ XᵀU / max(V·UᵀU, eps)
// to v (n×K) in place, with U (D×K) fixed: the Frobenius V step of NMF on
// the n samples x. Rows are independent, so sweeping a block of rows on its
// own equals sweeping them within the whole of V. It returns an error if x
// has a negative or non-finite entry, and panics if the shapes disagree.
func SweepRows(v *mat.Dense, x Data, u *mat.Dense, sweeps int) error {
	d, n := x.Dims()
	ud, k := u.Dims()
	if vr, vk := v.Dims(); vr != n || vk != k || ud != d {
		panic(fmt.Sprintf("model: SweepRows: V is %d×%d and U %d×%d for %d samples of dimension %d", vr, vk, ud, k, n, d))
	}
	if sweeps < 1 {
		panic("model: SweepRows: sweeps < 1")
	}
	if err := Validate(x); err != nil {
		return err
	}
	e := Engine{Loss: NewFrobenius(x), FixU: true, MaxIter: sweeps, Tol: -1}
	_, err := e.Run(u, v)
	return err
}

// SweepGraphRows applies sweeps multiplicative updates of GNMF's V rule
//
//	v_i ← v_i ⊙ (x_iᵀU + α(SV)_i) / max(v_i·UᵀU + α·d_i·v_i, eps),  d_i = Σ_j S_ij,
//
// to the given rows of v (n×K) in place, all of them at once per sweep, with
// U (D×K) and the other rows of v fixed: the V step of GNMF (Cai et al.
// 2011) on the n samples x and their symmetric n×n graph weights s,
// restricted to those rows (Engine with Rows). A nil rows means every row,
// which is GNMF's whole V step. The U step of GNMF has no graph part, so
// StepU on the summed statistics stays its U step. With alpha zero (or s
// nil) it is NMF's V step on those rows. It returns an error if x has a
// negative or non-finite entry, and panics if the shapes disagree or alpha
// is negative.
func SweepGraphRows(v *mat.Dense, x Data, u *mat.Dense, s *sparse.CSR, alpha float64, rows []int, sweeps int) error {
	d, n := x.Dims()
	ud, k := u.Dims()
	if vr, vk := v.Dims(); vr != n || vk != k || ud != d {
		panic(fmt.Sprintf("model: SweepGraphRows: V is %d×%d and U %d×%d for %d samples of dimension %d", vr, vk, ud, k, n, d))
	}
	if s != nil {
		if sr, sc := s.Dims(); sr != n || sc != n {
			panic(fmt.Sprintf("model: SweepGraphRows: S is %d×%d for %d samples", sr, sc, n))
		}
	}
	if sweeps < 1 || alpha < 0 {
		panic("model: SweepGraphRows: sweeps < 1 or alpha < 0")
	}
	if err := Validate(x); err != nil {
		return err
	}
	e := Engine{Loss: &Frobenius{X: x, FixedU: true}, FixU: true, Rows: rows, MaxIter: sweeps, Tol: -1}
	if alpha > 0 && s != nil {
		e.Terms = []Term{&GraphTerm{Weight: alpha, S: s}}
	}
	_, err := e.Run(u, v)
	return err
}

// AddStats adds sign·X·V into b (D×K) and sign·VᵀV into a (K×K), for the n
// samples x and their codes v (n×K): the contribution of these samples to
// the sufficient statistics of the U step. Empty b and a are sized and
// zeroed first. Use sign −1 to remove codes before adding their updated
// values.
func AddStats(b, a *mat.Dense, x Data, v *mat.Dense, sign float64) {
	d, n := x.Dims()
	vr, k := v.Dims()
	if vr != n {
		panic(fmt.Sprintf("model: AddStats: V has %d rows for %d samples", vr, n))
	}
	if b.IsEmpty() {
		b.ReuseAs(d, k)
		b.Zero()
	}
	if a.IsEmpty() {
		a.ReuseAs(k, k)
		a.Zero()
	}
	var xv, vtv mat.Dense
	xv.ReuseAs(d, k)
	x.MulTo(&xv, v)
	vtv.Mul(v.T(), v)
	xv.Scale(sign, &xv)
	vtv.Scale(sign, &vtv)
	b.Add(b, &xv)
	a.Add(a, &vtv)
}

// sumStatsLoss is the Frobenius loss seen through summed statistics
// B = XV and A = VᵀV: ½∂/∂U = UA − B.
type sumStatsLoss struct {
	b, a *mat.Dense
	d    int
}

func (l *sumStatsLoss) Dims() (d, n int) { return l.d, 1 }

func (l *sumStatsLoss) UGradTo(neg, pos, u, v *mat.Dense) {
	neg.Copy(l.b)
	mulTo(pos, u, l.a)
}

func (l *sumStatsLoss) VGradTo(neg, pos, u, v *mat.Dense) {
	panic("model: summed statistics asked for a V gradient")
}

// Value is not known from the statistics alone (‖X‖² is missing); the
// engine does not ask for it in an untracked run with V fixed.
func (l *sumStatsLoss) Value(u, v *mat.Dense) float64 { return 0 }
