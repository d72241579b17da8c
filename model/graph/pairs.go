package graph

import (
	"fmt"

	"github.com/nmfstream/nmfstream/model/sparse"
)

// FromPairs returns the symmetric n×n binary graph with an edge for each
// pair (i, j), for example must-link or cannot-link constraints (dpca
// paper §3.2). Repeated pairs count once. It returns an error for an index
// out of [0, n) or a pair (i, i).
func FromPairs(n int, pairs [][2]int) (*sparse.CSR, error) {
	es := make([]edge, 0, len(pairs))
	for _, p := range pairs {
		i, j := p[0], p[1]
		if i < 0 || i >= n || j < 0 || j >= n {
			return nil, fmt.Errorf("graph: pair (%d, %d) out of range [0, %d)", i, j, n)
		}
		if i == j {
			return nil, fmt.Errorf("graph: pair (%d, %d) joins a node to itself", i, j)
		}
		es = append(es, edge{int32(i), int32(j), 1})
	}
	return symmetric(n, es, Max), nil
}

// FromConstraints returns the signed n×n graph with +1 for each must-link
// pair and −1 for each cannot-link pair, the pairwise-constraint analogue of
// SSKNMF's W¹. It returns an error if a pair is in both sets, as well as
// for the errors of FromPairs.
func FromConstraints(n int, mustLink, cannotLink [][2]int) (*sparse.CSR, error) {
	m, err := FromPairs(n, mustLink)
	if err != nil {
		return nil, err
	}
	c, err := FromPairs(n, cannotLink)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		ind, _ := c.Row(i)
		for _, j := range ind {
			if m.At(i, j) != 0 {
				return nil, fmt.Errorf("graph: pair (%d, %d) is both must-link and cannot-link", i, j)
			}
		}
	}
	return addScaled(m, c, -1), nil
}
