package model

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// On sparse rows SSKNMF's and N²S²L's U keeps the whole width: their U
// terms keep alive the rows of the columns no sample has used, which the
// first fit leaves equal (Common.phantom). Every update of U is row by
// row and homogeneous of degree one in a row, and U enters the sums over
// its rows squared (the column norms), so those m rows stay equal, and
// one row √m times theirs carries them: the U step runs on the seen rows
// and that row, then writes the seen rows back and the unseen ones from
// it. It is the whole width's step up to rounding (the sums over rows
// add the unseen rows' terms at once), at the cost of the seen rows and
// one pass writing the others. A column seen by a sample joins the seen
// rows with its row as it is (the unseen rows' common value). Restore
// turns it off: the state does not say which columns were seen.

// phantomRows tracks the columns samples have used since a first fit that
// ran with a phantom row, and holds the U step's gathered rows. Its zero
// value is off: the whole width.
type phantomRows struct {
	seen  []bool // by column; nil: off
	nSeen int
	rows  []int     // the seen columns, ascending (gather)
	u, b  mat.Dense // U's and B's seen rows, then the phantom row (B's: zero)
}

// start turns tracking on with the columns the first fit's samples used.
func (p *phantomRows) start(dim int, cols []int) {
	p.seen, p.nSeen = make([]bool, dim), 0
	p.mark(cols)
}

// mark records the columns ind as seen.
func (p *phantomRows) mark(ind []int) {
	if p.seen == nil {
		return
	}
	for _, j := range ind {
		if !p.seen[j] {
			p.seen[j] = true
			p.nSeen++
		}
	}
}

// gather sets p.u and p.b to the seen rows of u and b and the phantom row
// (√m times an unseen row of u; zero in b) and reports whether it did: not
// when tracking is off or the seen columns are seven eighths of the width
// or more (then the gather and the scatter cost about what they spare;
// a mail stream's hashed columns get there within a few thousand mails,
// Brown's passages use half of them).
func (p *phantomRows) gather(u, b *mat.Dense) bool {
	dim := len(p.seen)
	if p.seen == nil || p.nSeen >= dim-dim/8 {
		p.u, p.b, p.rows = mat.Dense{}, mat.Dense{}, nil // up to 2·D·K floats, not held past their use
		return false
	}
	_, k := u.Dims()
	p.rows = p.rows[:0]
	unseen := -1
	for j, s := range p.seen {
		if s {
			p.rows = append(p.rows, j)
		} else if unseen < 0 {
			unseen = j
		}
	}
	n := len(p.rows)
	reshapeDense(&p.u, n+1, k)
	reshapeDense(&p.b, n+1, k)
	gatherRowsTo(rowsOf(&p.u, 0, n), u, p.rows)
	gatherRowsTo(rowsOf(&p.b, 0, n), b, p.rows)
	w := math.Sqrt(float64(dim - n))
	last := p.u.RawRowView(n)
	for c, x := range u.RawRowView(unseen) {
		last[c] = w * x
	}
	clear(p.b.RawRowView(n))
	return true
}

// scatter writes p.u's and p.b's seen rows back to u and b, and every
// unseen row of u from the phantom row (writeUnseen).
func (p *phantomRows) scatter(u, b *mat.Dense) {
	n := len(p.rows)
	scatterRows(u, rowsOf(&p.u, 0, n), p.rows)
	scatterRows(b, rowsOf(&p.b, 0, n), p.rows)
	p.writeUnseen(u, p.u.RawRowView(n))
}

// writeUnseen sets every row of u for an unseen column to the phantom row
// divided by √m, m the unseen columns' number.
func (p *phantomRows) writeUnseen(u *mat.Dense, phantom []float64) {
	w := math.Sqrt(float64(len(p.seen) - p.nSeen))
	f := make([]float64, len(phantom))
	for c, x := range phantom {
		f[c] = x / w
	}
	for j, s := range p.seen {
		if !s {
			copy(u.RawRowView(j), f)
		}
	}
}
