package distributed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// contextLearner returns a fresh owner's Learner for the tests of
// learnShare.
func contextLearner() *stages.Learner {
	return &stages.Learner{Model: &model.Online{Rank: 3, Graph: graph.KNN{K: 5, Window: 200}, Src: rand.NewPCG(1, 1)}}
}

// contextOf returns samples as a context: no ids, labeled with their
// cluster as "c<label>" where labeled, offsets offs.
func contextOf(samples []sample, offs []int64, labeled bool) *stages.Features {
	f := &stages.Features{X: model.DenseRows(rowsOf(samples)), Offsets: offs}
	for _, s := range samples {
		lab := ""
		if labeled {
			lab = fmt.Sprintf("c%d", s.Label)
		}
		f.IDs, f.Labels, f.Labeled = append(f.IDs, ""), append(f.Labels, lab), append(f.Labeled, labeled)
	}
	return f
}

// TestLearnShareFirstLabel: in the batch of the stream's first label, an
// owner whose share holds no label learns the label from its context
// before it predicts its share, so every sample of the share after that
// label gets a prediction (issue 29: 19 of MNIST 15k's samples had none
// at P = 3), and what the context added is exactly what ctxCounts holds.
func TestLearnShareFirstLabel(t *testing.T) {
	samples := clusteredSamples(40, 12, 2, 5)
	l := contextLearner()
	share := routeFeatures(samples[:20], 10)
	fc := contextOf(samples[20:21], []int64{3}, true)
	var ctx stages.Counters
	st, err := learnShare(l, share, fc, &ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Predictions) != 20 {
		t.Fatalf("%d predictions of the share's 20 samples", len(st.Predictions))
	}
	for _, p := range st.Predictions {
		if p.ID == "" || p.Label == "" {
			t.Errorf("sample %q at offset %d: no prediction after the stream's first label", p.ID, p.Offset)
		}
	}
	want := stages.Counters{Records: 1, Samples: 1}
	if ctx.Records != want.Records || ctx.Samples != want.Samples || ctx.Labeled+ctx.Early != 1 {
		t.Errorf("the context added %+v, want one record, one sample and one label", ctx)
	}
	if own := subCounters(l.Counters(), ctx); own.Records != 20 || own.Samples != 20 || own.Labeled+own.Early != 0 {
		t.Errorf("the share's counters %+v, want 20 records and samples, no label", own)
	}
}

// learnTwoAt100And102 runs learnShare on a share of two samples at
// offsets 100 and 102 and returns its Step, whose predictions it checks
// are those two, and what the context added to the counters.
func learnTwoAt100And102(t *testing.T, l *stages.Learner, share, fc *stages.Features) (*stages.Step, stages.Counters) {
	t.Helper()
	var ctx stages.Counters
	st, err := learnShare(l, share, fc, &ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Predictions) != 2 || st.Predictions[0].Offset != 100 || st.Predictions[1].Offset != 102 {
		t.Fatalf("predictions %+v, want the share's offsets 100 and 102", st.Predictions)
	}
	return st, ctx
}

// TestLearnShareNoLaterLabel: while the owner knows no class, its share
// and context are learned in offset order: the share's sample before the
// context's first label gets no prediction, the one after it is predicted
// with that label and not with the context's later one, which the share's
// samples must not see; the counts stay apart.
func TestLearnShareNoLaterLabel(t *testing.T) {
	samples := clusteredSamples(60, 12, 2, 6)
	l := contextLearner()
	share := routeFeatures([]sample{samples[0], samples[1]}, 100) // offsets 100, 101
	share.Offsets[1] = 102
	fc := contextOf([]sample{samples[2], samples[1]}, []int64{101, 103}, true)
	fc.Labels[0], fc.Labels[1] = "early", "late"
	st, ctx := learnTwoAt100And102(t, l, share, fc)
	if got := st.Predictions[0].Label; got != "" {
		t.Errorf("offset 100, before any label: predicted %q, want none", got)
	}
	if got := st.Predictions[1].Label; got != "early" {
		t.Errorf("offset 102: predicted %q, want early (the only label before it; late comes at 103)", got)
	}
	if ctx.Records != 2 || ctx.Samples != 2 {
		t.Errorf("the context added %+v, want two records and samples", ctx)
	}
	if own := subCounters(l.Counters(), ctx); own.Records != 2 || own.Samples != 2 || own.Labeled+own.Early != 0 {
		t.Errorf("the share's counters %+v, want 2 records and samples, no label", own)
	}
}

// TestLearnShareMergesByOffset: once the owner knows a class, a context
// label that comes before a share's sample in the batch is learned before
// that sample is predicted (as on one machine), and not before a sample
// that comes earlier: the sample after it, a copy of the context's row,
// is predicted with the context's class; the one before it cannot be.
func TestLearnShareMergesByOffset(t *testing.T) {
	samples := clusteredSamples(60, 12, 2, 6)
	l := contextLearner()
	// A first batch teaches class c0 only (the even samples are cluster 0).
	first := routeFeatures(samples[0:20:20], 0)
	for i := 0; i < 20; i += 2 {
		first.Labels[i], first.Labeled[i] = "c0", true
	}
	if _, err := l.LearnFeatures(first); err != nil {
		t.Fatal(err)
	}
	// Cluster 1's samples: 21, 23, … (odd positions of samples).
	one := samples[21]
	share := routeFeatures([]sample{samples[23], one}, 100) // offsets 100, 101
	share.Offsets[1] = 102
	fc := contextOf([]sample{one}, []int64{101}, true) // c1, between them
	st, ctx := learnTwoAt100And102(t, l, share, fc)
	if got := st.Predictions[0].Label; got != "c0" {
		t.Errorf("offset 100, before the context's label: predicted %q, want c0 (the only class known then)", got)
	}
	if got := st.Predictions[1].Label; got != "c1" {
		t.Errorf("offset 102, after the context's c1 on its own row: predicted %q, want c1", got)
	}
	if ctx.Records != 1 || ctx.Samples != 1 || ctx.Labeled != 1 {
		t.Errorf("the context added %+v, want one record, sample and scored label", ctx)
	}
}

// TestLearnShareUnlabeledContext: a context's unlabeled samples (Router's
// Warm) are learned, neither predicted for the driver nor scored; each
// counts one record and one sample in ctxCounts, in the merged step and
// in the first step (before any class).
func TestLearnShareUnlabeledContext(t *testing.T) {
	samples := clusteredSamples(80, 12, 2, 7)
	l := contextLearner()
	var ctx stages.Counters
	fc := contextOf(samples[20:30], []int64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}, false)
	fc.Labels[0], fc.Labeled[0] = "c0", true // one label among them
	share := routeFeatures(samples[:10], 0)
	for i := range share.Offsets {
		share.Offsets[i] = int64(2 * i)
	}
	st, err := learnShare(l, share, fc, &ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Predictions) != 10 || slices.ContainsFunc(st.Predictions, func(p stages.Prediction) bool { return p.ID == "" }) {
		t.Fatalf("first step: %d predictions, want the share's 10 and no context's", len(st.Predictions))
	}
	if ctx.Records != 10 || ctx.Samples != 10 || ctx.Labeled+ctx.Early != 1 {
		t.Fatalf("first step: the context added %+v, want 10 records and samples, one label", ctx)
	}
	// The merged step: l knows c0 now.
	fc = contextOf(samples[40:50], []int64{101, 103, 105, 107, 109, 111, 113, 115, 117, 119}, false)
	fc.Labels[3], fc.Labeled[3] = fmt.Sprintf("c%d", samples[43].Label), true
	share = routeFeatures(samples[30:40], 100)
	for i := range share.Offsets {
		share.Offsets[i] = int64(100 + 2*i)
	}
	before := ctx
	if st, err = learnShare(l, share, fc, &ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.Predictions) != 10 || slices.ContainsFunc(st.Predictions, func(p stages.Prediction) bool { return p.ID == "" }) {
		t.Fatalf("merged step: %d predictions, want the share's 10 and no context's", len(st.Predictions))
	}
	if d := subCounters(ctx, before); d.Records != 10 || d.Samples != 10 || d.Labeled != 1 {
		t.Errorf("merged step: the context added %+v, want 10 records and samples, one scored label", d)
	}
	if own := subCounters(l.Counters(), ctx); own.Records != 20 || own.Samples != 20 || own.Labeled+own.Early != 0 {
		t.Errorf("the shares' counters %+v, want 20 records and samples, no label", own)
	}
}

// TestRouterWarm: the first Warm unlabeled dense samples routed by anchor
// go, unlabeled and with their ids under ContextID, to every partition but
// their own as context; the samples after them do not; Warm < 1 sends
// none. A late label of such a sample goes to its own partition as a late
// label and to the others as a late label of its context id, without its
// row; a late label of a later sample goes with its row, as before.
func TestRouterWarm(t *testing.T) {
	const p, warm = 3, 7
	samples := clusteredSamples(300, 12, 3, 8)
	for _, w := range []int{warm, 0} {
		r := anchoredRouter(t, samples, p)
		r.Warm = w
		first := routeFeatures(samples[:20], 0)
		shares, ctx, _, err := r.Split(first)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for q, c := range ctx {
			if c == nil {
				continue
			}
			for i, off := range c.Offsets {
				got++
				if off >= warm || c.IDs[i] != ContextID(first.IDs[off]) || c.Labeled[i] {
					t.Errorf("Warm %d: partition %d's context holds offset %d (id %q, labeled %v)", w, q, off, c.IDs[i], c.Labeled[i])
				}
				if slices.Contains(shares[q].Offsets, off) {
					t.Errorf("Warm %d: partition %d got its own sample %d as context", w, q, off)
				}
			}
		}
		if want := w * (p - 1); got != want {
			t.Errorf("Warm %d: %d context samples, want %d", w, got, want)
		}
		if _, ctx, _, _ := r.Split(routeFeatures(samples[20:40], 20)); ctx != nil {
			t.Errorf("Warm %d: context after the first %d samples", w, w)
		}
		// Late labels of sample 2 (shared when w > 0) and sample 25 (not).
		home2, home25 := r.ids[first.IDs[2]], r.ids[fmt.Sprintf("s%d", samples[25].ID)]
		late := &stages.Features{LateLabels: []record.LateLabel{
			{Offset: 40, ID: first.IDs[2], Label: "a"},
			{Offset: 41, ID: fmt.Sprintf("s%d", samples[25].ID), Label: "b"}}}
		shares, ctx, _, err = r.Split(late)
		if err != nil {
			t.Fatal(err)
		}
		for q := range p {
			if n := len(shares[q].LateLabels); n != b2i(q == home2)+b2i(q == home25) {
				t.Errorf("Warm %d: partition %d's share holds %d late labels", w, q, n)
			}
			var c stages.Features
			if ctx[q] != nil {
				c = *ctx[q]
			}
			wantLate := w > 0 && q != home2
			if gotLate := len(c.LateLabels) == 1 && c.LateLabels[0] == (record.LateLabel{Offset: 40, ID: ContextID(first.IDs[2]), Label: "a"}); gotLate != wantLate || len(c.LateLabels) > 1 {
				t.Errorf("Warm %d: partition %d's context late labels %v", w, q, c.LateLabels)
			}
			want := []int64{}
			if w == 0 && q != home2 {
				want = append(want, 40)
			}
			if q != home25 {
				want = append(want, 41)
			}
			if !slices.Equal(append([]int64{}, c.Offsets...), want) || slices.ContainsFunc(c.IDs, func(id string) bool { return id != "" }) {
				t.Errorf("Warm %d: partition %d's context samples %v (ids %q), want the rows of %v", w, q, c.Offsets, c.IDs, want)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLearnShareContextLateLabel: a late label in the context (a common
// start's sample held under its ContextID) labels that sample's node on
// the owner: while the owner knows no class, in offset order with the
// share (the share's samples after it are predicted with it, none before
// it); once it knows one, after the step. A label whose sample has left
// the window is dropped. What the labels add to the counters is the
// context's, the share's counters hold none of it.
func TestLearnShareContextLateLabel(t *testing.T) {
	samples := clusteredSamples(60, 12, 2, 6)
	l := contextLearner()
	var ctx stages.Counters
	share := routeFeatures(samples[0:10], 0)
	fc := contextOf(samples[10:20], []int64{20, 21, 22, 23, 24, 25, 26, 27, 28, 29}, false)
	for i := range fc.IDs {
		fc.IDs[i] = ContextID(fmt.Sprintf("s%d", samples[10+i].ID))
	}
	if _, err := learnShare(l, share, fc, &ctx); err != nil {
		t.Fatal(err)
	}
	labelOf := func(s sample) string { return fmt.Sprintf("c%d", s.Label) }
	classOf := func(s sample) string {
		n, ok := l.Lookup(ContextID(fmt.Sprintf("s%d", s.ID)))
		if !ok || l.Class(n) < 0 {
			return ""
		}
		return l.Classes()[l.Class(n)]
	}
	// No class known: the label at 103 comes between the share's samples.
	share = routeFeatures(samples[30:36], 100)
	for i := range share.Offsets {
		share.Offsets[i] = int64(100 + 2*i) // 100, 102, …, 110
	}
	fc = &stages.Features{LateLabels: []record.LateLabel{{Offset: 103, ID: fc.IDs[2], Label: labelOf(samples[12])}}}
	st, err := learnShare(l, share, fc, &ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Predictions {
		if (p.Label != "") != (p.Offset > 103) {
			t.Errorf("offset %d predicted %q: want a prediction after the label at 103 only", p.Offset, p.Label)
		}
	}
	if got := classOf(samples[12]); got != labelOf(samples[12]) {
		t.Errorf("context sample 12's class %q, want %q", got, labelOf(samples[12]))
	}
	// A class known: applied after the step; a label of a sample the
	// window does not hold is dropped.
	share = routeFeatures(samples[40:44], 200)
	fc = &stages.Features{LateLabels: []record.LateLabel{
		{Offset: 201, ID: ContextID(fmt.Sprintf("s%d", samples[15].ID)), Label: labelOf(samples[15])},
		{Offset: 202, ID: ContextID("gone"), Label: "c0"}}}
	if st, err = learnShare(l, share, fc, &ctx); err != nil || len(st.Predictions) != 4 {
		t.Fatalf("%v, %d predictions of the share's 4", err, len(st.Predictions))
	}
	if got := classOf(samples[15]); got != labelOf(samples[15]) {
		t.Errorf("context sample 15's class %q, want %q", got, labelOf(samples[15]))
	}
	if ctx.LateLabels != 2 || ctx.Labeled+ctx.Early != 2 || ctx.Records != 10 || ctx.Samples != 10 || l.Pending() != 0 {
		t.Errorf("the context added %+v (pending %d), want 10 records and samples, 2 late labels, 2 scored", ctx, l.Pending())
	}
	if own := subCounters(l.Counters(), ctx); own.Records != 20 || own.Samples != 20 || own.LateLabels != 0 || own.Labeled+own.Early != 0 {
		t.Errorf("the shares' counters %+v, want 20 records and samples, no label", own)
	}
}

// TestCommonStartSharesSearchBases: three owners learning a stream whose
// common start covers it, with late labels of its samples, hold the same
// window bit for bit (the late labels are labels of their nodes, not
// second copies), so of the search basis fit they all take at 500 samples
// one is done and two are taken (model.SearchBases); the owners' own
// counters hold every late label once.
func TestCommonStartSharesSearchBases(t *testing.T) {
	const p, n, batch = 3, 700, 50
	samples := clusteredSamples(n, 40, 4, 11)
	r := anchoredRouter(t, samples, p)
	r.Warm = n
	sb := model.NewSearchBases(1 << 20)
	ls := make([]*stages.Learner, p)
	for q := range ls {
		ls[q] = &stages.Learner{Model: &model.Online{Rank: 3, Graph: graph.KNN{K: 5, Window: 1000}, Src: rand.NewPCG(1, 1), SearchBasis: 4, SearchBases: sb}}
	}
	ctx := make([]stages.Counters, p)
	var late int64
	for lo := 0; lo < n; lo += batch {
		f := routeFeatures(samples[lo:lo+batch], int64(lo)+late)
		if lo >= 100 { // a late label of every fourth sample one batch back
			for i := lo - batch; i < lo; i += 4 {
				f.LateLabels = append(f.LateLabels, record.LateLabel{Offset: int64(lo+batch) + late, ID: fmt.Sprintf("s%d", samples[i].ID), Label: fmt.Sprintf("c%d", samples[i].Label)})
				late++
			}
		}
		shares, cs, _, err := r.Split(f)
		if err != nil {
			t.Fatal(err)
		}
		for q := range p {
			var c *stages.Features
			if cs != nil {
				c = cs[q]
			}
			if _, err := learnShare(ls[q], shares[q], c, &ctx[q]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sb.Fits() != 1 || sb.Hits() != 2 {
		t.Errorf("search basis fits: %d done, %d taken; want 1 and 2", sb.Fits(), sb.Hits())
	}
	var own stages.Counters
	for q := range p {
		own = addCounters(own, subCounters(ls[q].Counters(), ctx[q]))
	}
	if own.Samples != n || own.LateLabels != late {
		t.Errorf("the owners' own counters %+v, want %d samples and %d late labels", own, n, late)
	}
}
