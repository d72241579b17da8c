package distributed

import (
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// stats accumulates the change of an owner's statistics over one round:
// ΔA = Σ ±v_i v_iᵀ (K×K) and ΔB = Σ ±x_i v_iᵀ (D×K). A block of dense
// samples adds into a dense D×K ΔB (model.AddStats); a block with a
// sparse sample adds only the rows of ΔB at the features it has, so that
// a round on sparse samples of a large dimension (2¹⁶ hashed TF-IDF
// columns) costs O(nnz·K) and never holds a D×K matrix.
type stats struct {
	k     int
	a     mat.Dense         // ΔA; empty until the first add
	dense mat.Dense         // ΔB of the dense blocks; empty until one
	rows  map[int][]float64 // ΔB of the sparse blocks, by row (feature)
}

// add adds sign·Σ_i x_i v_iᵀ to ΔB and sign·VᵀV to ΔA, for the samples xs
// and their codes v (len(xs)×K).
func (st *stats) add(xs []*Sample, v *mat.Dense, sign float64) {
	if len(xs) == 0 {
		return
	}
	sparseBlock := false
	for _, s := range xs {
		sparseBlock = sparseBlock || s.Dense == nil
	}
	if !sparseBlock {
		model.AddStats(&st.dense, &st.a, blockData(xs), v, sign)
		return
	}
	if st.a.IsEmpty() {
		st.a.ReuseAs(st.k, st.k)
		st.a.Zero()
	}
	var vtv mat.Dense
	vtv.Mul(v.T(), v)
	vtv.Scale(sign, &vtv)
	st.a.Add(&st.a, &vtv)
	if st.rows == nil {
		st.rows = map[int][]float64{}
	}
	for i, s := range xs {
		code := v.RawRowView(i)
		put := func(j int, x float64) {
			row := st.rows[j]
			if row == nil {
				row = make([]float64, st.k)
				st.rows[j] = row
			}
			for c, y := range code {
				row[c] += sign * x * y
			}
		}
		if s.Dense != nil {
			for j, x := range s.Dense {
				if x != 0 {
					put(j, x)
				}
			}
			continue
		}
		for q, j := range s.Index {
			put(j, s.Value[q])
		}
	}
}

// to writes ΔA and the nonzero rows of ΔB, in increasing row order, into
// dl (A, BRows and B).
func (st *stats) to(dl *delta) {
	k := st.k
	if st.a.IsEmpty() {
		dl.A = make([]float64, k*k)
		return
	}
	dl.A = st.a.RawMatrix().Data
	nonzero := func(row []float64) bool {
		for _, x := range row {
			if x != 0 {
				return true
			}
		}
		return false
	}
	if !st.dense.IsEmpty() {
		for j, row := range st.rows {
			floats.Add(st.dense.RawRowView(j), row)
		}
		d, _ := st.dense.Dims()
		for j := range d {
			if row := st.dense.RawRowView(j); nonzero(row) {
				dl.BRows = append(dl.BRows, j)
				dl.B = append(dl.B, row...)
			}
		}
		return
	}
	keys := make([]int, 0, len(st.rows))
	for j, row := range st.rows {
		if nonzero(row) {
			keys = append(keys, j)
		}
	}
	slices.Sort(keys)
	dl.BRows = keys
	dl.B = make([]float64, 0, len(keys)*k)
	for _, j := range keys {
		dl.B = append(dl.B, st.rows[j]...)
	}
}
