package distributed

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// learnInRuns learns the share f and its context fc (nil for none) in
// offset order, as alternating runs of f's records and of single context
// samples or context late labels (late: fc's, taken out of it, applied by
// applyContextLabels), each run a step of its own: no sample of f is
// predicted with a label that comes after it in the stream, and every
// sample of f after a context label is predicted with it. It returns f's
// Step (its runs' predictions, rejects and duplicates, in order) and adds
// to ctxCounts what the context's runs added to l's counters. It costs a
// step per run, so learnShare uses it only while l knows no class: in one
// batch per owner.
func learnInRuns(l *stages.Learner, f, fc *stages.Features, late []record.LateLabel, ctxCounts *stages.Counters) (*stages.Step, error) {
	type event struct {
		off  int64
		late int // index in late, or −1 for fc's sample at off
	}
	var order []event
	if fc != nil {
		for _, o := range fc.Offsets {
			order = append(order, event{o, -1})
		}
	}
	for k, ll := range late {
		order = append(order, event{ll.Offset, k})
	}
	slices.SortStableFunc(order, func(a, b event) int { return cmp.Compare(a.off, b.off) })
	st := &stages.Step{}
	learnF := func(lo, hi int64) error {
		run, err := recordsIn(f, lo, hi)
		if err != nil || run == nil {
			return err
		}
		s, err := l.LearnFeatures(run)
		if err != nil {
			return err
		}
		st.Predictions = append(st.Predictions, s.Predictions...)
		st.Rejects = append(st.Rejects, s.Rejects...)
		st.Duplicates = append(st.Duplicates, s.Duplicates...)
		return nil
	}
	lo := int64(math.MinInt64)
	for _, e := range order {
		c := e.off
		if err := learnF(lo, c); err != nil {
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
		before := l.Counters()
		if _, err := l.LearnFeatures(one); err != nil {
			return nil, fmt.Errorf("context: %w", err)
		}
		*ctxCounts = addCounters(*ctxCounts, subCounters(l.Counters(), before))
	}
	if err := learnF(lo, math.MaxInt64); err != nil {
		return nil, err
	}
	return st, nil
}

// recordsIn returns the records of f whose offsets are in [lo, hi) (its
// samples with their rows or documents, late labels, rejects and unusable
// samples), or nil if there are none. f's offsets are distinct.
func recordsIn(f *stages.Features, lo, hi int64) (*stages.Features, error) {
	in := func(o int64) bool { return o >= lo && o < hi }
	out := &stages.Features{Dim: f.Dim}
	var pos []int
	for i, o := range f.Offsets {
		if in(o) {
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
