package model

import "gonum.org/v1/gonum/mat"

// splitChunks is the number of row chunks whose partial sums make VᵀX
// and VᵀV under Engine.Split: a fixed number, so that the sums (and so
// the results) do not depend on how many parts Split makes.
const splitChunks = 8

// splitUser is a Loss or Term that can cut its work into parts.
type splitUser interface {
	setSplit(split func(n int, body func(lo, hi int)))
}

// inParts runs body over [0, n) through split, or as one part if split is
// nil.
func inParts(split func(n int, body func(lo, hi int)), n int, body func(lo, hi int)) {
	if split == nil {
		if n > 0 {
			body(0, n)
		}
		return
	}
	split(n, body)
}

// rowsOf returns rows [lo, hi) of m as a view.
func rowsOf(m *mat.Dense, lo, hi int) *mat.Dense {
	_, c := m.Dims()
	return m.Slice(lo, hi, 0, c).(*mat.Dense)
}

// chunk returns the rows [lo, hi) of chunk c of n rows in splitChunks.
func chunk(c, n int) (lo, hi int) { return c * n / splitChunks, (c + 1) * n / splitChunks }

// sumChunksTo stores the sum of the first len(parts) matrices of parts, in
// order, into dst (r×c).
func sumChunksTo(dst *mat.Dense, parts []mat.Dense) {
	dst.Copy(&parts[0])
	for c := 1; c < len(parts); c++ {
		dst.Add(dst, &parts[c])
	}
}
