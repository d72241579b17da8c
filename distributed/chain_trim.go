package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// Trimming the batch log and the answers (distributed/DESIGN.md, "Failover
// and exactly-once"). Without it the batch stream holds every batch of the
// namespace forever: storage grows with the stream's length. A partition's
// batches up to its owner's snapshot are no longer needed, since a takeover
// restores the snapshot and reads only the batches after it (ownChain). So
// after each snapshot the owner records the snapshot's stream sequence as
// the partition's trim point, under the model bucket's key
// "trimmed-<p>", and then purges the partition's subject up to it. The
// log then holds at most SnapshotEvery batches a partition, plus any
// learned since the last snapshot; with snapshots off (SnapshotEvery < 0)
// nothing is trimmed.
//
// Two owners of one partition can overlap: one that lost its role keeps
// learning until it notices, and may snapshot and trim past the point a new
// owner restored and reads from. The trim point's key is therefore also a
// fence: a new owner claims it on taking the role (it writes the key again,
// which moves its revision, claimTrim) before it restores the latest
// snapshot, and an owner writes a snapshot or moves the trim point only
// while the key's revision is still the one it wrote last (a
// compare-and-set, kv.Update). An owner that lost its role thus neither
// snapshots nor purges once the new one has claimed the partition, and
// whatever it trimmed before that claim is at or before the snapshot the
// new owner restores (a snapshot is stored before the trim point moves to
// it). A new owner refuses, with an error naming the partition, to rebuild
// a trimmed partition from anything but a snapshot at or after the trim
// point, rather than learn what is left of the log as if it were whole.

func trimmedKey(part int) string { return fmt.Sprintf("trimmed-%d", part) }

// claimTrim claims partition part's trim point for a new owner: it writes
// the key again with its value (or creates it at 0) and returns the
// revision written, the fence of the owner's later writes, and the trim
// point, the stream sequence up to which the partition's batches were
// purged (0 if none were).
func (w *Worker) claimTrim(ctx context.Context, part int) (fence, seq uint64, err error) {
	err = retry(ctx, func(ctx context.Context) error {
		e, err := w.st.model.Get(ctx, trimmedKey(part))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			seq = 0
			fence, err = w.st.model.Create(ctx, trimmedKey(part), []byte("0"))
			return err // a key another owner created meanwhile: read it again
		}
		if err != nil {
			return err
		}
		if seq, err = strconv.ParseUint(string(e.Value()), 10, 64); err != nil {
			return corrupt("namespace %q: trim point of partition %d: %q", w.st.n.ns, part, e.Value())
		}
		fence, err = w.st.model.Update(ctx, trimmedKey(part), e.Value(), e.Revision())
		return err
	})
	if errors.Is(err, errCorrupt) {
		return 0, 0, err
	}
	if err != nil {
		return 0, 0, fmt.Errorf("distributed: trim point of partition %d: %w", part, err)
	}
	return fence, seq, nil
}

// holdsTrim reports whether partition part's trim point is still at the
// revision o.fence, that is whether no other owner has claimed the
// partition since o's owner last wrote it.
func (w *Worker) holdsTrim(ctx context.Context, part int, o *ownerState) bool {
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	e, err := w.st.model.Get(actx, trimmedKey(part))
	return err == nil && e.Revision() == o.fence
}

// trimBatches moves partition part's trim point to o.seq, the stream
// sequence of its newest snapshot, if no other owner has claimed it
// (the compare-and-set on o.fence), and purges its batches up to it. A
// failure is logged and leaves the batches for the next snapshot to purge.
func (w *Worker) trimBatches(ctx context.Context, part int, o *ownerState) {
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	rev, err := w.st.model.Update(actx, trimmedKey(part), []byte(strconv.FormatUint(o.seq, 10)), o.fence)
	if err == nil {
		o.fence = rev
		var s jetstream.Stream
		if s, err = w.js.Stream(actx, w.st.n.batchStream()); err == nil {
			err = s.Purge(actx, jetstream.WithPurgeSubject(w.st.n.batchSubject(part)), jetstream.WithPurgeSequence(o.seq+1))
		}
	}
	if err != nil {
		w.logf("namespace %q: owner-%d: batches up to stream sequence %d not trimmed: %v", w.st.n.ns, part, o.seq, err)
	}
}

// TrimAnswers purges this driver's answers up to pos.AnswerSeq from the
// answer stream: those of the batches before pos.Next, which a driver
// resumed at pos (ResumeChainDriver) does not read again. Call it with a
// position of this driver once a checkpoint holding it is durable, or with
// Position when the run will not be resumed (ChainDriver.TrimEvery does).
func (d *ChainDriver) TrimAnswers(ctx context.Context, pos ChainPosition) error {
	if pos.Driver != d.name {
		return fmt.Errorf("distributed: trimming the answers of driver %q with a position of %q", d.name, pos.Driver)
	}
	if pos.AnswerSeq == 0 {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	s, err := d.js.Stream(actx, d.n.predStream())
	if err == nil {
		err = s.Purge(actx, jetstream.WithPurgeSubject(d.n.predSubject(d.name)), jetstream.WithPurgeSequence(pos.AnswerSeq+1))
	}
	if err != nil {
		return fmt.Errorf("distributed: trimming the answers of driver %q up to stream sequence %d: %w", d.name, pos.AnswerSeq, err)
	}
	return nil
}
