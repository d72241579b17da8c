package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// heldLoss is a loss that holds its U gradient's negative part, as the
// online statistics do: ½∂/∂U = UA − B.
type heldLoss struct {
	a, b *mat.Dense
	n    int
}

func (l *heldLoss) Dims() (d, n int) { d, _ = l.b.Dims(); return d, l.n }
func (l *heldLoss) UGradTo(neg, pos, u, v *mat.Dense) {
	neg.Copy(l.b)
	l.uPosTo(pos, u)
}
func (l *heldLoss) uPosTo(pos, u *mat.Dense) *mat.Dense { pos.Mul(u, l.a); return l.b }
func (l *heldLoss) VGradTo(neg, pos, u, v *mat.Dense)   { panic("no V gradient") }
func (l *heldLoss) Value(u, v *mat.Dense) float64       { return 0 }

// plainLoss hides heldLoss's uPosTo, so that the engine takes its general
// U step: the loss's parts, each term's pass, then the update.
type plainLoss struct{ Loss }

// TestStepUDiagSameBits checks the engine's one-pass U step (stepUDiag)
// against its general step bit for bit: frozen graph terms of either sign,
// split or not, on column ranges and on all columns, one with weight 0,
// over several updates, with and without the engine's row parts.
func TestStepUDiagSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d, n, k = 57, 40, 9
	dense := func(r, c int, zeros bool) *mat.Dense {
		m := mat.NewDense(r, c, nil)
		for i := range r {
			for j := range c {
				if !zeros || rng.IntN(4) > 0 {
					m.Set(i, j, rng.Float64())
				}
			}
		}
		return m
	}
	graph := func(signed bool) *sparse.CSR {
		if signed {
			return randomSignedGraph(rng, n, 3, 2)
		}
		return randomSignedGraph(rng, n, 3, 0)
	}
	v := dense(n, k, true)
	var a mat.Dense
	a.Mul(v.T(), v)
	loss := &heldLoss{a: &a, b: dense(d, k, true), n: n}
	var terms []Term
	for _, nt := range []*NormalizedGraphTerm{
		{GraphTerm: GraphTerm{Label: "pos", Weight: 0.7, S: graph(false), Hi: 4}, Split: true},
		{GraphTerm: GraphTerm{Label: "neg", Weight: -0.4, S: graph(true), Lo: 3, Hi: k}, Split: true},
		{GraphTerm: GraphTerm{Label: "tight", Weight: 2, S: graph(true)}},
		{GraphTerm: GraphTerm{Label: "off", Weight: 0, S: graph(false)}},
	} {
		terms = append(terms, freeze(nt, v))
	}
	halves := func(r int, body func(lo, hi int)) { body(0, r/2); body(r/2, r) }
	for _, split := range []func(int, func(int, int)){nil, halves} {
		u0 := dense(d, k, true)
		run := func(l Loss) *mat.Dense {
			u := mat.DenseCopyOf(u0)
			e := Engine{Loss: l, FixV: true, MaxIter: 6, Tol: -1, Terms: terms, Split: split}
			if l == Loss(loss) != e.diagU() {
				t.Fatalf("diagU = %v for %T", e.diagU(), l)
			}
			if _, err := e.Run(u, v); err != nil {
				t.Fatal(err)
			}
			return u
		}
		got, want := run(loss), run(plainLoss{loss})
		moved := false
		for i := range d {
			for j := range k {
				g, w := got.At(i, j), want.At(i, j)
				if math.Float64bits(g) != math.Float64bits(w) {
					t.Fatalf("split %v: U[%d,%d] = %v by the one pass, %v by the passes", split != nil, i, j, g, w)
				}
				moved = moved || w != u0.At(i, j)
			}
		}
		if !moved {
			t.Fatal("the updates left U as it was")
		}
	}
}
