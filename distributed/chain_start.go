package distributed

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/stages"
)

// The common start learned once (distributed/DESIGN.md, "A common start";
// issue 29). The first driver of a namespace (the one that claims the
// model bucket's key keyStart) routes the batches of its common start
// whole to partition 0 (Router.Once) and sends the others empty shares;
// the first batch after them carries hdrStart with the number of those
// batches. On it, partition 0's owner stores its Learner's state, the
// state after the common start, as the object startName(driver) of the
// namespace's object store before it learns the batch, and every other
// owner that has learned nothing yet waits for that object and continues
// from a Learner restored from it: the common start is learned once, not
// once per owner, and every owner holds it as one machine would, under
// the samples' own ids. The object is kept: an owner that replays its
// partition from the first batch (a failover without a snapshot) forks
// from it again.

// startStates holds, by namespace and driver (startKey), a *startEntry:
// the state after the common start that partition 0's owner of this
// process stored, once it has. Another owner of the process restores from
// it without reading and decoding the object (Learner.Restore copies what
// it reads, so the owners share no mutable state). One entry per driver
// whose common start an owner here forked from, kept for the process's
// life, as the object is kept.
var startStates sync.Map

// startEntry is a common start's state in this process: st, set before
// done is closed.
type startEntry struct {
	done chan struct{}
	once sync.Once
	st   *stages.LearnerState
}

// startEntryOf returns the entry of driver drv's common start in
// namespace ns, made if there is none.
func startEntryOf(ns, drv string) *startEntry {
	e, _ := startStates.LoadOrStore(ns+"\x00"+drv, &startEntry{done: make(chan struct{})})
	return e.(*startEntry)
}

// set makes st the entry's state, once.
func (e *startEntry) set(st *stages.LearnerState) {
	e.once.Do(func() { e.st = st; close(e.done) })
}

// hdrStart is the header of the first batch after a common start learned
// once: the number of batches of that start.
const hdrStart = "Nmf-Start"

// keyStart is the model bucket's key naming the driver whose common start
// is learned once: the namespace's first driver with P > 1 and Warm > 0.
const keyStart = "start"

// startName is the object of the Learner state after driver drv's common
// start.
func startName(drv string) string { return "start-" + drv }

// claimStart reports whether the driver named name learns its common
// start once: it does if it stores its name under keyStart, or finds it
// there (a resumed driver). Another driver of the namespace shares its
// common start as context (Router.Warm without Once), since the owners
// other than partition 0's have learned other batches already.
func claimStart(ctx context.Context, kv jetstream.KeyValue, name string) (bool, error) {
	var once bool
	err := retry(ctx, func(ctx context.Context) error {
		_, err := kv.Create(ctx, keyStart, []byte(name))
		if err == nil {
			once = true
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		e, err := kv.Get(ctx, keyStart)
		if err != nil {
			return err
		}
		once = string(e.Value()) == name
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claiming the common start: %w", err)
	}
	return once, nil
}

// fork handles the first batch of driver drv after its common start
// learned once, before the owner of part learns it. Partition 0's owner
// stores l's state as startName(drv) and keeps l. Another owner whose
// Learner has counted nothing (it has learned only the start's empty
// shares) returns a Learner restored from that state, waiting for it,
// and sets o.context to the state's counters, so that the counts of the
// common start, partition 0's, are not reported twice; one that has
// counted something (it learned another driver's batches) keeps l, and
// the common start is lost to it.
func (w *Worker) fork(ctx context.Context, l *stages.Learner, o *ownerState, part int, drv string) (*stages.Learner, error) {
	if part == 0 {
		// ForkState: the owners of this process restore from st with a copy
		// of its k-NN graph, not a rebuild; its encoding is State's.
		st, err := l.ForkState()
		if err != nil {
			return l, err
		}
		startEntryOf(w.st.n.ns, drv).set(st) // the owners of this process take it at once
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(st); err != nil {
			return l, fmt.Errorf("distributed: common start of driver %s: %w", drv, err)
		}
		err = retry(ctx, func(ctx context.Context) error {
			return w.putObject(ctx, startName(drv), buf.Bytes())
		})
		if err != nil {
			return l, fmt.Errorf("distributed: common start of driver %s: %w", drv, err)
		}
		return l, nil
	}
	c := l.Counters()
	c.Offset = 0
	if c != (stages.Counters{}) {
		w.logf("namespace %q: owner-%d: driver %s's common start not taken: this owner has learned other batches", w.st.n.ns, part, drv)
		return l, nil
	}
	st, err := w.startState(ctx, drv)
	if err != nil {
		return l, err
	}
	nl, err := w.newLearner(o.raw)
	if err != nil {
		return l, corrupt("namespace %q: learner settings: %v", w.st.n.ns, err)
	}
	if err := restoreLearner(nl, st); err != nil {
		return l, corrupt("common start of driver %s: %v", drv, err)
	}
	o.context = nl.Counters()
	return nl, nil
}

// startState returns the state after driver drv's common start: the one
// partition 0's owner of this process stored, if it is here, else the
// object's, waiting for it.
func (w *Worker) startState(ctx context.Context, drv string) (*stages.LearnerState, error) {
	e := startEntryOf(w.st.n.ns, drv)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	data, err := w.awaitObject(wctx, startName(drv))
	select {
	case <-e.done:
		return e.st, nil
	default:
	}
	if err != nil {
		return nil, fmt.Errorf("distributed: common start of driver %s: %w", drv, err)
	}
	var st stages.LearnerState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return nil, corrupt("common start of driver %s: %v", drv, err)
	}
	return &st, nil
}

// awaitObject returns the object name of the namespace's object store,
// waiting until it is stored (or ctx ends).
func (w *Worker) awaitObject(ctx context.Context, name string) ([]byte, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, staleAfter)
		data, err := w.awaitObjectOnce(wctx, name)
		cancel()
		switch {
		case err == nil && data != nil:
			return data, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			return nil, err
		}
		// Nothing within staleAfter: watch anew (a watch a NATS node's
		// loss left silent).
	}
}

// awaitObjectOnce watches the object store until ctx ends and returns the
// object name once it is there, or nil.
func (w *Worker) awaitObjectOnce(ctx context.Context, name string) ([]byte, error) {
	ow, err := w.st.snaps.Watch(ctx)
	if err != nil {
		return nil, err
	}
	defer ow.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case info, ok := <-ow.Updates():
			if !ok {
				return nil, nil
			}
			if info == nil || info.Name != name || info.Deleted {
				continue
			}
			data, err := w.getStored(ctx, name)
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				continue
			}
			return data, err
		}
	}
}

// getStored reads object name, which is stored: the watch has seen it, or
// a trim point says it must be there. It reads again, 10 ms doubling up to
// about 2.5 s, while the store answers that it is not: object stores
// answer reads from any replica (direct gets), and on a replicated one a
// replica that has not yet caught up answers "not found" for an object
// just stored, which made the other owners of a 3-node cluster wait a
// whole staleAfter for the common start (BENCHMARKS.md, "… session 20").
// After that it returns jetstream.ErrObjectNotFound.
func (w *Worker) getStored(ctx context.Context, name string) ([]byte, error) {
	wait := 10 * time.Millisecond
	for i := 0; ; i++ {
		data, err := w.st.snaps.GetBytes(ctx, name)
		if !errors.Is(err, jetstream.ErrObjectNotFound) || i == 8 {
			return data, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}
