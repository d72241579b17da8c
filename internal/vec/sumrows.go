package vec

import "fmt"

// Rows is a sparse matrix in compressed-row form for SumRows, its column
// indices checked against its column count when it was made: the
// kernels read rows of a dense matrix at those indices without further
// checks.
type Rows struct {
	ptr, idx []int32
	val      []float64
	cols     int
}

// NewRows returns the matrix whose row r holds the entries (idx[p],
// val[p]) for p in [ptr[r], ptr[r+1]). It panics unless ptr starts at 0,
// never decreases and ends at len(idx) == len(val), and every index lies
// in [0, cols).
func NewRows(cols int, ptr, idx []int32, val []float64) *Rows {
	if len(ptr) == 0 || ptr[0] != 0 || int(ptr[len(ptr)-1]) != len(idx) || len(idx) != len(val) {
		panic(fmt.Sprintf("vec: NewRows: %d row pointers for %d indices and %d values", len(ptr), len(idx), len(val)))
	}
	for r := 1; r < len(ptr); r++ {
		if ptr[r] < ptr[r-1] {
			panic(fmt.Sprintf("vec: NewRows: row %d ends before it starts", r-1))
		}
	}
	for p, j := range idx {
		if j < 0 || int(j) >= cols {
			panic(fmt.Sprintf("vec: NewRows: entry %d has column %d, outside [0, %d)", p, j, cols))
		}
	}
	return &Rows{ptr, idx, val, cols}
}

// Len returns the number of rows.
func (s *Rows) Len() int { return len(s.ptr) - 1 }

// SumRows sets, for each row r in [r0, r1) of s,
//
//	dst[(r−r0)·ldd + c] += (w·val_p)·v[j_p·ldv + c]   for c < m,
//
// over the entries (j_p, val_p) of row r in order, each product rounded
// and then added: the same bits as one Axpy(w·val_p, …) per entry. v
// needs a row for each column of s.
//
// On amd64 with AVX-512 a row of dst stays in registers over its entries
// (up to 64 columns at a time) and the row of v an entry reads is
// prefetched a few entries ahead: the product S·V of a sparse graph with
// the codes, whose rows of v come from anywhere in v.
func SumRows(dst []float64, ldd, m int, w float64, s *Rows, r0, r1 int, v []float64, ldv int) {
	if r0 < 0 || r1 < r0 || r1 > s.Len() || m < 0 {
		panic(fmt.Sprintf("vec: SumRows: rows [%d, %d) of %d, %d columns", r0, r1, s.Len(), m))
	}
	if r1 == r0 || m == 0 {
		return
	}
	if ldd < m || len(dst) < (r1-r0-1)*ldd+m || ldv < m || len(v) < (s.cols-1)*ldv+m {
		panic(fmt.Sprintf("vec: SumRows: dst of %d entries for %d rows of %d with stride %d, v of %d for %d rows with stride %d",
			len(dst), r1-r0, m, ldd, len(v), s.cols, ldv))
	}
	sumRows(dst, ldd, m, w, s, r0, r1, v, ldv)
}

func sumRowsGeneric(dst []float64, ldd, m int, w float64, s *Rows, r0, r1 int, v []float64, ldv int) {
	for r := r0; r < r1; r++ {
		d := dst[(r-r0)*ldd : (r-r0)*ldd+m]
		for p := s.ptr[r]; p < s.ptr[r+1]; p++ {
			axpy(w*s.val[p], v[int(s.idx[p])*ldv:][:m], d)
		}
	}
}
