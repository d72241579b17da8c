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

// minChunkRows is the fewest rows a chunk takes (chunksOf): a chunk of
// fewer rows costs more in adding its r×c result to the others' than in
// its own product (a GNMF fit of 100 MNIST images took twice as long
// under Split in 8 chunks as serially; BENCHMARKS.md, "Eleventh pass").
const minChunkRows = 256

// chunksOf returns the number of row chunks whose partial sums make aᵀb
// for n rows under Split: splitChunks from 7·minChunkRows + 1 rows up,
// fewer below, one up to minChunkRows. It depends on n alone, so the sums
// do not depend on how many parts Split makes.
func chunksOf(n int) int { return min(splitChunks, max(1, (n+minChunkRows-1)/minChunkRows)) }

// chunk returns the rows [lo, hi) of chunk c of n rows in nc chunks.
func chunk(c, nc, n int) (lo, hi int) { return c * n / nc, (c + 1) * n / nc }

// sumChunksTo stores the sum of the first len(parts) matrices of parts, in
// order, into dst (r×c).
func sumChunksTo(dst *mat.Dense, parts []mat.Dense) {
	dst.Copy(&parts[0])
	for c := 1; c < len(parts); c++ {
		dst.Add(dst, &parts[c])
	}
}
