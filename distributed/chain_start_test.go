//go:build nats

package distributed

import (
	"bytes"
	"context"
	"encoding/gob"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/stages"
)

// TestCommonStartLearnedOnce: with a common start of 60 unlabeled samples
// at P = 3 (chainBatches: 6 unlabeled samples a batch), the first 10
// batches go whole to partition 0, whose answers are a lone Learner's on
// the same batches, bit for bit; the state partition 0 stores for the
// others at the fork is that Learner's after the 10 batches; the other
// owners take it (every prediction after the fork has a class, which an
// owner that had learned only empty shares could not give) and the
// summed counters count every record, sample and label once.
func TestCommonStartLearnedOnce(t *testing.T) {
	const nb, b, P, start = 30, 10, 3, 10
	nc, url := startServer(t)
	cfg := Config{Namespace: "once", Partitions: P, Rank: 3, PinnedTTL: 500 * time.Millisecond, Warm: 6 * start}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	batches := chainBatches(nb, b)
	want, _ := referenceSteps(t, settings, batches[:start])

	ws, _, stop := runChainWorkers(t, url, cfg, P)
	ctx, d := startDriver(t, nc, cfg, settings)
	if !d.route.Once {
		t.Fatal("the namespace's first driver does not learn its common start once")
	}
	var first []*stages.Features
	for _, bt := range batches[:15] {
		first = append(first, stages.NewFeatures(bt))
	}
	if err := d.Anchor(ctx, first); err != nil {
		t.Fatal(err)
	}
	var last *ChainStep
	inBand, late := 0, 0
	for k, bt := range batches {
		for _, ok := range bt.Labeled {
			if ok {
				inBand++
			}
		}
		late += len(bt.LateLabels)
		if k < start {
			last = sendAndCheck(t, ctx, d, k, bt, want[k])
			if sh := d.Shares(); sh[1]+sh[2] != 0 {
				t.Fatalf("batch %d of the common start: shares %v", k, sh)
			}
			continue
		}
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatal(err)
		}
		if k == start && (!d.route.Forks() || d.route.StartBatches() != start) {
			t.Fatalf("batch %d does not fork after %d batches (%d)", k, start, d.route.StartBatches())
		}
		var err error
		if last, err = d.Receive(ctx); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		if len(last.Step.Predictions) != b {
			t.Fatalf("batch %d: %d predictions, want %d", k, len(last.Step.Predictions), b)
		}
		for _, p := range last.Step.Predictions {
			if p.Label == "" {
				t.Errorf("batch %d: sample %s unpredicted after the fork", k, p.ID)
			}
		}
	}
	c := last.Counters
	if c.Records != int64(nb*b+late) || c.Samples != nb*b || c.LateLabels != int64(late) || c.Labeled+c.Early != int64(inBand+late) {
		t.Errorf("counters %+v; want %d records, %d samples, %d late labels, %d labels scored", c, nb*b+late, nb*b, late, inBand+late)
	}
	if sh := d.Shares(); sh[0]+sh[1]+sh[2] != nb*b || sh[1] == 0 || sh[2] == 0 {
		t.Errorf("shares %v: want %d samples, each learned by one owner", sh, nb*b)
	}

	ref, err := testLearner(settings)
	if err != nil {
		t.Fatal(err)
	}
	for _, bt := range batches[:start] {
		if _, err := ref.Learn(bt); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ref.State()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		t.Fatal(err)
	}
	var lone stages.LearnerState
	if err := gob.NewDecoder(&buf).Decode(&lone); err != nil {
		t.Fatal(err)
	}
	// The state the owners of this process took, then the object's, which
	// an owner of another process reads.
	inProcess := startEntryOf("once", d.name).st
	startStates.Delete("once\x00" + d.name)
	stored, err := ws[1].startState(ctx, d.name)
	if err != nil {
		t.Fatal(err)
	}
	// A replica behind answers "not found" for an object just stored
	// (object stores answer direct gets from any replica): the owner, whose
	// watch has seen the object, reads it again instead of waiting a
	// staleAfter for another update of the watch.
	startStates.Delete("once\x00" + d.name)
	fl := &flakyObjects{ObjectStore: ws[1].st.snaps, misses: 2}
	ws[1].st.snaps = fl
	lagged, err := ws[1].startState(ctx, d.name)
	ws[1].st.snaps = fl.ObjectStore
	if err != nil {
		t.Fatal(err)
	}
	if fl.watches != 1 || fl.gets != 3 {
		t.Errorf("a lagging replica: %d watches and %d reads, want 1 watch and 3 reads (two misses, then the object)", fl.watches, fl.gets)
	}
	for what, st := range map[string]*stages.LearnerState{"this process's": inProcess, "the object's": stored, "the object's, read past a lagging replica": lagged} {
		var b bytes.Buffer
		var got stages.LearnerState
		if err := gob.NewEncoder(&b).Encode(st); err != nil {
			t.Fatal(err)
		}
		if err := gob.NewDecoder(&b).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, lone) {
			t.Errorf("the common start's state (%s) differs from a lone Learner's after its batches", what)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// flakyObjects is an object store whose first misses reads answer "not
// found", as a replica that has not caught up does; it counts reads and
// watches.
type flakyObjects struct {
	jetstream.ObjectStore
	misses, gets, watches int
}

func (f *flakyObjects) GetBytes(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) ([]byte, error) {
	f.gets++
	if f.misses > 0 {
		f.misses--
		return nil, jetstream.ErrObjectNotFound
	}
	return f.ObjectStore.GetBytes(ctx, name, opts...)
}

func (f *flakyObjects) Watch(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.ObjectWatcher, error) {
	f.watches++
	return f.ObjectStore.Watch(ctx, opts...)
}
