package distributed

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// learnInRuns learns the share f and its context fc (nil for none) in
// offset order, in runs each a step of its own, split at the context's
// labels: its labeled samples, each a step alone, and its late labels
// (late: fc's, taken out of it, applied by applyContextLabels). A run
// holds f's records between two such labels and, when fc's rows are dense
// of f's dimension, fc's unlabeled samples between them, merged by offset
// (learnShareRows; else each of those is a step alone too). No sample of f
// is predicted with a label that comes after it in the stream, and every
// sample of f after a context label is predicted with it. It returns f's
// Step (its runs' predictions, rejects and duplicates, in order) and adds
// to ctxCounts what the context added to l's counters. It costs a step
// per label, so learnShare uses it only while l knows no class: in one
// batch per owner, or the few before the stream's first label.
func learnInRuns(l *stages.Learner, f, fc *stages.Features, late []record.LateLabel, ctxCounts *stages.Counters) (*stages.Step, error) {
	type event struct {
		off  int64
		late int // index in late, or −1 for fc's sample at off
	}
	merge := fc != nil && denseOf(f, fc)
	var order []event
	if fc != nil {
		for i, o := range fc.Offsets {
			if !merge || fc.Labeled[i] {
				order = append(order, event{o, -1})
			}
		}
	}
	for k, ll := range late {
		order = append(order, event{ll.Offset, k})
	}
	slices.SortStableFunc(order, func(a, b event) int { return cmp.Compare(a.off, b.off) })
	st := &stages.Step{}
	learnRun := func(lo, hi int64) error {
		run, err := recordsIn(f, lo, hi)
		if err != nil {
			return err
		}
		var cr *stages.Features
		if merge {
			if cr, err = recordsWhere(fc, lo, hi, func(i int) bool { return !fc.Labeled[i] }); err != nil {
				return err
			}
		}
		if run == nil {
			return learnContext(l, cr, ctxCounts)
		}
		s, err := learnShareRows(l, run, cr, ctxCounts)
		if err != nil {
			return err
		}
		st.Predictions = append(st.Predictions, s.Predictions...)
		st.Rejects = append(st.Rejects, s.Rejects...)
		st.Featureless = append(st.Featureless, s.Featureless...)
		st.Duplicates = append(st.Duplicates, s.Duplicates...)
		return nil
	}
	lo := int64(math.MinInt64)
	for _, e := range order {
		c := e.off
		if err := learnRun(lo, c); err != nil {
			return nil, err
		}
		lo = c
		if e.late >= 0 {
			if err := applyContextLabels(l, late[e.late:e.late+1], ctxCounts); err != nil {
				return nil, err
			}
			continue
		}
		one, err := recordsIn(fc, c, c+1)
		if err != nil {
			return nil, err
		}
		if err := learnContext(l, one, ctxCounts); err != nil {
			return nil, err
		}
	}
	if err := learnRun(lo, math.MaxInt64); err != nil {
		return nil, err
	}
	return st, nil
}

// learnContext learns the context samples c (nil for none) in a step of
// their own and adds what they added to l's counters to ctxCounts.
func learnContext(l *stages.Learner, c *stages.Features, ctxCounts *stages.Counters) error {
	if c == nil {
		return nil
	}
	before := l.Counters()
	if _, err := l.LearnFeatures(c); err != nil {
		return fmt.Errorf("context: %w", err)
	}
	*ctxCounts = addCounters(*ctxCounts, subCounters(l.Counters(), before))
	return nil
}

// denseOf reports whether the rows of f and fc are dense, of one
// dimension: fc can then be merged with f (mergeByOffset).
func denseOf(f, fc *stages.Features) bool {
	fx, ok := model.Rows(f.X).(*mat.Dense)
	cx, ok2 := model.Rows(fc.X).(*mat.Dense)
	return ok && ok2 && fx.RawMatrix().Cols == cx.RawMatrix().Cols
}

// recordsIn returns the records of f whose offsets are in [lo, hi) (its
// samples with their rows or documents, late labels, rejects and unusable
// samples), or nil if there are none. f's offsets are distinct.
func recordsIn(f *stages.Features, lo, hi int64) (*stages.Features, error) {
	return recordsWhere(f, lo, hi, nil)
}

// recordsWhere is recordsIn keeping only the samples i for which keep(i)
// is true (every sample if keep is nil).
func recordsWhere(f *stages.Features, lo, hi int64, keep func(i int) bool) (*stages.Features, error) {
	in := func(o int64) bool { return o >= lo && o < hi }
	out := &stages.Features{Dim: f.Dim}
	var pos []int
	for i, o := range f.Offsets {
		if in(o) && (keep == nil || keep(i)) {
			pos = append(pos, i)
			appendSample(out, f, i)
		}
	}
	out.LateLabels = keepIn(f.LateLabels, in, func(x record.LateLabel) int64 { return x.Offset })
	out.Rejects = keepIn(f.Rejects, in, func(x record.Reject) int64 { return x.Offset })
	out.Unusable = keepIn(f.Unusable, in, func(x record.Reject) int64 { return x.Offset })
	if out.Records() == 0 {
		return nil, nil
	}
	if len(pos) > 0 && f.X != nil {
		x, err := rowsAt(f.X, pos)
		if err != nil {
			return nil, err
		}
		out.X = x
	}
	return out, nil
}

// keepIn returns the elements of s whose offset is in, in order.
func keepIn[T any](s []T, in func(int64) bool, offset func(T) int64) []T {
	var out []T
	for _, x := range s {
		if in(offset(x)) {
			out = append(out, x)
		}
	}
	return out
}
