package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestColumnNormsMatchGonum checks columnNorms, which walks the matrix by
// rows, against mat.Norm of each column bit for bit, on matrices with
// zeros, a wide range of magnitudes, one row, one column, and NaN and
// infinite entries.
func TestColumnNormsMatchGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for c, shape := range [][2]int{{1, 5}, {7, 1}, {3, 3}, {200, 40}, {1000, 7}, {2000, 40}} {
		wide := c%2 == 0 // magnitudes over 300 decades, or entries like a basis's
		m := mat.NewDense(shape[0], shape[1], nil)
		raw := m.RawMatrix()
		for i := range raw.Data {
			switch rng.IntN(4) {
			case 0: // stays zero
			case 1:
				if wide {
					raw.Data[i] = rng.Float64() * math.Pow(10, float64(rng.IntN(300)-150))
				} else {
					raw.Data[i] = rng.Float64()
				}
			default:
				raw.Data[i] = rng.NormFloat64()
			}
		}
		if shape[0] > 2 && shape[1] > 2 {
			m.Set(1, 1, math.NaN())
			m.Set(2, 2, math.Inf(1))
			m.Set(0, 2, math.Inf(-1))
		}
		got := columnNorms(m)
		for j, g := range got {
			want := mat.Norm(m.ColView(j), 2)
			if math.Float64bits(g) != math.Float64bits(want) && !(math.IsNaN(g) && math.IsNaN(want)) {
				t.Errorf("%v column %d: columnNorms %v (%x), mat.Norm %v (%x)", shape, j, g, math.Float64bits(g), want, math.Float64bits(want))
			}
		}
	}
}
