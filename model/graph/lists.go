package graph

import "slices"

// lists holds, for every slot, a directed neighbour list of at most k
// entries sorted ascending by (key, id). key is the canonical squared
// distance (see store.canon), so two lists built by different routes
// (batch, incremental, re-search) agree exactly.
//
// The first vis entries are the neighbour list proper; the k − vis entries
// after them are slack: the next nearest candidates, kept exact so that
// deleting nodes rarely forces a new search. A list is always the exact
// nearest prefix of its candidates: cut[p] records that some candidate
// offered to p (by a search or an insertion) was left out, so that a short
// list is either complete (!cut) or needs a search only once it holds
// fewer than vis entries.
type lists struct {
	k   int       // capacity per slot
	vis int       // visible entries per slot, ≤ k
	nbr []int32   // slot*k + r
	key []float64 // slot*k + r
	n   []int32   // entries used per slot
	cut []bool    // a candidate was left out of the slot's list
}

func (l *lists) grow(slots int) {
	for len(l.n) < slots {
		l.n = append(l.n, 0)
		l.cut = append(l.cut, false)
	}
	for len(l.nbr) < slots*l.k {
		l.nbr = append(l.nbr, 0)
		l.key = append(l.key, 0)
	}
}

// row returns p's whole list, slack included.
func (l *lists) row(p int) ([]int32, []float64) {
	lo := p * l.k
	hi := lo + int(l.n[p])
	return l.nbr[lo:hi], l.key[lo:hi]
}

// visRow returns the visible part of p's list.
func (l *lists) visRow(p int) ([]int32, []float64) {
	lo := p * l.k
	hi := lo + min(int(l.n[p]), l.vis)
	return l.nbr[lo:hi], l.key[lo:hi]
}

func (l *lists) clear(p int) { l.n[p], l.cut[p] = 0, false }

// less orders candidates by key, then by smaller id: the deterministic tie-break.
func less(ka float64, a int, kb float64, b int) bool {
	return ka < kb || (ka == kb && a < b)
}

// worst returns the largest entry of p's list and whether the list is
// bounded: full, or cut, so that a newcomer enters only if it ranks before
// that entry. An unbounded list takes every newcomer.
func (l *lists) worst(p int) (float64, int, bool) {
	n := int(l.n[p])
	if n == 0 || (n < l.k && !l.cut[p]) {
		return 0, 0, false
	}
	i := p*l.k + n - 1
	return l.key[i], int(l.nbr[i]), true
}

// offer inserts (j, key) into p's list, which must be unbounded or rank
// (j, key) before its worst entry; j must not be in the list. A full list
// drops its worst entry (and is then cut). offer returns the position j
// took and the id pushed out of the visible part (−1 if none).
func (l *lists) offer(p, j int, key float64) (pos, out int) {
	base := p * l.k
	n := int(l.n[p])
	out = -1
	if n >= l.vis {
		out = int(l.nbr[base+l.vis-1]) // moves to slack or is dropped
	}
	if n == l.k {
		n-- // drop the worst
		l.cut[p] = true
	} else {
		l.n[p]++
	}
	// Insertion into the sorted prefix of length n.
	i := n
	for i > 0 && less(key, j, l.key[base+i-1], int(l.nbr[base+i-1])) {
		l.key[base+i] = l.key[base+i-1]
		l.nbr[base+i] = l.nbr[base+i-1]
		i--
	}
	l.key[base+i] = key
	l.nbr[base+i] = int32(j)
	if i >= l.vis {
		out = -1
	}
	return i, out
}

// drop deletes the entries of p's list with gone set, keeping the order.
// It calls touch (if non-nil) with p and every id entering or leaving the
// visible part, and reports whether the list needs a new search: it holds
// fewer than vis entries while candidates were left out.
func (l *lists) drop(p int, gone []bool, touch func(int)) bool {
	base := p * l.k
	n := int(l.n[p])
	var before [64]int32
	vb := append(before[:0], l.nbr[base:base+min(n, l.vis)]...)
	m := 0
	for i := 0; i < n; i++ {
		if !gone[l.nbr[base+i]] {
			l.nbr[base+m] = l.nbr[base+i]
			l.key[base+m] = l.key[base+i]
			m++
		}
	}
	l.n[p] = int32(m)
	if m == n {
		return false
	}
	if touch != nil {
		// Live entries only move forward: the visible part changed iff a
		// gone entry was in it, and the entries new to it gain an edge.
		va := l.nbr[base : base+min(m, l.vis)]
		if len(va) != len(vb) || !slices.Equal(va, vb[:len(va)]) {
			touch(p)
			for _, j := range va {
				if !slices.Contains(vb, j) {
					touch(int(j))
				}
			}
		}
	}
	return m < l.vis && l.cut[p]
}
