package model

// Row returns the features of the live node n as stored by PartialFit: a
// dense row (dense is the model's storage, valid until the next
// PartialFit; ind and val nil), or a sparse one (ind, val; dense nil). It
// returns all nil if n is not a live node.
func (o *Online) Row(n int) (dense []float64, ind []int, val []float64) {
	if o.g == nil || n < 0 || n >= o.height || !o.g.Live(n) {
		return nil, nil, nil
	}
	if o.sparse {
		if n >= len(o.xsRows) {
			return nil, nil, nil
		}
		return nil, o.xsRows[n], o.xsVals[n]
	}
	return o.xd.RawRowView(n), nil, nil
}

// Sparse reports whether the model stores sparse rows (documents), which
// the first batch decides.
func (o *Online) Sparse() bool { return o.sparse }
