package stages

import (
	"fmt"
	"slices"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
)

// The checks a batch passes before it touches the model, so that no data
// can stop the Learner (docs/DESIGN.md §6, serve): the first batch with a
// dimension D fixes the stream's only if D is within Featurize.MaxDim, its
// D×K basis within the model's MaxBasisBytes and, for dense samples, its
// window within Featurize.MaxWindowBytes; otherwise every record of the
// batch is rejected, naming the limit, and a later batch may fix D. A rank
// above D is lowered to D before the first fit (capRank): a factorization
// of D features has at most D factors.

// admitDim returns why the stream cannot take D = dim features (dense
// when the samples are stored dense), or nil.
func (l *Learner) admitDim(dim int, dense bool) error {
	f := &l.Featurize
	if f.MaxDim > 0 && dim > f.MaxDim {
		return fmt.Errorf("%d features, over the limit of %d (--max-dim)", dim, f.MaxDim)
	}
	k := int64(min(l.Model.Rank, dim))
	if limit := basisLimit(l.Model.MaxBasisBytes); limit > 0 && int64(dim) > limit/8/max(k, 1) {
		return fmt.Errorf("%d features at rank %d need a basis of %.0f MiB, over the model's limit of %d MiB",
			dim, k, 8*float64(dim)*float64(k)/(1<<20), limit>>20)
	}
	if w := int64(l.Model.Graph.Window); dense && f.MaxWindowBytes > 0 && w > 0 && int64(dim) > f.MaxWindowBytes/8/w {
		return fmt.Errorf("%d features: a window of %d dense samples would take %.0f MiB, over the limit of %d MiB (lower --window or the features, or raise --max-window-bytes)",
			dim, w, 8*float64(dim)*float64(w)/(1<<20), f.MaxWindowBytes>>20)
	}
	return nil
}

// basisLimit is model.Online.MaxBasisBytes as the model reads it: 0 means
// model.DefaultMaxBasisBytes, a negative value no limit (returned as 0).
func basisLimit(b int64) int64 {
	switch {
	case b < 0:
		return 0
	case b == 0:
		return model.DefaultMaxBasisBytes
	}
	return b
}

// capRank lowers the model's rank to the stream's dimension before the
// first fit, when the dimension is known and below it: the README's
// four-feature records at the default rank 40 are learned at rank 4 rather
// than failing the first fit. Once the model has started its rank is
// fixed (and a checkpoint keeps it).
func (l *Learner) capRank() {
	if d := l.Featurize.dim; d > 0 && !l.Model.Started() && l.Model.Rank > d {
		l.Model.Rank = d
		if l.Model.Q >= d {
			l.Model.Q = 0 // the default, below the rank
		}
	}
}

// Waits reports whether a label for id, applied now with Label, would wait
// for its sample: the id is neither in the window nor awaited by an arrival
// prediction. Like every method of Learner it must be called from the
// goroutine that owns the Learner.
func (l *Learner) Waits(id string) bool {
	if _, ok := l.byID[id]; ok {
		return false
	}
	_, ok := l.preds.m[id]
	return !ok
}

// maxEntries is the bound on a text row's entries that keeps a window of
// them within Featurize.MaxWindowBytes (12 bytes an entry), or 0 for none.
func (l *Learner) maxEntries() int {
	w := int64(l.Model.Graph.Window)
	if l.Featurize.MaxWindowBytes <= 0 || w <= 0 {
		return 0
	}
	return int(max(1, l.Featurize.MaxWindowBytes/12/w))
}

// AdmitsLabel reports whether label names a class the stream knows, or one
// more class within Featurize.MaxClasses. Like every method of Learner it
// must be called from the goroutine that owns the Learner.
func (l *Learner) AdmitsLabel(label string) bool {
	if l.Featurize.MaxClasses <= 0 {
		return true
	}
	if _, ok := l.classOf[label]; ok {
		return true
	}
	return len(l.classes) < l.Featurize.MaxClasses
}

// capClasses rejects the labeled samples among keep (with their rows of x)
// and the late labels of f whose label would add a class beyond
// Featurize.MaxClasses, counting the classes this batch adds. Rejected
// late labels move from f.LateLabels to f.Rejects (new slices: the
// caller's are not written), so f covers the same records.
func (l *Learner) capClasses(f *Features, x model.Data, keep []int, bad []record.Reject) (model.Data, []int, []record.Reject) {
	limit := l.Featurize.MaxClasses
	if limit <= 0 {
		return x, keep, bad
	}
	added := map[string]bool{}
	admits := func(label string) bool {
		if _, ok := l.classOf[label]; ok || added[label] {
			return true
		}
		if len(l.classes)+len(added) >= limit {
			return false
		}
		added[label] = true
		return true
	}
	reject := func(off int64, id, label string) record.Reject {
		err := fmt.Errorf("label %q would be class %d, over the limit of %d classes (--max-classes)", label, limit+1, limit)
		return record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}}
	}
	var kept, pos []int
	for p, i := range keep {
		if f.Labeled[i] && !admits(f.Labels[i]) {
			bad = append(bad, reject(f.Offsets[i], f.IDs[i], f.Labels[i]))
			continue
		}
		kept, pos = append(kept, i), append(pos, p)
	}
	if len(kept) < len(keep) {
		keep = kept
		if len(pos) > 0 {
			x = subRows(x, pos)
		} else {
			x = nil
		}
	}
	late := f.LateLabels[:0:0]
	for _, ll := range f.LateLabels {
		// A label whose sample has not come waits without a class
		// (lateLabel); its class is counted when the sample comes
		// (waitingLabel; also for a sample later in this batch).
		if l.Waits(ll.ID) {
			late = append(late, ll)
			continue
		}
		if !admits(ll.Label) {
			r := reject(ll.Offset, ll.ID, ll.Label)
			bad = append(bad, r)
			f.Rejects = append(slices.Clip(f.Rejects), r)
			continue
		}
		late = append(late, ll)
	}
	if len(late) < len(f.LateLabels) {
		f.LateLabels = late
	}
	slices.SortStableFunc(bad, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
	return x, keep, bad
}

// rows is the featurize stage's in-order half (Featurize.RowsOf) behind the
// checks: a first batch that cannot fix the stream's dimension is rejected
// whole, the rank is lowered to the dimension before the first fit, text
// rows are bounded in entries, and labels beyond Featurize.MaxClasses are
// rejected.
func (l *Learner) rows(f *Features) (model.Data, []int, []record.Reject) {
	l.Featurize.maxEntries = l.maxEntries()
	if f.Text == nil && l.Featurize.dim == 0 {
		dim := f.Dim
		if f.X != nil {
			dim, _ = f.X.Dims()
		}
		if dim > 0 {
			if err := l.admitDim(dim, isDense(f.X)); err != nil {
				return l.capClasses(f, nil, nil, rejectAll(f, err))
			}
		}
	}
	x, keep, bad := l.Featurize.RowsOf(f)
	l.capRank()
	x, keep, bad = l.capClasses(f, x, keep, bad)
	return l.capNorms(f, x, keep, bad)
}

// capNorms rejects the samples among keep (with their rows of x) whose
// norm is above Featurize.MaxNormRatio times the reference: the geometric
// mean of the nonzero norms of the window's samples and of keep's. A text
// batch's rows are TF-IDF rows of unit length: they are not bounded.
func (l *Learner) capNorms(f *Features, x model.Data, keep []int, bad []record.Reject) (model.Data, []int, []record.Reject) {
	ratio := model.NormRatio(l.Featurize.MaxNormRatio)
	if ratio < 0 || len(keep) == 0 || f.Text != nil {
		return x, keep, bad
	}
	nm := model.RowNorms(x)
	sum, n := l.Window.logNorms()
	far, ref := model.NormOutliers(nm, ratio, sum, n)
	if len(far) == 0 {
		return x, keep, bad
	}
	var kept, pos []int
	for p, i := range keep {
		if len(far) > 0 && far[0] == p {
			err := model.NormOutlierError(nm[p], ref[0], ratio, "the window's")
			far, ref = far[1:], ref[1:]
			bad = append(bad, record.Reject{Offset: f.Offsets[i], ID: f.IDs[i], Reason: &record.Error{Offset: f.Offsets[i], ID: f.IDs[i], Err: err}})
			continue
		}
		kept, pos = append(kept, i), append(pos, p)
	}
	if len(pos) > 0 {
		x = subRows(x, pos)
	} else {
		x = nil
	}
	slices.SortStableFunc(bad, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
	return x, kept, bad
}

// isDense reports whether x's samples are stored dense (a batch without
// rows counts as dense: the stricter bound).
func isDense(x model.Data) bool {
	_, sp := model.Rows(x).(*sparse.CSR)
	return x == nil || !sp
}

// rejectAll rejects every sample of f, usable or not, for err, in input
// order.
func rejectAll(f *Features, err error) []record.Reject {
	var bad []record.Reject
	add := func(off int64, id string) {
		bad = append(bad, record.Reject{Offset: off, ID: id, Reason: &record.Error{Offset: off, ID: id, Err: err}})
	}
	for i, off := range f.Offsets {
		add(off, f.IDs[i])
	}
	for _, u := range f.Unusable {
		add(u.Offset, u.ID)
	}
	slices.SortStableFunc(bad, func(a, b record.Reject) int { return cmpOffset(a.Offset, b.Offset) })
	return bad
}
