package graph

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Degrees stores the row sums of s, the diagonal of D_S = diag(S·1), into
// dst and returns it. If dst is nil a new slice is allocated; otherwise it
// must have length r and Degrees panics if it does not.
func Degrees(s *sparse.CSR, dst []float64) []float64 {
	r, _ := s.Dims()
	if dst == nil {
		dst = make([]float64, r)
	} else if len(dst) != r {
		panic(mat.ErrShape)
	}
	for i := 0; i < r; i++ {
		_, v := s.Row(i)
		var d float64
		for _, x := range v {
			d += x
		}
		dst[i] = d
	}
	return dst
}

// Laplacian returns L = D − S for a square weight matrix s, with
// D = diag(S·1). Rows of L sum to zero, and for S symmetric and ≥ 0, L is
// positive semi-definite: xᵀLx = ½ Σᵢⱼ Sᵢⱼ(xᵢ − xⱼ)². Rows of isolated
// nodes are empty. It panics if s is not square.
func Laplacian(s *sparse.CSR) *sparse.CSR {
	return laplacian(s, false)
}

// NormalizedLaplacian returns I − D^{−½} S D^{−½}, with the rows and
// columns of nodes of zero degree left empty (their diagonal is 0, not 1,
// so that free slots of a Graph stay empty). It panics if s is not square.
func NormalizedLaplacian(s *sparse.CSR) *sparse.CSR {
	return laplacian(s, true)
}

func laplacian(s *sparse.CSR, normalized bool) *sparse.CSR {
	r, c := s.Dims()
	if r != c {
		panic(fmt.Sprintf("graph: Laplacian of a non-square %d×%d matrix", r, c))
	}
	deg := Degrees(s, nil)
	scale := make([]float64, r)
	for i, d := range deg {
		if d > 0 {
			scale[i] = 1 / math.Sqrt(d)
		}
	}
	indptr := make([]int, r+1)
	ind := make([]int, 0, s.NNZ()+r)
	val := make([]float64, 0, s.NNZ()+r)
	for i := 0; i < r; i++ {
		cols, vals := s.Row(i)
		diag := deg[i]
		if normalized {
			diag = 0
			if deg[i] > 0 {
				diag = 1
			}
		}
		for p, j := range cols {
			if j == i {
				diag -= off(vals[p], normalized, scale, i, j)
			}
		}
		wrote := false
		for p, j := range cols {
			if j == i {
				continue
			}
			if !wrote && j > i {
				if diag != 0 {
					ind = append(ind, i)
					val = append(val, diag)
				}
				wrote = true
			}
			ind = append(ind, j)
			val = append(val, -off(vals[p], normalized, scale, i, j))
		}
		if !wrote && diag != 0 {
			ind = append(ind, i)
			val = append(val, diag)
		}
		indptr[i+1] = len(ind)
	}
	return sparse.NewCSR(r, r, indptr, ind, val)
}

func off(v float64, normalized bool, scale []float64, i, j int) float64 {
	if normalized {
		return v * scale[i] * scale[j]
	}
	return v
}

// addScaled returns a + f·b for two matrices of the same shape.
func addScaled(a, b *sparse.CSR, f float64) *sparse.CSR {
	r, c := a.Dims()
	bl := sparse.NewBuilder(r, c)
	for i := 0; i < r; i++ {
		ind, val := a.Row(i)
		for p, j := range ind {
			bl.Add(i, j, val[p])
		}
		ind, val = b.Row(i)
		for p, j := range ind {
			bl.Add(i, j, f*val[p])
		}
	}
	return bl.CSR()
}
