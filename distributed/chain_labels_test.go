package distributed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// labelsStep is an answer of every kind of content but NaN scores, so
// that reflect.DeepEqual compares it whole.
func labelsStep() (*stages.Step, stages.Counters, stages.Scores, stages.Confusion) {
	st, c, _ := answerStep()
	st.Predictions[1].Score = 0.5
	conf := stages.Confusion{Classes: []string{"7", "spam"}, N: [][]int64{{3, 1, 0}, {0, 2, 1 << 40}}}
	return st, c, stages.Scores{BalancedAccuracy: 0.5, MacroF1: 0.25}, conf
}

// TestAnswerCodecLabels: an answer with label counts is written in
// version 4 and decodes to what was encoded, the counts included; without
// them it is written in version 3, as before version 4, and a version-3
// answer (one of version 4 less its counts) decodes with the counts zero
// and everything else equal; every truncation of a version-4 answer, a
// byte after it, and a count over 2³¹ − 1 are corrupt.
func TestAnswerCodecLabels(t *testing.T) {
	st, c, sc, conf := labelsStep()
	lc := labelCounts{Waited: 7, Waiting: 300, Forgotten: 1 << 30}
	raw, err := encodeStepLabels(st, c, sc, conf, 8, lc)
	if err != nil {
		t.Fatal(err)
	}
	if [3]byte(raw[:3]) != answerMagicV4 {
		t.Fatalf("an answer with label counts begins %v, want %v", raw[:3], answerMagicV4)
	}
	want := &wireStep{Rejects: rejectsToWire(st.Rejects), Duplicates: st.Duplicates, Counters: c, Scored: sc, Pending: 8, Confusion: conf,
		LabelsWaited: 7, LabelsWaiting: 300, LabelsForgotten: 1 << 30}
	for _, p := range st.Predictions {
		want.IDs, want.Offsets = append(want.IDs, p.ID), append(want.Offsets, p.Offset)
		want.Labels, want.Scores = append(want.Labels, p.Label), append(want.Scores, p.Score)
	}
	got, err := decodeStep(raw)
	if err == nil {
		got.Confusion = denseConfusion(got.Confusion)
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("version 4: decoded %+v (%v), want %+v", got, err, want)
	}

	// Version 3: what encodeStep writes, and version 4 less its counts.
	v3, err := encodeStep(st, c, sc, conf, 8)
	if err != nil {
		t.Fatal(err)
	}
	tail := len(raw) - len(v3)
	if [3]byte(v3[:3]) != answerMagic || tail != 1+2+5+1 || !slices.Equal(v3[3:], raw[3:len(raw)-tail]) {
		t.Fatalf("without label counts: %d bytes beginning %v, want version 3's, version 4's less its %d bytes of counts", len(v3), v3[:3], tail)
	}
	cut := append(answerMagic[:], raw[3:len(raw)-tail]...)
	old := *want
	old.LabelsWaited, old.LabelsWaiting, old.LabelsForgotten = 0, 0, 0
	for name, b := range map[string][]byte{"encodeStep": v3, "version 4 less its counts": cut} {
		if got, err := decodeStep(b); err != nil || !reflect.DeepEqual(withDense(got), &old) {
			t.Errorf("version 3 (%s): decoded %+v (%v), want %+v", name, got, err, old)
		}
	}
	// Zero counts in version 4 decode too.
	zero := append(append(answerMagicV4[:], v3[3:]...), 0, 0, 0, 0)
	if got, err := decodeStep(zero); err != nil || !reflect.DeepEqual(withDense(got), &old) {
		t.Errorf("version 4 with zero counts: %+v (%v)", got, err)
	}

	for n := len(answerMagicV4); n < len(raw); n++ {
		if _, err := decodeStep(raw[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("version 4 truncated to %d of %d bytes: %v, want a corrupt step", n, len(raw), err)
		}
	}
	if _, err := decodeStep(append(slices.Clip(raw), 0)); !errors.Is(err, errCorrupt) {
		t.Errorf("a byte after version 4's end: %v", err)
	}
	huge := append(append(answerMagicV4[:], v3[3:]...), 1, 0x80, 0x80, 0x80, 0x80, 0x08, 0, 0) // waiting 2³¹
	if _, err := decodeStep(huge); !errors.Is(err, errCorrupt) {
		t.Errorf("a count of 2³¹: %v, want a corrupt step", err)
	}
}

// TestMergeSumsLabelCounts: the driver's answer of a batch that two
// partitions answered sums their label counts.
func TestMergeSumsLabelCounts(t *testing.T) {
	d := &ChainDriver{last: map[int]*wireStep{}, late: map[int64]int64{}}
	out := d.merge(0, map[int]*wireStep{
		0: {LabelsWaited: 3, LabelsWaiting: 2, LabelsForgotten: 5, Pending: 10},
		1: {LabelsWaited: 4, LabelsWaiting: 1, LabelsForgotten: 7, Pending: 20},
	})
	if out.LabelsWaited != 7 || out.LabelsWaiting != 3 || out.LabelsForgotten != 12 || out.Pending != 30 {
		t.Errorf("merged %+v, want 7 waited, 3 waiting, 12 forgotten, 30 pending", out)
	}
}

// TestAnswerReplacedLabels: the waiting labels a later one of the same id
// replaced in a batch (stages.Step.Waited: z at 1 by z at 4, z at 4 by z
// at 7) travel in version 4, alone too, and decode as encoded; every
// truncation is corrupt. The driver lists each once, by offset, however
// many partitions report it.
func TestAnswerReplacedLabels(t *testing.T) {
	st, c, sc, conf := labelsStep()
	st.Waited = []record.LateLabel{{Offset: 1, ID: "z", Label: "a"}, {Offset: 4, ID: "z", Label: "b"}, {Offset: 5, ID: "y", Label: "a"}, {Offset: 7, ID: "z", Label: "a"}}
	want := []ReplacedLabel{{Offset: 1, By: 4, ID: "z"}, {Offset: 4, By: 7, ID: "z"}}
	raw, err := encodeStepLabels(st, c, sc, conf, 8, labelCounts{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStep(raw)
	if err != nil || [3]byte(raw[:3]) != answerMagicV4 || !reflect.DeepEqual(got.LabelsReplaced, want) {
		t.Fatalf("replaced labels: form %v, decoded %+v (%v), want version 4 and %+v", raw[:3], got.LabelsReplaced, err, want)
	}
	for n := len(answerMagicV4); n < len(raw); n++ {
		if _, err := decodeStep(raw[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: %v, want a corrupt step", n, len(raw), err)
		}
	}
	d := &ChainDriver{last: map[int]*wireStep{}, late: map[int64]int64{}}
	out := d.merge(0, map[int]*wireStep{0: {LabelsReplaced: want[1:]}, 1: {LabelsReplaced: want}, 2: {LabelsReplaced: want[:1]}})
	if !reflect.DeepEqual(out.LabelsReplaced, want) {
		t.Errorf("merged %+v, want %+v", out.LabelsReplaced, want)
	}
}

// labelsLearner is an owner's Learner of a small window (4 samples) and
// horizon (6 waiting labels, 6 arrival predictions awaited) and at most 2
// classes, after 12 unlabeled samples (ids s1 to s12, offsets 0 to 11):
// its window holds s9 to s12, and it awaits the labels of s7 to s12.
func labelsLearner(t *testing.T) *stages.Learner {
	t.Helper()
	l := &stages.Learner{Model: &model.Online{Rank: 2, Graph: graph.KNN{K: 2, Window: 4}, Src: rand.NewPCG(3, 3)}, Horizon: 6,
		Featurize: stages.Featurize{MaxClasses: 2}}
	samples := clusteredSamples(12, 6, 2, 9)
	for k := range 3 {
		if _, err := l.LearnFeatures(routeFeatures(samples[4*k:4*k+4], int64(4*k))); err != nil {
			t.Fatal(err)
		}
	}
	for id, held := range map[string]bool{"s9": true, "s12": true, "s7": false, "s8": false} {
		if _, ok := l.Lookup(id); ok != held || l.Waits(id) {
			t.Fatalf("%s: held %v, a label would wait %v; want held %v and awaited", id, ok, l.Waits(id), held)
		}
	}
	return l
}

// oneByOneCounts applies the labels late to l one by one (Learner.Label),
// deciding each label's fate from outside the batch, and returns the
// counts: the reference learnCounted's counts from the Step must agree
// with. A label over --max-classes that would not wait is refused; one
// that waits for its record counts (Waited); Waiting is the ids of those,
// at most l.Pending() after; Forgotten the growth of l.ForgottenLabels.
func oneByOneCounts(t *testing.T, l *stages.Learner, late []record.LateLabel) labelCounts {
	t.Helper()
	var lc labelCounts
	before := l.ForgottenLabels()
	ids := map[string]bool{}
	for _, ll := range late {
		waits := l.Waits(ll.ID)
		if !waits && !l.AdmitsLabel(ll.Label) {
			continue
		}
		if waits {
			lc.Waited++
			ids[ll.ID] = true
		}
		if err := l.Label(ll.ID, ll.Label); err != nil {
			t.Fatal(err)
		}
	}
	lc.Waiting = min(len(ids), l.Pending())
	lc.Forgotten = l.ForgottenLabels() - before
	return lc
}

// TestLearnCountedLabels: an owner that learns shares of late labels only
// (serve --nats's POST /v1/labels) counts them (learnCounted) as the same
// labels applied one by one to a Learner in the same state count
// (oneByOneCounts): labels for ids held (applied), awaited (the first applied, the
// next waiting), unknown (waiting; a second of the same id too), refused
// over --max-classes, beyond the horizon (the oldest forgotten: of
// earlier shares first, then of the share itself), and again for an id
// whose label waits; the learners' waiting labels agree after each share.
func TestLearnCountedLabels(t *testing.T) {
	owner, ref := labelsLearner(t), labelsLearner(t)
	off := int64(100)
	labels := func(pairs ...string) []record.LateLabel {
		var out []record.LateLabel
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, record.LateLabel{Offset: off, ID: pairs[i], Label: pairs[i+1]})
			off++
		}
		return out
	}
	unknown := func(from, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("u%d", from+i), "a")
		}
		return out
	}
	for k, c := range []struct {
		late []record.LateLabel
		want labelCounts
	}{
		{labels(unknown(1, 3)...), labelCounts{Waited: 3, Waiting: 3}},
		// s9 held (class a), s7 awaited (class b) then waiting, s10 held
		// and class c refused, u4 twice, then u5 to u7: 8 waiting of 6,
		// u1 and u2 forgotten.
		{labels(append([]string{"s9", "a", "s7", "b", "s7", "b", "s10", "c", "u4", "a", "u4", "b"}, unknown(5, 3)...)...), labelCounts{Waited: 6, Waiting: 5, Forgotten: 2}},
		// 8 more: the 6 waiting forgotten, then 2 of the share's own.
		{labels(unknown(10, 8)...), labelCounts{Waited: 8, Waiting: 6, Forgotten: 8}},
		// A waiting id labeled again, a forgotten one, and s8 awaited.
		{labels("u17", "b", "u10", "a", "s8", "a"), labelCounts{Waited: 2, Waiting: 2, Forgotten: 1}},
	} {
		f := &stages.Features{LateLabels: c.late}
		var ctx stages.Counters
		st, got, err := learnCounted(owner, f, nil, &ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := oneByOneCounts(t, ref, c.late)
		if got != want || got != c.want {
			t.Errorf("share %d: owner counted %+v, one by one %+v, want %+v", k, got, want, c.want)
		}
		if owner.Pending() != ref.Pending() || owner.ForgottenLabels() != ref.ForgottenLabels() {
			t.Errorf("share %d: owner has %d waiting, %d forgotten; one by one %d, %d", k, owner.Pending(), owner.ForgottenLabels(), ref.Pending(), ref.ForgottenLabels())
		}
		if k == 1 && (len(st.Rejects) != 1 || st.Rejects[0].ID != "s10") {
			t.Errorf("share 1: rejects %+v, want s10's label c (--max-classes 2)", st.Rejects)
		}
	}
}

// TestLearnCountedMixedShare: in a share with samples, a label of a
// sample of the share reaches it, after the sample or before it (the
// share's samples join the window before its labels are applied), and a
// label for an id the share lacks waits. Three labels of an earlier share
// wait throughout: Waiting counts the share's own.
func TestLearnCountedMixedShare(t *testing.T) {
	l := labelsLearner(t)
	var ctx stages.Counters
	early := &stages.Features{LateLabels: []record.LateLabel{{Offset: 100, ID: "u1", Label: "a"}, {Offset: 101, ID: "u2", Label: "a"}, {Offset: 102, ID: "u3", Label: "a"}}}
	if _, got, err := learnCounted(l, early, nil, &ctx); err != nil || got != (labelCounts{Waited: 3, Waiting: 3}) {
		t.Fatalf("3 labels for ids not seen: %+v, %v", got, err)
	}
	f := routeFeatures(clusteredSamples(14, 6, 2, 9)[12:], 200) // s13, s14
	f.Offsets = []int64{200, 203}
	f.LateLabels = []record.LateLabel{{Offset: 201, ID: "s13", Label: "a"}, {Offset: 202, ID: "s14", Label: "b"}, {Offset: 204, ID: "u99", Label: "a"}}
	_, got, err := learnCounted(l, f, nil, &ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (labelCounts{Waited: 1, Waiting: 1}); got != want || l.Pending() != 4 {
		t.Errorf("counted %+v with %d labels waiting, want %+v and 4 waiting (u1 to u3, u99)", got, l.Pending(), want)
	}
}

// withDense returns w with its confusion in the dense form (denseConfusion).
func withDense(w *wireStep) *wireStep {
	w.Confusion = denseConfusion(w.Confusion)
	return w
}
