package metrics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Assign solves the linear assignment problem for an r×c cost matrix with
// the Hungarian algorithm (Kuhn 1955, Munkres 1957) in its O(r²c)
// shortest-augmenting-path form with row and column potentials. It returns,
// for each row, its column, so that no column is used twice and the total
// cost is minimal. When r > c, r − c rows get −1. To maximize, negate the
// costs. It panics if a cost is not finite.
func Assign(cost mat.Matrix) []int {
	r, c := cost.Dims()
	for i := range r {
		for j := range c {
			if v := cost.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				panic(fmt.Sprintf("metrics: non-finite cost %v at (%d, %d)", v, i, j))
			}
		}
	}
	if r <= c {
		return assign(cost, r, c, false)
	}
	colRow := assign(cost, c, r, true) // assignment of columns to rows
	out := make([]int, r)
	for i := range out {
		out[i] = -1
	}
	for j, i := range colRow {
		out[i] = j
	}
	return out
}

// assign solves the n×m problem, n ≤ m, on cost (or costᵀ when t is true).
// Indices are 1-based inside, with row and column 0 as sentinels.
func assign(cost mat.Matrix, n, m int, t bool) []int {
	at := func(i, j int) float64 {
		if t {
			return cost.At(j, i)
		}
		return cost.At(i, j)
	}
	inf := math.Inf(1)
	u := make([]float64, n+1) // row potentials
	v := make([]float64, m+1) // column potentials
	p := make([]int, m+1)     // p[j]: row matched to column j (0 = none)
	way := make([]int, m+1)   // previous column on the augmenting path
	minv := make([]float64, m+1)
	used := make([]bool, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = inf
			used[j] = false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if cur := at(i0-1, j-1) - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 { // flip the augmenting path
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, n)
	for j := 1; j <= m; j++ {
		if p[j] != 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}
