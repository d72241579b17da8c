//go:build nats

package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// testLearner is the tests' NewLearner: settings are {"rank", "seed"}.
func testLearner(settings []byte) (*stages.Learner, error) {
	var s struct{ Rank, Seed uint64 }
	if err := json.Unmarshal(settings, &s); err != nil {
		return nil, err
	}
	return &stages.Learner{Model: &model.Online{Rank: int(s.Rank), Graph: graph.KNN{K: 5, Window: 200}, Src: rand.NewPCG(s.Seed, s.Seed)}}, nil
}

// chainBatches returns nb batches of b dense records each (ids "0", "1",
// …), every third labeled with its cluster, and every batch after the
// first with a late label for a sample of the batch before.
func chainBatches(nb, b int) []*record.Batch {
	samples := clusteredSamples(nb*b, 12, 4, 7)
	var out []*record.Batch
	for k := range nb {
		x := mat.NewDense(b, 12, nil)
		bt := &record.Batch{Form: record.FormDense, Dense: x}
		off := int64(k * (b + 1))
		for i := range b {
			s := samples[k*b+i]
			x.SetRow(i, s.Dense)
			bt.IDs = append(bt.IDs, fmt.Sprint(k*b+i))
			bt.Labeled = append(bt.Labeled, i%3 == 0)
			lab := ""
			if i%3 == 0 {
				lab = fmt.Sprint(s.Label)
			}
			bt.Labels = append(bt.Labels, lab)
			bt.Offsets = append(bt.Offsets, off+int64(i))
		}
		if k > 0 {
			prev := samples[(k-1)*b+1]
			bt.LateLabels = []record.LateLabel{{Offset: off + int64(b), ID: fmt.Sprint((k-1)*b + 1), Label: fmt.Sprint(prev.Label)}}
		}
		out = append(out, bt)
	}
	return out
}

func runChainWorkers(t *testing.T, url string, cfg Config, n int) ([]*Worker, []context.CancelFunc, func() error) {
	t.Helper()
	return runWorkersOf(t, url, n, func(nc *nats.Conn) (*Worker, error) {
		return NewChainWorker(context.Background(), nc, cfg, testLearner)
	})
}

// TestChainOwnerKilled drives a labeled stream through the chain on two
// instances and stops the one that owns the partition mid-stream: the
// other takes the partition over, replays the batches, and the driver
// receives every batch's answer exactly once, in order, with the
// predictions, scores and counters of a single in-process Learner on the
// same batches, bit for bit.
func TestChainOwnerKilled(t *testing.T) {
	const nb, b = 40, 10
	nc, url := startServer(t)
	cfg := Config{Namespace: "chain", Partitions: 1, Rank: 3, PinnedTTL: 500 * time.Millisecond}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	batches := chainBatches(nb, b)

	want, wantCounters := referenceSteps(t, settings, batches)

	ws, cancels, stop := runChainWorkers(t, url, cfg, 2)
	ctx, d := startDriver(t, nc, cfg, settings)
	killed := -1
	for k, bt := range batches {
		got := sendAndCheck(t, ctx, d, k, bt, want[k])
		if k == nb/2 {
			for i, w := range ws {
				if slices.Contains(w.Stats().Held, "owner-0") {
					killed = i
				}
			}
			if killed < 0 {
				t.Fatal("no instance owns the partition")
			}
			cancels[killed]()
		}
		if k == nb-1 && got.Counters != wantCounters {
			t.Errorf("counters %+v, the in-process learner's %+v", got.Counters, wantCounters)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if other := ws[1-killed].Stats(); other.Takeovers == 0 || other.Rounds < nb/2 {
		t.Errorf("the surviving instance took %d roles over and learned %d batches", other.Takeovers, other.Rounds)
	}
	if c := wantCounters; c.Labeled == 0 || c.LateLabels != nb-1 {
		t.Fatalf("the stream scores nothing or lacks its late labels: %+v", c)
	}
}

// checkStep fails t unless got (from the owners) has want's predictions
// (id, offset, label, score: bit for bit) and duplicates.
// sendAndCheck sends batch k, bt, through d and checks its answer against
// want, the single machine's step, and returns the answer.
func sendAndCheck(t *testing.T, ctx context.Context, d *ChainDriver, k int, bt *record.Batch, want *stages.Step) *ChainStep {
	t.Helper()
	if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
		t.Fatalf("batch %d: %v", k, err)
	}
	got, err := d.Receive(ctx)
	if err != nil {
		t.Fatalf("batch %d: %v", k, err)
	}
	if got.Batch != int64(k) {
		t.Fatalf("answer of batch %d for batch %d", got.Batch, k)
	}
	checkStep(t, k, got.Step, want)
	return got
}

func checkStep(t *testing.T, k int, got, want *stages.Step) {
	t.Helper()
	if len(got.Predictions) != len(want.Predictions) || !slices.Equal(got.Duplicates, want.Duplicates) || len(got.Rejects) != len(want.Rejects) {
		t.Fatalf("batch %d: %d predictions, duplicates %v, %d rejects; want %d, %v, %d", k,
			len(got.Predictions), got.Duplicates, len(got.Rejects), len(want.Predictions), want.Duplicates, len(want.Rejects))
	}
	for i, p := range got.Predictions {
		w := want.Predictions[i]
		if p.ID != w.ID || p.Offset != w.Offset || p.Label != w.Label || math.Float64bits(p.Score) != math.Float64bits(w.Score) {
			t.Fatalf("batch %d prediction %d: %s@%d %q %v, want %s@%d %q %v", k, i, p.ID, p.Offset, p.Label, p.Score, w.ID, w.Offset, w.Label, w.Score)
		}
	}
}

// TestChainDriverRefusesOtherSettings: a namespace holds the learner
// settings of its first driver, and another driver's are refused with a
// message naming the namespace.
func TestChainDriverRefusesOtherSettings(t *testing.T) {
	nc, _ := startServer(t)
	ctx := context.Background()
	cfg := Config{Namespace: "held", Partitions: 1, Rank: 3}
	d, err := NewChainDriver(ctx, nc, cfg, []byte(`{"Rank":3,"Seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if d, err = NewChainDriver(ctx, nc, cfg, []byte(`{"Rank":3,"Seed":1}`)); err != nil {
		t.Fatalf("the same settings again: %v", err)
	}
	d.Close()
	_, err = NewChainDriver(ctx, nc, cfg, []byte(`{"Rank":4,"Seed":1}`))
	if err == nil || !strings.Contains(err.Error(), `namespace "held" holds other learner settings`) {
		t.Fatalf("other settings: %v", err)
	}
}

// TestChainLocalityLateLabels runs P = 3 owners on the embedded server
// with anchors fixed from the first batches: every late label reaches the
// owner of its sample (no label stays pending, each labeled sample is
// scored once), a label sent before its sample goes to every owner and is
// counted once, and a second driver of the namespace routes with the
// first one's anchors.
func TestChainLocalityLateLabels(t *testing.T) {
	const nb, b, P = 30, 10, 3
	nc, url := startServer(t)
	// No common start: every sample is routed by anchor.
	cfg := Config{Namespace: "loc", Partitions: P, Rank: 3, PinnedTTL: 500 * time.Millisecond, Warm: -1}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	batches := chainBatches(nb, b)
	// The label of sample "25" comes in batch 1, before its sample (batch 2).
	batches[1].LateLabels = append(batches[1].LateLabels, record.LateLabel{Offset: batches[1].Offsets[b-1] + 2, ID: "25", Label: batches[2].Labels[2]})
	batches[2].Labels[5], batches[2].Labeled[5] = "", false // sample "25" itself unlabeled

	_, _, stop := runChainWorkers(t, url, cfg, P)
	ctx, d := startDriver(t, nc, cfg, settings)
	var first []*stages.Features
	for _, bt := range batches[:15] {
		first = append(first, stages.NewFeatures(bt))
	}
	if err := d.Anchor(ctx, first); err != nil {
		t.Fatal(err)
	}
	if d.route.Anchors() == nil {
		t.Fatal("no anchors from 150 samples")
	}
	var last *ChainStep
	inBand, late := 0, 0
	pred, truth := map[string]string{}, map[string]string{}
	for k, bt := range batches {
		for i, ok := range bt.Labeled {
			if ok && bt.Labels[i] != "" {
				inBand++
			}
		}
		late += len(bt.LateLabels)
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatal(err)
		}
		var err error
		if last, err = d.Receive(ctx); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		if n := len(last.Step.Predictions); n != b {
			t.Fatalf("batch %d: %d predictions, want %d", k, n, b)
		}
		for _, p := range last.Step.Predictions {
			pred[p.ID] = p.Label
		}
		for i, ok := range bt.Labeled {
			if ok {
				truth[bt.IDs[i]] = bt.Labels[i]
			}
		}
		for _, ll := range bt.LateLabels {
			truth[ll.ID] = ll.Label
		}
	}
	right := 0
	for id, lab := range truth {
		if pred[id] == lab {
			right++
		}
	}
	// The owners learn every label (their context: the labeled samples of
	// the other partitions) but count only their own samples' predictions.
	if c := last.Counters; c.Correct != int64(right) || c.Records != int64(nb*b+late) {
		t.Errorf("owners count %d right predictions and %d records; the driver's predictions %d right, %d records sent", c.Correct, c.Records, right, nb*b+late)
	}
	sh := d.Shares()
	c := last.Counters
	if c.LateLabels != int64(late) {
		t.Errorf("late labels %d, want %d (the one sent to every owner counted once)", c.LateLabels, late)
	}
	// Every label applied once: in-band labels and late labels, each
	// scored on its sample (or early). The label sent ahead waits, still
	// pending, on the P−1 owners without its sample.
	if got := c.Labeled + c.Early; got != int64(inBand+late) || last.Pending != P-1 {
		t.Errorf("labels scored %d (labeled %d, early %d), pending %d; want %d scored, %d pending", got, c.Labeled, c.Early, last.Pending, inBand+late, P-1)
	}
	if c.Samples != nb*b || slices.Min(sh) == 0 {
		t.Errorf("samples %d, shares %v", c.Samples, sh)
	}
	d2, err := NewChainDriver(ctx, nc, cfg, settings)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if d2.route.Anchors() == nil || !mat.Equal(d2.route.Anchors(), d.route.Anchors()) {
		t.Error("a second driver of the namespace has other anchors")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestChainDriverGathersAnchors: a driver that is not given the first
// batches ahead (serve --nats) routes by id hash until its batches have
// brought 50·P dense samples, then fixes the namespace's anchors; a driver
// started later routes with those from its first batch.
func TestChainDriverGathersAnchors(t *testing.T) {
	const b, P = 10, 2
	nc, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{Namespace: "gather", Partitions: P, Rank: 3}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	d, err := NewChainDriver(ctx, nc, cfg, settings)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for k, bt := range chainBatches(12, b) {
		if (d.route.Anchors() != nil) != (k >= 50*P/b) {
			t.Fatalf("before batch %d (%d samples sent): anchors %v", k, k*b, d.route.Anchors() != nil)
		}
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatal(err)
		}
	}
	d2, err := NewChainDriver(ctx, nc, cfg, settings)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if d2.route.Anchors() == nil || !mat.Equal(d2.route.Anchors(), d.route.Anchors()) {
		t.Error("a later driver does not route with the namespace's anchors")
	}
}
