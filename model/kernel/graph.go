package kernel

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// Weighting chooses the edge weights of the graph in kernel space (Wang and
// AbdulJabbar §3.2).
type Weighting int

const (
	// ZeroOne gives every edge weight 1 (eq. 5). The default.
	ZeroOne Weighting = iota
	// KernelWeight gives edge (n, m) the weight K^τ(x_n, x_m), the
	// dot-product weighting of eq. 6 in the kernel space. Negative kernel
	// values (possible only for kernels that are negative somewhere) are
	// clipped to 0, since the graph must attract.
	KernelWeight
)

// graphBlock is the number of kernel rows scanned at a time; for a factor
// it bounds the (graphBlock×N) product held in memory.
const graphBlock = 256

// Graph returns the P-nearest-neighbour graph of the samples in the kernel
// space of K (N×N, symmetric): the squared distance is
// d²(i, j) = K_ii + K_jj − 2K_ij (eq. 15), each sample is linked to its p
// nearest other samples (ties broken by the smaller index), and the graph
// is symmetrized as S = max(A, Aᵀ): an edge exists if either end counts the
// other among its p nearest. It returns an error if p is not in [1, N).
func Graph(k *mat.Dense, p int, w Weighting) (*sparse.CSR, error) {
	var g gram
	g.set(k, nil, nil)
	return graphOf(&g, p, w)
}

func graphOf(g *gram, p int, w Weighting) (*sparse.CSR, error) {
	n := g.n
	if p < 1 || p >= n {
		return nil, fmt.Errorf("kernel: %d neighbours for %d samples, want 1 ≤ P < N", p, n)
	}
	b := sparse.NewBuilder(n, n)
	idx := make([]int, p)
	dist := make([]float64, p)
	var rows mat.Dense
	for lo := 0; lo < n; lo += graphBlock {
		hi := min(lo+graphBlock, n)
		rows.Reset()
		rows.ReuseAs(hi-lo, n)
		g.rowsTo(&rows, lo, hi)
		for i := lo; i < hi; i++ {
			row := rows.RawRowView(i - lo)
			cnt := 0
			for j, kij := range row {
				if j == i {
					continue
				}
				d := g.diag[i] + g.diag[j] - 2*kij
				if cnt == p && !(d < dist[p-1]) { // ties keep the smaller j seen first
					continue
				}
				if cnt < p {
					cnt++
				}
				// insert (d, j) into the sorted prefix of length cnt
				q := cnt - 1
				for q > 0 && d < dist[q-1] {
					dist[q], idx[q] = dist[q-1], idx[q-1]
					q--
				}
				dist[q], idx[q] = d, j
			}
			for q := 0; q < cnt; q++ {
				j := idx[q]
				v := 1.0
				if w == KernelWeight {
					v = max(row[j], 0)
					if v == 0 {
						continue
					}
				}
				b.Add(i, j, v)
			}
		}
	}
	return symmetrizeMax(b.CSR()), nil
}

// symmetrizeMax returns max(A, Aᵀ) for a non-negative A.
func symmetrizeMax(a *sparse.CSR) *sparse.CSR {
	n, _ := a.Dims()
	type key struct{ i, j int }
	m := make(map[key]float64, 2*a.NNZ())
	for i := 0; i < n; i++ {
		ind, val := a.Row(i)
		for p, j := range ind {
			for _, k := range [2]key{{i, j}, {j, i}} {
				if val[p] > m[k] {
					m[k] = val[p]
				}
			}
		}
	}
	b := sparse.NewBuilder(n, n)
	for k, v := range m {
		b.Add(k.i, k.j, v)
	}
	return b.CSR()
}
