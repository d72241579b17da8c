package distributed

import (
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// routeFeatures returns the dense features of samples, ids "s<i>" (the
// sample's ID), unlabeled, offsets from off.
func routeFeatures(samples []sample, off int64) *stages.Features {
	x := rowsOf(samples)
	f := &stages.Features{X: model.DenseRows(x)}
	for i, s := range samples {
		f.IDs = append(f.IDs, fmt.Sprintf("s%d", s.ID))
		f.Labels = append(f.Labels, "")
		f.Labeled = append(f.Labeled, false)
		f.Offsets = append(f.Offsets, off+int64(i))
	}
	return f
}

// anchoredRouter returns a Router for p partitions with anchors chosen
// from the first 50·p samples.
func anchoredRouter(t *testing.T, samples []sample, p int) *Router {
	t.Helper()
	a, err := ChooseAnchors(rowsOf(samples[:50*p]), p)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRouter(p)
	if err := r.SetAnchors(a); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRouterDeterministic: the anchors depend on the rows only, survive
// their encoding bit for bit, and two Routers with the same anchors send
// every sample of a stream to the same partition.
func TestRouterDeterministic(t *testing.T) {
	const p = 3
	samples := clusteredSamples(600, 12, 6, 3)
	a1, err := ChooseAnchors(rowsOf(samples[:150]), p)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := ChooseAnchors(rowsOf(samples[:150]), p)
	if !mat.Equal(a1, a2) {
		t.Fatal("ChooseAnchors differs between two calls on the same rows")
	}
	dec, err := decodeAnchors(encodeAnchors(a1))
	if err != nil || !mat.Equal(dec, a1) {
		t.Fatalf("anchors after encoding: %v", err)
	}
	r1, r2 := NewRouter(p), NewRouter(p)
	r1.SetAnchors(a1)
	r2.SetAnchors(dec)
	for k := 0; k < len(samples); k += 50 {
		f := routeFeatures(samples[k:k+50], int64(k))
		s1, _, _, err1 := r1.Split(f)
		s2, _, _, err2 := r2.Split(f)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for q := range p {
			if !slices.Equal(s1[q].IDs, s2[q].IDs) {
				t.Fatalf("batch at %d, partition %d: %v and %v", k, q, s1[q].IDs, s2[q].IDs)
			}
		}
	}
	if _, err := decodeAnchors([]byte{1, 0, 0, 0, 2, 0, 0, 0, 9}); err == nil {
		t.Error("truncated anchors decoded")
	}
}

// TestRouterLocality: on clustered samples (as many clusters as
// partitions) the anchors keep each cluster on one partition, where the
// id hash spreads every cluster over all of them; every share keeps its
// rows, in input order.
func TestRouterLocality(t *testing.T) {
	const p = 4
	samples := clusteredSamples(800, 12, p, 5)
	r := anchoredRouter(t, samples, p)
	f := routeFeatures(samples, 0)
	shares, _, _, err := r.Split(f)
	if err != nil {
		t.Fatal(err)
	}
	purity := func(shares []*stages.Features) float64 {
		same := 0
		for _, s := range shares {
			count := map[int]int{}
			for _, id := range s.IDs {
				var n int
				fmt.Sscanf(id, "s%d", &n)
				count[samples[n-1].Label]++
			}
			same += max(0, slices.Max(append(slices.Collect(mapValues(count)), 0)))
		}
		return float64(same) / float64(len(samples))
	}
	if got := purity(shares); got < 0.99 {
		t.Errorf("anchors: %.3f of the samples on their cluster's main partition, want ≥ 0.99", got)
	}
	hashed, err := SplitFeatures(f, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := purity(hashed); got > 0.5 {
		t.Errorf("id hash: purity %.3f; the test's clusters are too easy", got)
	}
	x := model.Rows(f.X).(*mat.Dense)
	for _, s := range shares {
		if !slices.IsSorted(s.Offsets) {
			t.Fatal("a share out of input order")
		}
		sx := model.Rows(s.X).(*mat.Dense)
		for i, off := range s.Offsets {
			if !slices.Equal(sx.RawRowView(i), x.RawRowView(int(off))) {
				t.Fatalf("share row %d is not sample %d's", i, off)
			}
		}
	}
}

func mapValues(m map[int]int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestRouterLabelsAndDuplicates: a duplicate goes where its id went; a
// late label goes to its sample's partition only, and to every partition
// (counted as broadcast) when the id is unknown or forgotten.
func TestRouterLabelsAndDuplicates(t *testing.T) {
	const p = 3
	samples := clusteredSamples(300, 12, 3, 8)
	r := anchoredRouter(t, samples, p)
	r.Remember = 100
	first, _, _, err := r.Split(routeFeatures(samples[:50], 0))
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]int{}
	for q, s := range first {
		for _, id := range s.IDs {
			where[id] = q
		}
	}
	// s1's row is sample 2's (another cluster), with s1's id: a duplicate.
	dup := routeFeatures(samples[1:2], 50)
	dup.IDs[0] = "s1"
	f := routeFeatures(samples[50:60], 51)
	f.X = model.DenseRows(mat.DenseCopyOf(mat.NewDense(11, 12, append(append([]float64(nil), rowsOf(samples[1:2]).RawMatrix().Data...), rowsOf(samples[50:60]).RawMatrix().Data...))))
	f.IDs = append(dup.IDs, f.IDs...)
	f.Labels, f.Labeled = append(dup.Labels, f.Labels...), append(dup.Labeled, f.Labeled...)
	f.Offsets = append(dup.Offsets, f.Offsets...)
	f.LateLabels = []record.LateLabel{{Offset: 70, ID: "s7", Label: "a"}, {Offset: 71, ID: "never", Label: "b"}}
	shares, _, broadcast, err := r.Split(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(shares[where["s1"]].IDs, "s1") {
		t.Errorf("the duplicate s1 left partition %d", where["s1"])
	}
	if broadcast != 1 {
		t.Errorf("broadcast %d late labels, want 1 (the unknown id)", broadcast)
	}
	for q, s := range shares {
		has7 := slices.ContainsFunc(s.LateLabels, func(l record.LateLabel) bool { return l.ID == "s7" })
		if has7 != (q == where["s7"]) {
			t.Errorf("partition %d has s7's label: %v; s7 is on %d", q, has7, where["s7"])
		}
		if !slices.ContainsFunc(s.LateLabels, func(l record.LateLabel) bool { return l.ID == "never" }) {
			t.Errorf("partition %d lacks the label of the unknown id", q)
		}
	}
	// 300 ids routed with Remember 100: s1 is forgotten, its label goes everywhere.
	for k := 60; k < 300; k += 60 {
		r.Split(routeFeatures(samples[k:k+60], int64(100+k)))
	}
	late := &stages.Features{LateLabels: []record.LateLabel{{Offset: 999, ID: "s1", Label: "a"}}}
	if _, _, broadcast, _ := r.Split(late); broadcast != 1 || len(r.ids) != 100 {
		t.Errorf("forgotten id: broadcast %d, ids kept %d; want 1, 100", broadcast, len(r.ids))
	}
}

// TestRouterCapacity: when every sample is nearest to one anchor, the
// capacity rule keeps each partition's share below 1/P + Slack (past the
// first capacityWarm samples); with the rule off, one partition takes all.
func TestRouterCapacity(t *testing.T) {
	const p = 3
	samples := clusteredSamples(3000, 12, 3, 4)
	var one []sample
	for _, s := range samples {
		if s.Label == 0 {
			one = append(one, s)
		}
	}
	for _, slack := range []float64{0, -1} {
		r := anchoredRouter(t, samples, p)
		r.Slack = slack
		if _, _, _, err := r.Split(routeFeatures(one, 0)); err != nil {
			t.Fatal(err)
		}
		sh := r.Shares()
		top := float64(slices.Max(sh)) / float64(len(one))
		if slack == 0 && top > 1.0/p+defaultSlack+0.01 {
			t.Errorf("slack %v: shares %v, the largest %.3f of the samples", slack, sh, top)
		}
		if slack < 0 && top != 1 {
			t.Errorf("no capacity rule: shares %v, want one partition with all", sh)
		}
	}
}

// TestRouterWithoutAnchors routes like SplitFeatures (the id hash) and
// sends late labels by hash while it has seen no dense sample.
func TestRouterWithoutAnchors(t *testing.T) {
	samples := clusteredSamples(90, 6, 3, 2)
	f := routeFeatures(samples, 0)
	f.LateLabels = []record.LateLabel{{Offset: 90, ID: "x", Label: "a"}}
	got, _, broadcast, err := NewRouter(3).Split(f)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := SplitFeatures(f, 3)
	for q := range got {
		if !slices.Equal(got[q].IDs, want[q].IDs) || len(got[q].LateLabels) != len(want[q].LateLabels) {
			t.Fatalf("partition %d: %v, SplitFeatures %v", q, got[q].IDs, want[q].IDs)
		}
	}
	if broadcast != 0 {
		t.Errorf("broadcast %d without locality", broadcast)
	}
	if one, _, _, _ := NewRouter(1).Split(f); len(one) != 1 || one[0] != f {
		t.Error("one partition: not f itself")
	}
}

// TestRouterContext: a sample that comes with its label, and the kept row
// of a sample whose late label comes, go to every other partition as
// labeled samples without an id (their rows exact), never to their own;
// KeepRows < 0 sends no context.
func TestRouterContext(t *testing.T) {
	const p = 3
	samples := clusteredSamples(300, 12, 3, 8)
	for _, keep := range []int{0, -1} {
		r := anchoredRouter(t, samples, p)
		r.KeepRows = keep
		f := routeFeatures(samples[:30], 0)
		f.Labels[4], f.Labeled[4] = "c", true
		shares, ctx, _, err := r.Split(f)
		if err != nil {
			t.Fatal(err)
		}
		home := func(id string) int {
			for q, s := range shares {
				if slices.Contains(s.IDs, id) {
					return q
				}
			}
			return -1
		}
		late := &stages.Features{LateLabels: []record.LateLabel{{Offset: 40, ID: "s8", Label: "d"}}}
		_, lctx, _, err := r.Split(late)
		if err != nil {
			t.Fatal(err)
		}
		if keep < 0 {
			if ctx != nil || lctx != nil {
				t.Error("KeepRows < 0: a context was sent")
			}
			continue
		}
		for _, c := range []struct {
			ctx  []*stages.Features
			id   string
			row  []float64
			lab  string
			off  int64
			home int
		}{
			{ctx, "s5", samples[4].Dense, "c", 4, home("s5")},
			{lctx, "s8", samples[7].Dense, "d", 40, home("s8")},
		} {
			for q, cf := range c.ctx {
				if q == c.home {
					if cf != nil {
						t.Errorf("%s: its own partition %d got it as context", c.id, q)
					}
					continue
				}
				if cf == nil || len(cf.IDs) != 1 || cf.IDs[0] != "" || !cf.Labeled[0] || cf.Labels[0] != c.lab || cf.Offsets[0] != c.off ||
					!slices.Equal(model.Rows(cf.X).(*mat.Dense).RawRowView(0), c.row) {
					t.Errorf("%s: partition %d's context %+v", c.id, q, cf)
				}
			}
		}
	}
	if _, ctx, _, _ := NewRouter(1).Split(routeFeatures(samples[:3], 0)); ctx != nil {
		t.Error("one partition: a context")
	}
}

// TestRouterContextTextAndSparse: without anchors (text and sparse rows go
// by id), a text sample that comes with its label, and one whose late
// label comes, go to every other partition as labeled documents without
// an id, the documents exact; a sparse sample's nonzeros likewise, of the
// batch's dimension. The own partition never gets its sample back.
func TestRouterContextTextAndSparse(t *testing.T) {
	const p = 3
	docs := []string{"alpha beta", "gamma", "delta epsilon", "zeta", "eta theta", "iota"}
	text := &stages.Features{Text: docs}
	for i := range docs {
		text.IDs = append(text.IDs, fmt.Sprintf("d%d", i))
		text.Labels, text.Labeled = append(text.Labels, ""), append(text.Labeled, false)
		text.Offsets = append(text.Offsets, int64(i))
	}
	text.Labels[1], text.Labeled[1] = "spam", true
	sp := sparse.Zeros(0, 50)
	for i := range docs {
		sp.AppendRow([]int{i, 10 + i}, []float64{1, float64(i + 1)})
	}
	sparseF := &stages.Features{X: model.SparseRows(sp), Dim: 50, IDs: text.IDs, Labels: text.Labels, Labeled: text.Labeled, Offsets: text.Offsets}
	for _, f := range []*stages.Features{text, sparseF} {
		r := NewRouter(p)
		shares, ctx, _, err := r.Split(f)
		if err != nil {
			t.Fatal(err)
		}
		late := &stages.Features{LateLabels: []record.LateLabel{{Offset: 9, ID: "d4", Label: "ham"}}}
		_, lctx, _, err := r.Split(late)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ctx []*stages.Features
			i   int
			lab string
			off int64
		}{{ctx, 1, "spam", 1}, {lctx, 4, "ham", 9}} {
			home := PartitionOf(f.IDs[c.i], f.Offsets[c.i], p)
			if !slices.Contains(shares[home].IDs, f.IDs[c.i]) {
				t.Fatalf("%s: not in its partition %d", f.IDs[c.i], home)
			}
			for q, cf := range c.ctx {
				if q == home {
					if cf != nil {
						t.Errorf("%s: its own partition %d got it as context", f.IDs[c.i], q)
					}
					continue
				}
				if cf == nil || len(cf.IDs) != 1 || cf.IDs[0] != "" || !cf.Labeled[0] || cf.Labels[0] != c.lab || cf.Offsets[0] != c.off {
					t.Fatalf("%s: partition %d's context %+v", f.IDs[c.i], q, cf)
				}
				if f.Text != nil {
					if len(cf.Text) != 1 || cf.Text[0] != docs[c.i] || cf.X != nil {
						t.Errorf("%s: partition %d's context documents %q", f.IDs[c.i], q, cf.Text)
					}
					continue
				}
				got, ok := model.Rows(cf.X).(*sparse.CSR)
				if !ok || cf.Dim != 50 {
					t.Fatalf("%s: partition %d's context is not sparse of 50 columns: %T, %d", f.IDs[c.i], q, model.Rows(cf.X), cf.Dim)
				}
				gi, gv := got.Row(0)
				wi, wv := sp.Row(c.i)
				if !slices.Equal(gi, wi) || !slices.Equal(gv, wv) {
					t.Errorf("%s: partition %d's context row %v %v, want %v %v", f.IDs[c.i], q, gi, gv, wi, wv)
				}
			}
		}
	}
}

// TestRouterKeepBytes: with wide rows the rows kept for the late labels'
// context stay within KeepBytes, counted from the rows themselves (values,
// ids and keptRowOverhead each), the newest kept and the oldest forgotten:
// a late label of a kept sample sends its row as context, one of a
// forgotten sample none. KeepRows still bounds the count.
func TestRouterKeepBytes(t *testing.T) {
	const p, d, bound = 2, 5000, 1 << 20
	samples := clusteredSamples(400, d, 2, 3)
	r := anchoredRouter(t, samples, p)
	r.KeepBytes = bound
	held := func() (n int, bytes int64) {
		for id, rw := range r.rows {
			n++
			bytes += int64(keptRowOverhead + len(id) + 8*len(rw.d))
		}
		return n, bytes
	}
	for k := range 10 {
		if _, _, _, err := r.Split(routeFeatures(samples[k*40:(k+1)*40], int64(k*40))); err != nil {
			t.Fatal(err)
		}
		if n, b := held(); b > bound || n == 0 {
			t.Fatalf("after %d samples: %d rows kept in %d bytes, bound %d", (k+1)*40, n, b, bound)
		}
	}
	n, b := held()
	per := int64(keptRowOverhead + 4 + 8*d)
	if int64(n) != bound/per || b != r.rowBytes {
		t.Errorf("%d rows kept in %d bytes (the router counts %d); want %d rows of %d bytes", n, b, r.rowBytes, bound/per, per)
	}
	for _, c := range []struct {
		id   string
		kept bool
	}{{"s400", true}, {fmt.Sprintf("s%d", 400-n+1), true}, {fmt.Sprintf("s%d", 400-n), false}, {"s1", false}} {
		_, ctx, _, err := r.Split(&stages.Features{LateLabels: []record.LateLabel{{Offset: 500, ID: c.id, Label: "a"}}})
		if err != nil {
			t.Fatal(err)
		}
		if (ctx != nil) != c.kept {
			t.Errorf("late label of %s: context %v, want %v", c.id, ctx != nil, c.kept)
		}
	}
	// KeepRows bounds the count under a large KeepBytes; a row larger than
	// KeepBytes is not kept.
	r = anchoredRouter(t, samples, p)
	r.KeepRows, r.KeepBytes = 7, 1<<30
	if _, _, _, err := r.Split(routeFeatures(samples[:40], 0)); err != nil {
		t.Fatal(err)
	}
	if n, _ := held(); n != 7 {
		t.Errorf("KeepRows 7: %d rows kept", n)
	}
	r = anchoredRouter(t, samples, p)
	r.KeepBytes = 8 * d
	if _, _, _, err := r.Split(routeFeatures(samples[:40], 0)); err != nil {
		t.Fatal(err)
	}
	if n, b := held(); n != 0 || r.rowBytes != 0 {
		t.Errorf("rows larger than KeepBytes: %d kept in %d bytes", n, b)
	}
}
