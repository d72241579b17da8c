package sparse

// Reset makes m an empty 0×0 matrix while keeping the memory of its Indptr,
// Ind and Val slices, so that rows appended next (after Grow sets the number
// of columns) reuse it, as mat.Dense.Reset does for dense matrices. Views
// returned earlier by Row must not be used after Reset.
func (m *CSR) Reset() {
	m.r, m.c = 0, 0
	m.Indptr = append(m.Indptr[:0], 0)
	m.Ind = m.Ind[:0]
	m.Val = m.Val[:0]
}
