package distributed

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/stages"
)

// Owner snapshots (distributed/DESIGN.md, "Failover and exactly-once";
// issue 29). An owner that takes a partition over rebuilds its Learner by
// replaying the partition's batches; without a snapshot it replays them
// from the first, so a takeover costs the whole stream. Every
// SnapshotEvery batches the owner therefore stores its Learner's state
// (stages.Learner.State, the state of `stream --checkpoint`) in the
// namespace's object store under "learner-<p>", with the stream sequence
// of the last batch it holds; a new owner restores the latest snapshot
// and replays only the batches after it, at most SnapshotEvery (plus any
// the old owner learned after its last snapshot).
//
// A snapshot is taken only after the answer of its last batch was
// published, so a restored owner never skips an answer it owes. Any
// snapshot is a valid start: the batches are an immutable log and
// LearnFeatures is deterministic, so restoring an older one (a former
// owner that had not noticed its loss wrote last) only replays more.

// defaultSnapshotEvery is the batches between snapshots when
// Worker.SnapshotEvery is zero: stream's --checkpoint-every of 10,000
// records at its batch of 100.
const defaultSnapshotEvery = 100

// snapshotVersion names the layout of chainSnapshot; a snapshot of another
// version is not restored (the owner replays from the first batch).
const snapshotVersion = 1

// chainSnapshot is an owner's state after the batch at stream sequence
// Seq of its partition's subject.
type chainSnapshot struct {
	Version int
	// Seq is the stream sequence up to which the partition's messages
	// are consumed (ownerState.seq); Batches the batches learned from the
	// first (replays not counted twice).
	Seq     uint64
	Batches int64
	// Context is what the contexts added to the Learner's counters
	// (learnShare); Last is, by driver, the last batch number learned
	// (ownerState.repeat).
	Context stages.Counters
	Last    map[string]int64
	State   *stages.LearnerState
}

// ownerState is what an owner holds of its partition besides the Learner.
type ownerState struct {
	// seq is the stream sequence up to which every message of the
	// partition is consumed: learned, or a chunk of a share learned or
	// given up (takeMsg). It is the last learned message's (a chunked
	// share's last chunk's), unless chunks of shares not yet whole come
	// before it: then it is the sequence before the first of them, so
	// that a snapshot, a trim and a takeover never lose a chunk.
	seq     uint64
	read    uint64                // stream sequence of the last message read (the consumer goes on after it)
	chunks  map[shareKey]*partial // shares being reassembled (takeMsg)
	batches int64                 // batches learned from the first
	context stages.Counters       // what the contexts added to the Learner's counters
	last    map[string]int64      // by driver, the last batch number learned
	since   int                   // batches learned since the last snapshot
	fence   uint64                // revision of the trim point this owner wrote last (chain_trim.go)
	raw     []byte                // the namespace's learner settings (a fork's new Learner, chain_start.go)
}

// shareKey names a driver's batch.
type shareKey struct {
	driver string
	batch  int64
}

// repeat reports whether driver drv's batch b was learned already: a
// driver's batches reach a partition in increasing order, so a number at
// or below the last one learned is a batch sent again (a driver resumed
// after a crash, ResumeChainDriver, sends again the batches it had sent
// but not written the answers of).
func (o *ownerState) repeat(drv string, b int64) bool {
	last, ok := o.last[drv]
	return ok && b <= last
}

func snapshotName(part int) string { return fmt.Sprintf("learner-%d", part) }

func (w *Worker) snapshotEvery() int {
	if w.SnapshotEvery == 0 {
		return defaultSnapshotEvery
	}
	return w.SnapshotEvery
}

// saveSnapshot stores l's state and o as partition part's snapshot, then
// trims the partition's batches up to it (chain_trim.go). It writes
// nothing when another owner has claimed the partition since o's owner
// last wrote its trim point.
func (w *Worker) saveSnapshot(ctx context.Context, part int, l *stages.Learner, o *ownerState) error {
	if !w.holdsTrim(ctx, part, o) {
		return fmt.Errorf("distributed: snapshot of partition %d not written: another owner has claimed it (chain_trim.go)", part)
	}
	st, err := l.State()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	s := chainSnapshot{Version: snapshotVersion, Seq: o.seq, Batches: o.batches, Context: o.context, Last: o.last, State: st}
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return fmt.Errorf("distributed: snapshot of partition %d: %w", part, err)
	}
	actx, cancel := context.WithTimeout(ctx, attemptWithin+staleAfter)
	defer cancel()
	if err := w.putObject(actx, snapshotName(part), buf.Bytes()); err != nil {
		return fmt.Errorf("distributed: snapshot of partition %d: %w", part, err)
	}
	o.since = 0
	w.trimBatches(ctx, part, o)
	return nil
}

// putObject stores data as the object name of the namespace's object
// store, in chunks the connection carries: the store's default of 128 KiB
// is more than a server of a smaller max_payload accepts.
func (w *Worker) putObject(ctx context.Context, name string, data []byte) error {
	size := uint32(128 << 10)
	if m := w.js.Conn().MaxPayload() - chunkRoom; m > 0 && m < int64(size) {
		size = uint32(m)
	}
	_, err := w.st.snaps.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: size}}, bytes.NewReader(data))
	return err
}

// restoreSnapshot returns partition part's Learner and owner state from
// its latest snapshot, made with newLearner from the namespace's learner
// settings raw; or a fresh Learner and state when there is no snapshot.
// A snapshot that cannot be read or restored is reported on w.Log and
// ignored: replaying every batch gives the same Learner. On a partition
// whose batches were trimmed (chain_trim.go) only a snapshot at or after
// the trim point is a valid start: anything else is an error.
func (w *Worker) restoreSnapshot(ctx context.Context, part int, raw []byte) (*stages.Learner, *ownerState, error) {
	fence, trimmed, err := w.claimTrim(ctx, part)
	if err != nil {
		return nil, nil, err
	}
	fresh := func() (*stages.Learner, *ownerState, error) {
		if trimmed > 0 {
			return nil, nil, corrupt("namespace %q: partition %d: its batches up to stream sequence %d were trimmed after a snapshot, and no snapshot at or after it can be restored", w.st.n.ns, part, trimmed)
		}
		l, err := w.newLearner(raw)
		if err != nil {
			return nil, nil, corrupt("namespace %q: learner settings: %v", w.st.n.ns, err)
		}
		return l, &ownerState{last: map[string]int64{}, fence: fence}, nil
	}
	var data []byte
	err = retry(ctx, func(ctx context.Context) error {
		var err error
		if trimmed > 0 {
			data, err = w.getStored(ctx, snapshotName(part)) // a snapshot at or after the trim point exists
		} else {
			data, err = w.st.snaps.GetBytes(ctx, snapshotName(part))
		}
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			data, err = nil, nil
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("distributed: snapshot of partition %d: %w", part, err)
	}
	if data == nil {
		return fresh()
	}
	var s chainSnapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err == nil && s.Seq < trimmed {
		w.logf("namespace %q: owner-%d: snapshot %s at stream sequence %d, before the trim point %d", w.st.n.ns, part, snapshotName(part), s.Seq, trimmed)
		return fresh()
	} else if err != nil || s.Version != snapshotVersion || s.State == nil {
		w.logf("namespace %q: owner-%d: snapshot %s unreadable (version %d, %v): replaying every batch", w.st.n.ns, part, snapshotName(part), s.Version, err)
		return fresh()
	}
	l, err := w.newLearner(raw)
	if err != nil {
		return nil, nil, corrupt("namespace %q: learner settings: %v", w.st.n.ns, err)
	}
	if err := restoreLearner(l, s.State); err != nil {
		w.logf("namespace %q: owner-%d: snapshot %s not restored (%v): replaying every batch", w.st.n.ns, part, snapshotName(part), err)
		return fresh()
	}
	if s.Last == nil {
		s.Last = map[string]int64{}
	}
	return l, &ownerState{seq: s.Seq, batches: s.Batches, context: s.Context, last: s.Last, fence: fence}, nil
}

// restoreLearner restores st into l, a Learner made from the namespace's
// learner settings.
func restoreLearner(l *stages.Learner, st *stages.LearnerState) error {
	if o := st.Online; o != nil && o.K > 0 && o.K < l.Model.Rank && o.K <= o.Dim {
		// The rank was lowered to the stream's dimension before the first
		// fit (stages' capRank): the state has that rank, as a stream
		// checkpoint restored by the command line does.
		l.Model.Rank = o.K
	}
	return l.Restore(st)
}

// logf writes a line to w.Log, if set.
func (w *Worker) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(fmt.Sprintf(format, args...))
	}
}
