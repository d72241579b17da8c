package sparse

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// CSR is an r×c matrix in compressed sparse row form.
// It implements mat.Matrix.
type CSR struct {
	r, c int
	// Indptr has length r+1; row i occupies Ind[Indptr[i]:Indptr[i+1]].
	Indptr []int
	// Ind holds column indices, strictly increasing within each row.
	Ind []int
	// Val holds the stored values, parallel to Ind.
	Val []float64
}

var _ mat.Matrix = (*CSR)(nil)

// NewCSR returns an r×c CSR matrix built on the given slices, which it
// takes ownership of. It panics if the slices are inconsistent with
// the shape (a programming error); use Validate to check untrusted input.
func NewCSR(r, c int, indptr, ind []int, val []float64) *CSR {
	m := &CSR{r: r, c: c, Indptr: indptr, Ind: ind, Val: val}
	if err := m.checkStructure(); err != nil {
		panic(err)
	}
	return m
}

// Zeros returns an r×c CSR matrix with no stored entries.
func Zeros(r, c int) *CSR {
	return &CSR{r: r, c: c, Indptr: make([]int, r+1)}
}

func (m *CSR) checkStructure() error {
	if m.r < 0 || m.c < 0 {
		return fmt.Errorf("sparse: negative dimension %d×%d", m.r, m.c)
	}
	if len(m.Indptr) != m.r+1 {
		return fmt.Errorf("sparse: len(indptr) = %d, want %d", len(m.Indptr), m.r+1)
	}
	if len(m.Ind) != len(m.Val) {
		return fmt.Errorf("sparse: len(ind) = %d != len(val) = %d", len(m.Ind), len(m.Val))
	}
	if m.Indptr[0] != 0 || m.Indptr[m.r] != len(m.Ind) {
		return fmt.Errorf("sparse: indptr must run from 0 to %d", len(m.Ind))
	}
	for i := 0; i < m.r; i++ {
		lo, hi := m.Indptr[i], m.Indptr[i+1]
		if hi < lo {
			return fmt.Errorf("sparse: indptr decreases at row %d", i)
		}
		for p := lo; p < hi; p++ {
			j := m.Ind[p]
			if j < 0 || j >= m.c {
				return fmt.Errorf("sparse: column index %d out of range [0, %d) in row %d", j, m.c, i)
			}
			if p > lo && m.Ind[p-1] >= j {
				return fmt.Errorf("sparse: column indices not strictly increasing in row %d", i)
			}
		}
	}
	return nil
}

// Validate reports whether m is structurally sound and all its values are
// finite and non-negative, naming the first offending entry. It is the check
// for data that will be factorized.
func (m *CSR) Validate() error {
	if err := m.checkStructure(); err != nil {
		return err
	}
	for i := 0; i < m.r; i++ {
		for p := m.Indptr[i]; p < m.Indptr[i+1]; p++ {
			v := m.Val[p]
			switch {
			case math.IsNaN(v):
				return fmt.Errorf("sparse: NaN at (%d, %d)", i, m.Ind[p])
			case math.IsInf(v, 0):
				return fmt.Errorf("sparse: infinite entry at (%d, %d)", i, m.Ind[p])
			case v < 0:
				return fmt.Errorf("sparse: negative entry %g at (%d, %d)", v, i, m.Ind[p])
			}
		}
	}
	return nil
}

// Dims returns the number of rows and columns.
func (m *CSR) Dims() (r, c int) { return m.r, m.c }

// At returns the element at row i, column j. It panics if i or j is out of range.
func (m *CSR) At(i, j int) float64 {
	if uint(i) >= uint(m.r) || uint(j) >= uint(m.c) {
		panic(mat.ErrIndexOutOfRange)
	}
	ind, val := m.Row(i)
	k := sort.SearchInts(ind, j)
	if k < len(ind) && ind[k] == j {
		return val[k]
	}
	return 0
}

// T returns the transpose of m, as an implicit mat.Transpose.
func (m *CSR) T() mat.Matrix { return mat.Transpose{Matrix: m} }

// NNZ returns the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Ind) }

// Row returns the column indices and values stored in row i, as views into m.
func (m *CSR) Row(i int) (ind []int, val []float64) {
	lo, hi := m.Indptr[i], m.Indptr[i+1]
	return m.Ind[lo:hi], m.Val[lo:hi]
}

// AppendRow adds a row at the bottom of m. The column indices must be
// strictly increasing and in range; AppendRow panics otherwise. The values
// are copied. Use Builder to assemble rows from unsorted triplets.
func (m *CSR) AppendRow(ind []int, val []float64) {
	if len(ind) != len(val) {
		panic("sparse: AppendRow: len(ind) != len(val)")
	}
	if len(m.Indptr) == 0 {
		m.Indptr = []int{0}
	}
	for p, j := range ind {
		if j < 0 || j >= m.c || (p > 0 && ind[p-1] >= j) {
			panic(fmt.Sprintf("sparse: AppendRow: bad column index %d at position %d", j, p))
		}
	}
	m.Ind = append(m.Ind, ind...)
	m.Val = append(m.Val, val...)
	m.Indptr = append(m.Indptr, len(m.Ind))
	m.r++
}

// Grow sets the number of columns to c, which must not be smaller than the
// current number. It lets a vocabulary grow along a stream.
func (m *CSR) Grow(c int) {
	if c < m.c {
		panic("sparse: Grow: cannot shrink")
	}
	m.c = c
}

// RowDot returns the inner product of rows i of m and j of b.
func RowDot(m *CSR, i int, b *CSR, j int) float64 {
	ai, av := m.Row(i)
	bi, bv := b.Row(j)
	var s float64
	for p, q := 0, 0; p < len(ai) && q < len(bi); {
		switch {
		case ai[p] < bi[q]:
			p++
		case ai[p] > bi[q]:
			q++
		default:
			s += av[p] * bv[q]
			p++
			q++
		}
	}
	return s
}

// RowSqNorms stores the squared Euclidean norm of each row of m into dst
// and returns it. If dst is nil a new slice is allocated; otherwise it must
// have length r.
func (m *CSR) RowSqNorms(dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, m.r)
	} else if len(dst) != m.r {
		panic(mat.ErrShape)
	}
	for i := range dst {
		var s float64
		for _, v := range m.Val[m.Indptr[i]:m.Indptr[i+1]] {
			s += v * v
		}
		dst[i] = s
	}
	return dst
}

// SqNorm returns the squared Frobenius norm of m.
func (m *CSR) SqNorm() float64 {
	var s float64
	for _, v := range m.Val {
		s += v * v
	}
	return s
}

// MulDenseTo stores m·b into dst. b must be c×k; dst must be r×k or empty
// (then it is resized). It panics on a shape mismatch.
func (m *CSR) MulDenseTo(dst *mat.Dense, b mat.Matrix) {
	br, bc := b.Dims()
	if br != m.c {
		panic(mat.ErrShape)
	}
	reuseAs(dst, m.r, bc)
	bd := denseOf(b)
	braw := bd.RawMatrix()
	draw := dst.RawMatrix()
	for i := 0; i < m.r; i++ {
		out := draw.Data[i*draw.Stride : i*draw.Stride+bc]
		for j := range out {
			out[j] = 0
		}
		for p := m.Indptr[i]; p < m.Indptr[i+1]; p++ {
			v := m.Val[p]
			row := braw.Data[m.Ind[p]*braw.Stride : m.Ind[p]*braw.Stride+bc]
			for j, x := range row {
				out[j] += v * x
			}
		}
	}
}

// TMulDenseTo stores mᵀ·b into dst. b must be r×k; dst must be c×k or empty
// (then it is resized). It panics on a shape mismatch.
func (m *CSR) TMulDenseTo(dst *mat.Dense, b mat.Matrix) {
	br, bc := b.Dims()
	if br != m.r {
		panic(mat.ErrShape)
	}
	reuseAs(dst, m.c, bc)
	dst.Zero()
	bd := denseOf(b)
	braw := bd.RawMatrix()
	draw := dst.RawMatrix()
	for i := 0; i < m.r; i++ {
		row := braw.Data[i*braw.Stride : i*braw.Stride+bc]
		for p := m.Indptr[i]; p < m.Indptr[i+1]; p++ {
			v := m.Val[p]
			out := draw.Data[m.Ind[p]*draw.Stride : m.Ind[p]*draw.Stride+bc]
			for j, x := range row {
				out[j] += v * x
			}
		}
	}
}

// ToDense returns m as a new dense matrix.
func (m *CSR) ToDense() *mat.Dense {
	d := mat.NewDense(max(m.r, 1), max(m.c, 1), nil)
	if m.r == 0 || m.c == 0 {
		return &mat.Dense{}
	}
	for i := 0; i < m.r; i++ {
		for p := m.Indptr[i]; p < m.Indptr[i+1]; p++ {
			d.Set(i, m.Ind[p], m.Val[p])
		}
	}
	return d
}

// FromDense returns the non-zero entries of a as a CSR matrix.
func FromDense(a mat.Matrix) *CSR {
	r, c := a.Dims()
	m := Zeros(0, c)
	var ind []int
	var val []float64
	for i := 0; i < r; i++ {
		ind, val = ind[:0], val[:0]
		for j := 0; j < c; j++ {
			if v := a.At(i, j); v != 0 {
				ind = append(ind, j)
				val = append(val, v)
			}
		}
		m.AppendRow(ind, val)
	}
	return m
}

// reuseAs resizes an empty dst to r×c, or panics if a non-empty dst has
// another shape (the gonum convention).
func reuseAs(dst *mat.Dense, r, c int) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if dr, dc := dst.Dims(); dr != r || dc != c {
		panic(mat.ErrShape)
	}
}

func denseOf(b mat.Matrix) *mat.Dense {
	if d, ok := b.(*mat.Dense); ok {
		return d
	}
	return mat.DenseCopyOf(b)
}
