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
// A snapshot older than the trim point (written by an owner that had lost
// its role without noticing it yet) or one that cannot be restored would
// need batches that are gone: saveSnapshot does not write a snapshot older
// than the trim point, and restoreSnapshot refuses, with an error naming
// the partition, to rebuild a trimmed partition from anything but a
// snapshot at or after it, rather than learn what is left of the log as if
// it were whole.

func trimmedKey(part int) string { return fmt.Sprintf("trimmed-%d", part) }

// trimPoint returns partition part's trim point: the stream sequence up
// to which its batches were purged, 0 if none were.
func (w *Worker) trimPoint(ctx context.Context, part int) (uint64, error) {
	var seq uint64
	err := retry(ctx, func(ctx context.Context) error {
		e, err := w.st.model.Get(ctx, trimmedKey(part))
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			seq = 0
			return nil
		case err != nil:
			return err
		}
		seq, err = strconv.ParseUint(string(e.Value()), 10, 64)
		if err != nil {
			return corrupt("namespace %q: trim point of partition %d: %q", w.st.n.ns, part, e.Value())
		}
		return nil
	})
	return seq, err
}

// trimBatches records seq, the stream sequence of partition part's newest
// snapshot, as its trim point and purges its batches up to seq. A failure
// is logged and leaves the batches for the next snapshot to purge.
func (w *Worker) trimBatches(ctx context.Context, part int, seq uint64) {
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	_, err := w.st.model.Put(actx, trimmedKey(part), []byte(strconv.FormatUint(seq, 10)))
	if err == nil {
		var s jetstream.Stream
		if s, err = w.js.Stream(actx, w.st.n.batchStream()); err == nil {
			err = s.Purge(actx, jetstream.WithPurgeSubject(w.st.n.batchSubject(part)), jetstream.WithPurgeSequence(seq+1))
		}
	}
	if err != nil {
		w.logf("namespace %q: owner-%d: batches up to stream sequence %d not trimmed: %v", w.st.n.ns, part, seq, err)
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
