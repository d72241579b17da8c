package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
	"github.com/nmfstream/nmfstream/stages"
)

// stream --nats --checkpoint C (docs/DESIGN.md §6; issue 29): the learner
// lives on the owners, so the driver's checkpoint holds only where the
// driver is: its name and how many batches' answers --out holds
// (distributed.ChainPosition), the outputs' lengths then, and the owners'
// counters after those batches. A run that finds C resumes the driver
// (distributed.ResumeChainDriver): it reads the input again from the
// start, routes the batches already written without publishing them,
// continues --out and --rejects from the lengths in C (what a crashed run
// wrote after them is dropped), and publishes the rest; a batch the
// crashed driver had sent already is learned once, by its owner, and its
// answer read from the namespace. So every sample is predicted once and
// the counters cover the whole stream, as stream's checkpoints do.

// natsCheckpointVersion names the layout of natsCheckpoint in the
// checkpoint file format of sinks.SaveCheckpoint; stream's own layout is
// checkpointVersion, a different number, so neither reads the other's.
const natsCheckpointVersion = 1<<16 | 1

// natsCheckpoint is the state of a stream --nats run after the batches
// whose answers its outputs hold.
type natsCheckpoint struct {
	Config     onlineConfig
	Input      inputID
	Output     outputState
	Namespace  string
	Partitions int
	Position   distributed.ChainPosition
	// Counters, Scores and Pending are the owners' after batch
	// Position.Next − 1 (summed over the partitions); Records counts the
	// input records of the batches before Position.Next.
	Counters stages.Counters
	Scores   stages.Scores
	Pending  int
	Records  int64
}

// loadNATSCheckpoint reads the checkpoint at path, or returns
// errNoCheckpoint.
func loadNATSCheckpoint(path string) (*natsCheckpoint, error) {
	f, size, err := openCheckpoint(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cp natsCheckpoint
	err = sources.ReadCheckpoint(f, size, natsCheckpointVersion, &cp)
	var ve *sources.CheckpointVersionError
	switch {
	case errors.As(err, &ve) && ve.Got == checkpointVersion:
		return nil, fmt.Errorf("%s is a checkpoint of stream without --nats: resume it without --nats, or give another --checkpoint", path)
	case errors.Is(err, sources.ErrNotCheckpoint):
		return nil, fmt.Errorf("%s: not an nmfstream checkpoint", path)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case cp.Position.Driver == "":
		return nil, fmt.Errorf("%s: checkpoint of stream --nats without a driver", path)
	}
	return &cp, nil
}

// natsResume keeps stream --nats's checkpoint: the collect stage records
// each batch's position (collected), and the sink, once it has written the
// batch, saves the checkpoint when --checkpoint-every records have passed
// since the last one, with the outputs synced first (natsWriter).
type natsResume struct {
	path  string
	every int64
	base  natsCheckpoint // the run's configuration, input and output paths

	mu      sync.Mutex
	queue   []natsCheckpoint // positions collected, not yet written, in order
	last    *natsCheckpoint  // the latest written
	lastCkp int64            // Records at the last checkpoint saved

	// fingerprint, if set, returns the fingerprint of the input's first
	// records (sources.Reader.Fingerprint), which a checkpoint after them
	// holds so that a resume on another input is refused.
	fingerprint func(records int64) sources.Fingerprint

	// trim, if set, is called with the position of each checkpoint saved:
	// the driver's answers before it are no longer needed (best effort).
	trim func(distributed.ChainPosition)
}

// trimAnswersEvery is the batches between the purges of a driver's answers
// when it will not be resumed (distributed.ChainDriver.TrimEvery): the
// answer stream then holds at most about this many batches of the driver.
const trimAnswersEvery = 100

// collected records the position after a batch; call it from the collect
// stage, after Receive.
func (n *natsResume) collected(pos distributed.ChainPosition, a *distributed.ChainStep, records int64, prev *natsCheckpoint) {
	cp := n.base
	cp.Position, cp.Records = pos, records
	if n.fingerprint != nil {
		cp.Input.Fingerprint = n.fingerprint(records)
	}
	if a != nil && !a.Skipped {
		cp.Counters, cp.Scores, cp.Pending = a.Counters, a.Scores, a.Pending
	} else if prev != nil {
		cp.Counters, cp.Scores, cp.Pending = prev.Counters, prev.Scores, prev.Pending
	}
	n.mu.Lock()
	n.queue = append(n.queue, cp)
	n.mu.Unlock()
}

// written takes the position of the batch just written and saves it if a
// checkpoint is due, with w's outputs synced and their lengths in it.
func (n *natsResume) written(w *stepWriter, final bool) error {
	n.mu.Lock()
	var cp *natsCheckpoint
	if len(n.queue) > 0 {
		c := n.queue[0]
		n.queue = n.queue[1:]
		cp, n.last = &c, &c
	} else {
		cp = n.last
	}
	n.mu.Unlock()
	if cp == nil || (!final && (n.every <= 0 || cp.Records-n.lastCkp < n.every)) {
		return nil
	}
	if err := w.syncOutputs(&cp.Output); err != nil {
		return err
	}
	if err := sinks.SaveCheckpoint(n.path, natsCheckpointVersion, cp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	n.lastCkp = cp.Records
	if n.trim != nil {
		n.trim(cp.Position)
	}
	return nil
}

// natsWriter is stream --nats's sink: it writes each batch's answer and,
// with --checkpoint, saves the checkpoint when one is due.
type natsWriter struct {
	w   *stepWriter
	res *natsResume // nil without --checkpoint
}

func (nw *natsWriter) Write(ctx context.Context, ss *streamStep) error {
	if err := nw.w.Write(ctx, ss); err != nil {
		return err
	}
	if nw.res == nil {
		return nil
	}
	return nw.res.written(nw.w, false)
}

func (nw *natsWriter) Close() error { return nw.w.Close() }

// Flush saves the checkpoint of the end of the stream (a soft stop).
func (nw *natsWriter) Flush(context.Context) error {
	if nw.res == nil {
		return nil
	}
	return nw.res.written(nw.w, true)
}

// resumeFrom returns, with --checkpoint, the checkpoint's keeper and the
// checkpoint to resume from (nil if the file does not exist yet), having
// checked it against the command line and set f to resume its driver and
// o to its configuration.
func (f *chainNATS) resumeFrom(o *streamOptions) (*natsResume, *natsCheckpoint, error) {
	if o.ckpt == "" {
		return nil, nil, nil
	}
	inID, err := identify(o.in)
	if err != nil {
		return nil, nil, err
	}
	res := &natsResume{path: o.ckpt, every: o.every, base: natsCheckpoint{Config: o.cfg, Input: inID,
		Output: outputState{Out: o.out, Rejects: o.rejects}, Namespace: f.cfg.Namespace, Partitions: f.cfg.Partitions}}
	cp, err := loadNATSCheckpoint(o.ckpt)
	switch {
	case errors.Is(err, errNoCheckpoint):
		return res, nil, nil
	case err != nil:
		return nil, nil, err
	}
	if err := sameConfig(o.fs, o.cfg, cp.Config); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", errUsage, o.ckpt, err)
	}
	if err := cp.Input.sameInput(inID, o.ckpt); err != nil {
		return nil, nil, err
	}
	if cp.Namespace != f.cfg.Namespace || (f.partitionsGiven && cp.Partitions != f.cfg.Partitions) {
		return nil, nil, fmt.Errorf("%w: %s is a checkpoint of namespace %q with %d partitions, not %q with %d: resume it on its namespace, or give another --checkpoint",
			errUsage, o.ckpt, cp.Namespace, cp.Partitions, f.cfg.Namespace, f.cfg.Partitions)
	}
	o.cfg, f.cfg.Partitions, f.cfg.Rank = cp.Config, cp.Partitions, cp.Config.Rank
	f.partitionsGiven = true
	f.resume = &cp.Position
	res.base.Config, res.base.Partitions, res.lastCkp = cp.Config, cp.Partitions, cp.Records
	return res, cp, nil
}

// checkedReader returns src's reader for stream --nats. The driver rereads
// its input from the start, so on a resume (prev) the reader checks those
// records against the checkpoint's fingerprint; with a checkpoint (res)
// the checkpoints written take their fingerprint from it.
func checkedReader(src sources.Source, res *natsResume, prev *natsCheckpoint) *sources.Reader {
	rd := sources.NewReader(src)
	if prev != nil {
		rd.Check = prev.Input.Fingerprint
	}
	if res != nil {
		res.fingerprint = rd.Fingerprint
	}
	return rd
}
