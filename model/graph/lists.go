package graph

// lists holds, for every slot, a directed neighbour list of at most k
// entries sorted ascending by (key, id). key is the canonical squared
// distance (see store.canon), so two lists built by different routes
// (batch, incremental, re-search) agree exactly.
type lists struct {
	k   int
	nbr []int32   // slot*k + r
	key []float64 // slot*k + r
	n   []int32   // entries used per slot
}

func (l *lists) grow(slots int) {
	for len(l.n) < slots {
		l.n = append(l.n, 0)
	}
	for len(l.nbr) < slots*l.k {
		l.nbr = append(l.nbr, 0)
		l.key = append(l.key, 0)
	}
}

func (l *lists) row(p int) ([]int32, []float64) {
	lo := p * l.k
	hi := lo + int(l.n[p])
	return l.nbr[lo:hi], l.key[lo:hi]
}

func (l *lists) clear(p int) { l.n[p] = 0 }

// less orders candidates by key, then by smaller id: the deterministic tie-break.
func less(ka float64, a int, kb float64, b int) bool {
	return ka < kb || (ka == kb && a < b)
}

// worst returns the largest key in p's list and whether the list is full.
func (l *lists) worst(p int) (float64, int, bool) {
	n := int(l.n[p])
	if n < l.k {
		return 0, 0, false
	}
	i := p*l.k + n - 1
	return l.key[i], int(l.nbr[i]), true
}

// offer inserts (j, key) into p's list if it ranks among the k best. It
// reports whether the list changed. j must not already be in the list.
func (l *lists) offer(p, j int, key float64) bool {
	base := p * l.k
	n := int(l.n[p])
	if n == l.k {
		if !less(key, j, l.key[base+n-1], int(l.nbr[base+n-1])) {
			return false
		}
		n-- // drop the worst
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
	return true
}

// has reports whether j is in p's list.
func (l *lists) has(p, j int) bool {
	ids, _ := l.row(p)
	for _, x := range ids {
		if int(x) == j {
			return true
		}
	}
	return false
}
