package sparse

import "sort"

// Builder assembles a CSR matrix from (row, column, value) triplets in any
// order. Duplicate entries are summed. The zero Builder is not usable; call
// NewBuilder.
type Builder struct {
	r, c int
	rows []int
	cols []int
	vals []float64
}

// NewBuilder returns a Builder for an r×c matrix.
func NewBuilder(r, c int) *Builder { return &Builder{r: r, c: c} }

// Add records the triplet (i, j, v). It panics if i or j is out of range.
func (b *Builder) Add(i, j int, v float64) {
	if uint(i) >= uint(b.r) || uint(j) >= uint(b.c) {
		panic("sparse: Builder.Add: index out of range")
	}
	b.rows = append(b.rows, i)
	b.cols = append(b.cols, j)
	b.vals = append(b.vals, v)
}

// Len returns the number of triplets recorded so far.
func (b *Builder) Len() int { return len(b.rows) }

// CSR returns the assembled matrix, with duplicates summed and entries that
// sum to exactly zero dropped. The Builder can be reused afterwards.
func (b *Builder) CSR() *CSR {
	n := len(b.rows)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sort.Slice(perm, func(x, y int) bool {
		p, q := perm[x], perm[y]
		if b.rows[p] != b.rows[q] {
			return b.rows[p] < b.rows[q]
		}
		return b.cols[p] < b.cols[q]
	})
	m := &CSR{r: b.r, c: b.c, Indptr: make([]int, b.r+1)}
	m.Ind = make([]int, 0, n)
	m.Val = make([]float64, 0, n)
	for k := 0; k < n; {
		p := perm[k]
		i, j, v := b.rows[p], b.cols[p], b.vals[p]
		k++
		for k < n && b.rows[perm[k]] == i && b.cols[perm[k]] == j {
			v += b.vals[perm[k]]
			k++
		}
		if v == 0 {
			continue
		}
		m.Ind = append(m.Ind, j)
		m.Val = append(m.Val, v)
		m.Indptr[i+1]++
	}
	for i := 0; i < b.r; i++ {
		m.Indptr[i+1] += m.Indptr[i]
	}
	b.rows, b.cols, b.vals = b.rows[:0], b.cols[:0], b.vals[:0]
	return m
}
