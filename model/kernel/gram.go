package kernel

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// errRows is returned for Data that is neither model.DenseRows nor
// model.SparseRows: the kernels need the samples as rows.
var errRows = errors.New("kernel: data must come from model.DenseRows or model.SparseRows")

// sparseBlock is the number of samples densified at a time when a kernel
// matrix involves sparse rows: a D×sparseBlock dense block (2 MiB for
// D = 4096) is multiplied by the CSR matrix, so the cost is nnz·N and the
// extra memory D·sparseBlock.
const sparseBlock = 64

// MatrixTo stores the N×N kernel matrix K_ij = k(x_i, x_j) of x's samples
// into dst (empty or N×N), from one blocked matrix product of the data. K is
// exactly symmetric. k must be bound (see Kernel.Bind): an unbound relative
// Gaussian width is an error.
func MatrixTo(dst *mat.Dense, k Kernel, x model.Data) error {
	sq := sqNorms(x)
	if err := crossNormsTo(dst, k, x, x, sq, sq); err != nil {
		return err
	}
	symmetrize(dst, k, sq)
	return nil
}

// symmetrize makes the kernel matrix k (N×N) of samples of squared norms sq
// exactly symmetric, each pair the mean of its two products, and sets its
// diagonal from the exact squared norms: k(x, x) without the rounding of
// the product (a Gaussian diagonal is then exactly 1).
func symmetrize(dst *mat.Dense, k Kernel, sq []float64) {
	raw := dst.RawMatrix()
	n := raw.Rows
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a, b := &raw.Data[i*raw.Stride+j], &raw.Data[j*raw.Stride+i]
			m := (*a + *b) / 2 // the product is symmetric up to rounding
			*a, *b = m, m
		}
	}
	for i := 0; i < n; i++ {
		raw.Data[i*raw.Stride+i] = k.Eval(sq[i], sq[i], sq[i])
	}
}

// CrossTo stores the Nx×Ny cross-kernel K_ij = k(x_i, y_j) into dst (empty
// or Nx×Ny). With x the training samples and y new ones, it is the K_te of
// the papers, one column per new sample. x and y must have the same number
// of features.
func CrossTo(dst *mat.Dense, k Kernel, x, y model.Data) error {
	return crossNormsTo(dst, k, x, y, sqNorms(x), sqNorms(y))
}

// crossNormsTo is CrossTo with the samples' squared norms sx of x and sy
// of y given.
func crossNormsTo(dst *mat.Dense, k Kernel, x, y model.Data, sx, sy []float64) error {
	if err := checkBound(k); err != nil {
		return err
	}
	if err := dotsTo(dst, x, y); err != nil {
		return err
	}
	evalTo(dst, dst, k, sx, sy)
	return nil
}

// checkBound returns an error for a Gaussian kernel without its width.
func checkBound(k Kernel) error {
	if g, ok := k.(Gaussian); ok && !(g.Sigma > 0) {
		return fmt.Errorf("kernel: %v is not bound to data (call Bind) or has width 0", g)
	}
	return nil
}

// evalTo stores k(x_i, y_j) = k.Eval(dots_ij, sx_i, sy_j) into dst (the
// shape of dots; dst may be dots).
func evalTo(dst, dots *mat.Dense, k Kernel, sx, sy []float64) {
	d, raw := dots.RawMatrix(), dst.RawMatrix()
	for i, xx := range sx {
		in := d.Data[i*d.Stride : i*d.Stride+d.Cols]
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, dot := range in {
			row[j] = k.Eval(dot, xx, sy[j])
		}
	}
}

// products computes the kernels of a pool on two sets of samples x and y
// from what every kernel of this package reads of them (Kernel.Eval(dot,
// xx, yy)): their inner products x·yᵀ and squared norms, computed once for
// all the kernels when shared. Unshared, it keeps none and each kernel
// computes its own in place (CrossTo, MatrixTo), which holds no second
// matrix of x·yᵀ's size: for a pool that uses one kernel.
type products struct {
	x, y   model.Data
	shared bool
	dots   mat.Dense
	sx, sy []float64
}

func newProducts(x, y model.Data, shared bool) (*products, error) {
	p := &products{x: x, y: y, shared: shared}
	if !shared {
		return p, nil
	}
	if err := dotsTo(&p.dots, x, y); err != nil {
		return nil, err
	}
	p.sx, p.sy = sqNorms(x), sqNorms(y)
	return p, nil
}

// crossTo stores k(x_i, y_j) into dst, resized: CrossTo(dst, k, x, y).
func (p *products) crossTo(dst *mat.Dense, k Kernel) error {
	dst.Reset()
	if !p.shared {
		return CrossTo(dst, k, p.x, p.y)
	}
	if err := checkBound(k); err != nil {
		return err
	}
	dst.ReuseAs(p.dots.Dims())
	evalTo(dst, &p.dots, k, p.sx, p.sy)
	return nil
}

// matrixTo stores the kernel matrix of x into dst, resized, for products of
// x with itself: MatrixTo(dst, k, x).
func (p *products) matrixTo(dst *mat.Dense, k Kernel) error {
	if !p.shared {
		dst.Reset()
		return MatrixTo(dst, k, p.x)
	}
	if err := p.crossTo(dst, k); err != nil {
		return err
	}
	symmetrize(dst, k, p.sx)
	return nil
}

// dotsTo stores the inner products X·Yᵀ (Nx×Ny) of the samples into dst.
func dotsTo(dst *mat.Dense, x, y model.Data) error {
	dx, nx := x.Dims()
	dy, ny := y.Dims()
	if dx != dy {
		return fmt.Errorf("kernel: samples have %d and %d features", dx, dy)
	}
	if dst.IsEmpty() {
		dst.ReuseAs(nx, ny)
	} else if r, c := dst.Dims(); r != nx || c != ny {
		panic(mat.ErrShape)
	}
	switch a := model.Rows(x).(type) {
	case *mat.Dense:
		switch b := model.Rows(y).(type) {
		case *mat.Dense:
			var ws gemm.ABTWorkspace
			gemm.ABT(dst.RawMatrix(), a.RawMatrix(), b.RawMatrix(), &ws, false)
			return nil
		case *sparse.CSR:
			// X·Yᵀ = (Y·Xᵀ)ᵀ with Y sparse: blocks of X's samples.
			return sparseDots(dst, b, a, true)
		}
	case *sparse.CSR:
		switch b := model.Rows(y).(type) {
		case *mat.Dense:
			return sparseDots(dst, a, b, false)
		case *sparse.CSR:
			return sparseDots(dst, a, b, false)
		}
	}
	return errRows
}

// sparseDots stores s·bᵀ (or its transpose into dst when trans) where s is
// sparse (n×D) and b holds samples as rows (m×D): per block of b's rows,
// the block is densified as D×sparseBlock and multiplied by s.
func sparseDots(dst *mat.Dense, s *sparse.CSR, b mat.Matrix, trans bool) error {
	n, d := s.Dims()
	m, _ := b.Dims()
	blk := mat.NewDense(d, min(sparseBlock, m), nil)
	var out mat.Dense
	for lo := 0; lo < m; lo += sparseBlock {
		hi := min(lo+sparseBlock, m)
		w := hi - lo
		bt := blk.Slice(0, d, 0, w).(*mat.Dense)
		bt.Zero()
		switch bb := b.(type) {
		case *mat.Dense:
			bt.Copy(bb.Slice(lo, hi, 0, d).T())
		case *sparse.CSR:
			for r := lo; r < hi; r++ {
				ind, val := bb.Row(r)
				for p, j := range ind {
					bt.Set(j, r-lo, val[p])
				}
			}
		}
		out.Reset()
		s.MulDenseTo(&out, bt) // n×w
		if trans {
			dst.Slice(lo, hi, 0, n).(*mat.Dense).Copy(out.T())
		} else {
			dst.Slice(0, n, lo, hi).(*mat.Dense).Copy(&out)
		}
	}
	return nil
}

// sqNorms returns ‖x_i‖² for every sample.
func sqNorms(x model.Data) []float64 {
	_, n := x.Dims()
	switch a := model.Rows(x).(type) {
	case *mat.Dense:
		out := make([]float64, n)
		for i := range out {
			for _, v := range a.RawRowView(i) {
				out[i] += v * v
			}
		}
		return out
	case *sparse.CSR:
		return a.RowSqNorms(nil)
	}
	return make([]float64, n)
}

// subsetRows returns the samples idx of x, copied.
func subsetRows(x model.Data, idx []int) (model.Data, error) {
	d, _ := x.Dims()
	switch a := model.Rows(x).(type) {
	case *mat.Dense:
		out := mat.NewDense(len(idx), d, nil)
		for k, i := range idx {
			out.SetRow(k, a.RawRowView(i))
		}
		return model.DenseRows(out), nil
	case *sparse.CSR:
		out := sparse.Zeros(0, d)
		for _, i := range idx {
			ind, val := a.Row(i)
			out.AppendRow(ind, val)
		}
		return model.SparseRows(out), nil
	}
	return nil, errRows
}
