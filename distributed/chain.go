package distributed

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// The chain on the owners (distributed/DESIGN.md, "The chain on the
// owners"; docs/DESIGN.md §3): a driver (ChainDriver) runs decode and
// featurize, publishes each batch's stages.Features to the batches stream,
// and collects the predictions in batch order; the owner of the partition
// (a Worker made by NewChainWorker) runs a stages.Learner, built from the
// namespace's learner settings, on the batches in the order the stream
// holds them, and publishes the Step of each. With one partition the owner
// sees exactly the batches the driver made, in the driver's order, so its
// predictions are those of the single-machine stream.
//
// Subjects: <ns>.batch.<p> (stream <NS>_BATCHES) carries a driver's batch b
// for partition p with the headers Nmf-Driver (the driver's name) and
// Nmf-Batch (b, counting from 0); <ns>.pred.<driver> (stream <NS>_PREDS)
// carries the owner's answer with Nmf-Batch and Nmf-Part, published with
// the message id "<driver>.<b>.<p>", so that an owner that replays the
// batches after a failover republishes nothing the duplicate window still
// holds, and the driver drops any second answer of (b, p) beyond it.

// Headers of the chain's messages.
const (
	hdrDriver = "Nmf-Driver"
	hdrBatch  = "Nmf-Batch"
	hdrPart   = "Nmf-Part"
	// hdrStart (chain_start.go) marks the first batch after a common
	// start learned once.
)

// keyLearner is the model bucket's key of the namespace's learner settings.
const keyLearner = "learner"

// NewLearner builds a partition owner's stages.Learner from the learner
// settings the namespace holds (the bytes a ChainDriver stored; their
// format is the caller's, e.g. nmfstream's flags as JSON). Every owner of a
// namespace calls it with the same settings, so every owner's Learner is
// the driver's configuration.
type NewLearner func(settings []byte) (*stages.Learner, error)

func (n names) batchStream() string              { return n.up() + "_BATCHES" }
func (n names) predStream() string               { return n.up() + "_PREDS" }
func (n names) batchSubject(p int) string        { return fmt.Sprintf("%s.batch.%d", n.ns, p) }
func (n names) predSubject(d string) string      { return n.ns + ".pred." + d }
func (n names) up() string                       { return strings.ToUpper(strings.ReplaceAll(n.ns, "-", "_")) }
func chainMsgID(d string, b int64, p int) string { return fmt.Sprintf("%s.%d.%d", d, b, p) }

// setupChain creates (or finds) the chain's two streams.
func setupChain(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.names()
	for _, sc := range []jetstream.StreamConfig{
		{Name: n.batchStream(), Subjects: []string{n.ns + ".batch.*"}, Replicas: c.replicas(), Duplicates: chainDuplicates},
		{Name: n.predStream(), Subjects: []string{n.ns + ".pred.*"}, Replicas: c.replicas(), Duplicates: chainDuplicates},
	} {
		if _, err := ensureStream(ctx, js, sc); err != nil {
			return err
		}
	}
	return nil
}

// NewChainWorker returns a worker of cfg's namespace whose partition
// owners run the chain: each builds a stages.Learner with newLearner from
// the namespace's learner settings (it waits for a driver to store them)
// and learns the batches of its partition. There is no coordinator: each
// partition is a learner of its own (distributed/DESIGN.md, "Not done").
func NewChainWorker(ctx context.Context, nc *nats.Conn, cfg Config, newLearner NewLearner) (*Worker, error) {
	if newLearner == nil {
		return nil, errors.New("distributed: chain worker without a learner")
	}
	w, err := newWorker(ctx, nc, cfg)
	if err != nil {
		return nil, err
	}
	if err := setupChain(ctx, w.js, cfg); err != nil {
		return nil, err
	}
	w.newLearner = newLearner
	return w, nil
}

// learnerSettings returns the namespace's learner settings, waiting for a
// driver to store them. It reads the key, then watches it for staleAfter
// and reads again, so that a watch that a NATS node's loss leaves silent
// does not hold the role forever; it returns errLost once p is lost.
func (w *Worker) learnerSettings(ctx context.Context, p *pin) ([]byte, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, attemptWithin)
		e, err := w.st.model.Get(actx, keyLearner)
		cancel()
		switch {
		case err == nil:
			return e.Value(), nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return nil, fmt.Errorf("learner settings: %w", err)
		case !p.held():
			return nil, errLost
		}
		if v, err := w.watchSettings(ctx); err != nil || v != nil {
			return v, err
		}
	}
}

// watchSettings watches the learner settings' key for staleAfter and
// returns its value if one is stored meanwhile, else nil.
func (w *Worker) watchSettings(ctx context.Context) ([]byte, error) {
	wctx, cancel := context.WithTimeout(ctx, staleAfter)
	defer cancel()
	kw, err := w.st.model.Watch(wctx, keyLearner)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil // read again
	}
	defer kw.Stop()
	for {
		select {
		case <-wctx.Done():
			return nil, ctx.Err()
		case e, ok := <-kw.Updates():
			if !ok {
				return nil, nil
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				return e.Value(), nil
			}
		}
	}
}

// ownChain holds partition part's role: it restores the partition's
// latest snapshot (or builds a fresh Learner) and learns every batch of
// the partition after it, in stream order, publishing each one's Step and
// taking a snapshot every SnapshotEvery batches, until ctx ends or p is
// lost. What it replays it republishes unchanged (LearnFeatures is
// deterministic), and those answers are dropped by their message ids, or
// by the driver.
func (w *Worker) ownChain(ctx context.Context, p *pin, part int) error {
	raw, err := w.learnerSettings(ctx, p)
	if err != nil {
		return err
	}
	l, o, err := w.restoreSnapshot(ctx, part, raw)
	if err != nil {
		return err
	}
	o.raw = raw
	w.logf("namespace %q: owner-%d: held; %d batches restored from its snapshot, learning the batches after stream sequence %d", w.st.n.ns, part, o.batches, o.seq)
	o.read = o.seq
	it, err := orderedFrom(ctx, w.js, w.st.n.batchStream(), w.st.n.batchSubject(part), o.read)
	if err != nil {
		return err
	}
	defer func() { it.Stop() }()
	idle := time.Duration(0)
	every := w.snapshotEvery()
	for ctx.Err() == nil {
		if !p.held() {
			return errLost
		}
		tick := w.cfg.pinnedTTL() / 4
		wctx, cancel := context.WithTimeout(ctx, tick)
		m, err := it.Next(jetstream.NextContext(wctx))
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			if idle += tick; idle >= idleAfter { // silent: make the consumer anew (chain_resume.go)
				if fresh, err := orderedFrom(ctx, w.js, w.st.n.batchStream(), w.st.n.batchSubject(part), o.read); err == nil {
					it.Stop()
					it, idle = fresh, 0
				}
			}
			continue
		case err != nil:
			return err
		}
		idle = 0
		var whole bool
		if l, whole, err = w.takeMsg(ctx, l, o, part, m); err != nil || !whole {
			if errors.Is(err, errBadMessage) {
				// Not the chain's (a foreign writer, or damage): skipped,
				// so that one message cannot stop the partition.
				w.logf("namespace %q: owner-%d: %v; skipped", w.st.n.ns, part, err)
				w.mu.Lock()
				w.stats.Skipped++
				w.mu.Unlock()
				continue
			}
			if err != nil {
				return err
			}
			continue
		}
		if o.since++; every > 0 && o.since >= every {
			if err := w.saveSnapshot(ctx, part, l, o); err != nil {
				// Not fatal: the next one may succeed, and a takeover
				// meanwhile replays from the previous one.
				w.logf("namespace %q: owner-%d: %v", w.st.n.ns, part, err)
			}
		}
	}
	return nil
}

// takeMsg reads the batch message m of partition part: a whole share is
// learned at once (learnBatch); a chunk (chunkOf) is kept until every
// chunk of its share is read, and the share then learned whole, so that no
// owner, nor a replay after a takeover, learns part of one. A chunk of a
// share learned already (o.repeat: a driver that published it again) is
// dropped. It reports whether m completed a share (or was a whole
// message), and moves o.seq (ownerState). What it holds while
// reassembling is the chunks read of the shares not yet whole: one share
// per driver publishing to the partition (a driver publishes a batch's
// shares once every chunk of the one before is stored), and those of a
// driver that stopped amid a share, until chainDuplicates after their
// last chunk (dropShares).
func (w *Worker) takeMsg(ctx context.Context, l *stages.Learner, o *ownerState, part int, m jetstream.Msg) (*stages.Learner, bool, error) {
	var seq uint64
	var stamp time.Time
	if md, err := m.Metadata(); err == nil {
		seq, stamp = md.Sequence.Stream, md.Timestamp
	}
	o.read = max(o.read, seq)
	h := m.Headers()
	drv := h.Get(hdrDriver)
	b, err := strconv.ParseInt(h.Get(hdrBatch), 10, 64)
	if err != nil || drv == "" {
		o.settle(seq)
		return l, false, badMessage("batch message on %s without a driver and a batch number (%q, %q)", m.Subject(), drv, h.Get(hdrBatch))
	}
	i, n, err := chunkOf(h)
	if err != nil {
		o.settle(seq)
		return l, false, badMessage("driver %s batch %d: %v", drv, b, err)
	}
	data := m.Data()
	if n > 0 && o.repeat(drv, b) {
		o.settle(seq)
		return l, false, nil
	}
	if n > 0 {
		if o.chunks == nil {
			o.chunks = map[shareKey]*partial{}
		}
		key := shareKey{drv, b}
		a := o.chunks[key]
		if a == nil {
			a = newPartial(n)
			o.chunks[key] = a
		} else if len(a.parts) != n {
			o.settle(seq)
			return l, false, badMessage("driver %s batch %d: chunk %d of %d, after chunks of %d", drv, b, i, n, len(a.parts))
		}
		var done bool
		if data, done = a.add(i, data, seq, stamp); !done {
			w.dropShares(o, part, "", 0, stamp)
			o.settle(seq)
			return l, false, nil
		}
		delete(o.chunks, key)
	}
	if l, err = w.learnBatch(ctx, l, o, part, drv, b, h.Get(hdrStart) != "", data); err != nil {
		if errors.Is(err, errBadMessage) {
			o.settle(seq)
		}
		return l, false, err
	}
	w.dropShares(o, part, drv, b, stamp)
	o.settle(seq)
	return l, true, nil
}

// dropShares forgets the partial shares of driver drv up to batch b (a
// driver's shares reach the partition in batch order, so those will not
// be learned) and those whose last chunk was stored more than
// chainDuplicates before now: a driver that publishes them again (a
// resumed driver) stores every chunk again, the ids having left the
// duplicate window.
func (w *Worker) dropShares(o *ownerState, part int, drv string, b int64, now time.Time) {
	for key, a := range o.chunks {
		switch {
		case key.driver == drv && key.batch <= b:
			delete(o.chunks, key)
		case !now.IsZero() && now.Sub(a.stamp) > chainDuplicates:
			w.logf("namespace %q: owner-%d: driver %s batch %d given up: %d of its %d chunks read, the last %v before the message read now", w.st.n.ns, part, key.driver, key.batch, a.have, len(a.parts), now.Sub(a.stamp).Round(time.Second))
			delete(o.chunks, key)
		}
	}
}

// settle moves o.seq after reading the message at stream sequence seq: to
// seq, or to the sequence before the first chunk of a share not yet
// whole.
func (o *ownerState) settle(seq uint64) {
	s := max(o.seq, seq)
	for _, a := range o.chunks {
		if a.first > 0 {
			s = min(s, a.first-1)
		}
	}
	o.seq = max(o.seq, s)
}

// learnBatch runs l on driver drv's batch b, the share data (whole), then
// on its context if it has one, and publishes the batch's Step with l's
// counters less what the contexts added to them (cumulated in o.context):
// the context's samples are learned, not predicted for the driver nor
// counted; and the counts of the share's late labels (learnCounted,
// ChainStep.LabelsWaited). A batch its driver sent again (o.repeat) is
// not learned again: its answer was published when it was learned. It
// returns the Learner that learned the batch: l, or, on the first batch
// after a common start learned once (start: hdrStart), the Learner the
// owner forked from partition 0's state (Worker.fork).
func (w *Worker) learnBatch(ctx context.Context, l *stages.Learner, o *ownerState, part int, drv string, b int64, start bool, data []byte) (*stages.Learner, error) {
	if o.repeat(drv, b) {
		return l, nil
	}
	var err error
	if start {
		if l, err = w.fork(ctx, l, o, part, drv); err != nil {
			return l, err
		}
	}
	f, fc, err := decodeShare(data)
	if err != nil {
		return l, badMessage("driver %s batch %d: %v", drv, b, err)
	}
	st, lc, err := learnCounted(l, f, fc, &o.context)
	if err != nil {
		return l, corrupt("driver %s batch %d: %v", drv, b, err)
	}
	o.last[drv] = b
	o.batches++
	c := subCounters(l.Counters(), o.context)
	c.Offset = l.Counters().Offset
	// The sparse confusion (ConfusionCells) and Scores cost O(classes +
	// nonzero cells) a batch, where the dense one grew with the square of
	// the classes.
	answer, err := encodeStepLabels(st, c, l.Scores(), l.ConfusionCells(), l.Pending(), lc)
	if err != nil {
		return l, err
	}
	// Counted as learned before the answer goes out: a driver that has all
	// its answers may stop the workers at once, and their summaries must
	// hold every batch it was answered for.
	w.mu.Lock()
	w.stats.Rounds++
	w.stats.Samples += len(st.Predictions)
	w.mu.Unlock()
	msg := &nats.Msg{Subject: w.st.n.predSubject(drv), Header: nats.Header{}, Data: answer}
	msg.Header.Set(hdrBatch, strconv.FormatInt(b, 10))
	msg.Header.Set(hdrPart, strconv.Itoa(part))
	return l, publishChunked(ctx, w.js, msg, chainMsgID(drv, b, part))
}

// learnCounted is learnShare, and the counts of the share's late labels:
// those that waited for their sample when applied (stages.Step.Waited),
// the ids among them whose label still waits after the share
// (stages.Learner.StillWaiting), and the waiting labels l forgot meanwhile
// (the growth of stages.Learner.ForgottenLabels, over the share and its
// context): ChainStep.LabelsWaited, LabelsWaiting and LabelsForgotten.
func learnCounted(l *stages.Learner, f, fc *stages.Features, ctxCounts *stages.Counters) (*stages.Step, labelCounts, error) {
	forgot := l.ForgottenLabels()
	st, err := learnShare(l, f, fc, ctxCounts)
	if err != nil {
		return nil, labelCounts{}, err
	}
	return st, labelCounts{Waited: len(st.Waited), Waiting: l.StillWaiting(st.Waited), Forgotten: l.ForgottenLabels() - forgot}, nil
}

// ReplacedLabel is a late label that waited for its sample and that a
// later label of the same id, which waited too, replaced in the same
// batch (one label waits per id), as serve lists it among a request's
// rejects.
type ReplacedLabel = stages.ReplacedLabel

// labelCounts is what an owner counted of a batch's late labels: the
// fields of ChainStep of the same names, less "Labels".
type labelCounts struct {
	Waited, Waiting int
	Forgotten       int64
}

// learnShare runs l on the share f and its context fc (nil for none) and
// returns the share's Step; it adds to ctxCounts what fc added to l's
// counters. While l knows no class, f and fc are learned in offset order
// in runs (learnInRuns): f's samples after the stream's first label are
// predicted with it (else an owner whose share holds no label yet answers
// none where the stream has labels: issue 29), none with a label that
// comes after it. Once l knows a class and f's rows are dense of fc's
// dimension, fc's samples are merged with f's in offset order and learned
// in the same step (one factorization step per batch, as without a
// context; each sample predicted with the labels of the batch before it,
// as on one machine), their predictions removed from the Step and their
// counts, which follow from their predictions (each is labeled on
// arrival: one record, one sample, one scored label, right if its
// prediction is its label, unpredicted if it has none; none is early, as
// l knows a class), added to ctxCounts. Otherwise (sparse rows, text) fc
// is learned in a step of its own after f, its counts the difference of
// l's counters.
//
// The late labels of fc (those of common-start samples whose own partition
// is another: Router.Warm, ContextID) are applied in those runs, in offset
// order, while l knows no class, and after the step once it knows one
// (the share's samples after one in the batch are predicted without it
// there), each to its context sample if l's window still holds it (a label for a sample
// gone from the window is dropped: it could only score the context's
// prediction), and what they add to l's counters (a late label, a scored
// label) is added to ctxCounts too.
func learnShare(l *stages.Learner, f, fc *stages.Features, ctxCounts *stages.Counters) (*stages.Step, error) {
	var late []record.LateLabel
	if fc != nil && len(fc.LateLabels) > 0 {
		late = fc.LateLabels
		c := *fc
		c.LateLabels = nil
		if fc = &c; len(c.Offsets) == 0 {
			fc = nil
		}
	}
	if !l.KnowsLabel() && (fc != nil || len(late) > 0) {
		return learnInRuns(l, f, fc, late, ctxCounts)
	}
	st, err := learnShareRows(l, f, fc, ctxCounts)
	if err != nil {
		return nil, err
	}
	if err := applyContextLabels(l, late, ctxCounts); err != nil {
		return nil, err
	}
	return st, nil
}

// applyContextLabels applies the context's late labels late (ids under
// ContextID) to l, each only if l's window holds its sample, and adds what
// they added to l's counters to ctxCounts.
func applyContextLabels(l *stages.Learner, late []record.LateLabel, ctxCounts *stages.Counters) error {
	before := l.Counters()
	for _, ll := range late {
		if _, ok := l.Lookup(ll.ID); !ok || !isContextID(ll.ID) {
			continue
		}
		if err := l.Label(ll.ID, ll.Label); err != nil {
			return fmt.Errorf("context: %w", err)
		}
	}
	*ctxCounts = addCounters(*ctxCounts, subCounters(l.Counters(), before))
	return nil
}

// learnShareRows is learnShare without the context's late labels.
func learnShareRows(l *stages.Learner, f, fc *stages.Features, ctxCounts *stages.Counters) (*stages.Step, error) {
	if fc == nil {
		return l.LearnFeatures(f)
	}
	if !denseOf(f, fc) {
		st, err := l.LearnFeatures(f)
		if err != nil {
			return nil, err
		}
		if err := learnContext(l, fc, ctxCounts); err != nil {
			return nil, err
		}
		return st, nil
	}
	all, truth := mergeByOffset(f, model.Rows(f.X).(*mat.Dense), fc, model.Rows(fc.X).(*mat.Dense))
	st, err := l.LearnFeatures(all)
	if err != nil {
		return nil, err
	}
	n := len(fc.Offsets)
	add := stages.Counters{Records: int64(n), Samples: int64(n)}
	kept := st.Predictions[:0]
	seen := 0
	for _, p := range st.Predictions {
		lab, ok := truth[p.Offset]
		if !ok || !isContextID(p.ID) {
			kept = append(kept, p)
			continue
		}
		if seen++; !lab.labeled {
			continue
		}
		add.Labeled++
		switch p.Label {
		case lab.label:
			add.Correct++
		case "":
			add.Unpredicted++
		}
	}
	if seen != n {
		return nil, fmt.Errorf("context: %d of its %d samples predicted", seen, n)
	}
	st.Predictions = kept
	*ctxCounts = addCounters(*ctxCounts, add)
	return st, nil
}

// contextLabel is a context sample's label, if it has one.
type contextLabel struct {
	label   string
	labeled bool
}

// mergeByOffset returns the share f (dense rows fx) with its context fc
// (dense rows cx, of fx's dimension) merged in offset order, and the
// context's labels by offset. f is in offset order; fc need not be (its
// in-band samples come before the rows of its late labels, Router.Split).
// The result keeps f's late labels, rejects and unusable records.
func mergeByOffset(f *stages.Features, fx *mat.Dense, fc *stages.Features, cx *mat.Dense) (*stages.Features, map[int64]contextLabel) {
	m, d := fx.Dims()
	n, _ := cx.Dims()
	ord := make([]int, n) // fc's samples in offset order
	for j := range ord {
		ord[j] = j
	}
	slices.SortStableFunc(ord, func(a, b int) int { return cmp.Compare(fc.Offsets[a], fc.Offsets[b]) })
	all := *f
	x := mat.NewDense(m+n, d, nil)
	all.IDs = make([]string, 0, m+n)
	all.Labels = make([]string, 0, m+n)
	all.Labeled = make([]bool, 0, m+n)
	all.Offsets = make([]int64, 0, m+n)
	truth := make(map[int64]contextLabel, n)
	i, j := 0, 0
	for k := range m + n {
		if j == n || i < m && f.Offsets[i] <= fc.Offsets[ord[j]] {
			copy(x.RawRowView(k), fx.RawRowView(i))
			all.IDs, all.Labels = append(all.IDs, f.IDs[i]), append(all.Labels, f.Labels[i])
			all.Labeled, all.Offsets = append(all.Labeled, f.Labeled[i]), append(all.Offsets, f.Offsets[i])
			i++
			continue
		}
		c := ord[j]
		copy(x.RawRowView(k), cx.RawRowView(c))
		all.IDs, all.Labels = append(all.IDs, fc.IDs[c]), append(all.Labels, fc.Labels[c])
		all.Labeled, all.Offsets = append(all.Labeled, fc.Labeled[c]), append(all.Offsets, fc.Offsets[c])
		truth[fc.Offsets[c]] = contextLabel{fc.Labels[c], fc.Labeled[c]}
		j++
	}
	all.X = model.DenseRows(x)
	return &all, truth
}

// ChainStep is the owners' answer for one of a driver's batches.
type ChainStep struct {
	// Batch is the batch number, counting from 0 in Send order.
	Batch int64
	// Step is the owner's Learner's Step: its predictions in input order
	// and its rejects and duplicates. A reject's Reason is its text.
	Step *stages.Step
	// Counters, Scores and Pending are the owner's Learner's after the
	// batch (stages.Learner.Counters, Scores, Pending): with one partition,
	// the stream's.
	Counters stages.Counters
	Scores   stages.Scores
	Pending  int
	// LabelsWaited, LabelsWaiting and LabelsForgotten are the owners'
	// counts of this batch's late labels, summed over the partitions
	// (zero from an owner that writes no version-4 answers,
	// chain_answer.go): LabelsWaited the
	// labels that waited for their record when the owner applied them
	// (neither its window held their id nor an arrival prediction
	// awaited it; a later label of the same id replaces one that waits,
	// and both count), LabelsWaiting the ids of those whose label still
	// waits after the batch (one per id), and LabelsForgotten the waiting
	// labels, of this batch or earlier ones, that the owner's Learner
	// forgot, oldest first, to keep them within its horizon while it
	// learned the batch (the growth of stages.Learner.ForgottenLabels).
	// They are serve's pending and forgotten of a POST /v1/labels
	// (cmd/nmfstream/serve.go, labelsAnswer; learnCounted). With P > 1 a late label sent to every
	// partition (Router.Split: its id unknown, dense records routed by
	// anchors) is counted by every owner.
	LabelsWaited    int
	LabelsWaiting   int
	LabelsForgotten int64
	// LabelsReplaced lists the batch's late labels that waited and that a
	// later one of the same id, waiting too, replaced in the batch, by
	// offset, each once however many partitions report it (serve's
	// rejects "replaced by the later label").
	LabelsReplaced []ReplacedLabel
	// Skipped marks a batch that a resumed driver (ResumeChainDriver) had
	// received before: Step is empty and the counters zero, for the
	// answers were written by the run that received them.
	Skipped bool
}

// ChainDriver is the driver's end of the chain on the owners: Send
// publishes batches, Receive returns their answers in Send order. Send
// and Receive may be called from two goroutines (one each); neither is
// safe for concurrent use with itself.
type ChainDriver struct {
	// TrimEvery, if positive, makes Receive purge the answers of the
	// batches it has returned from the answer stream every TrimEvery
	// batches (TrimAnswers at Position), so that the stream does not grow
	// with the run. Set it before the first Receive, and only for a run
	// that will not be resumed from an earlier Position: a driver that
	// checkpoints calls TrimAnswers itself once a checkpoint is durable.
	TrimEvery int

	cfg  Config
	js   jetstream.JetStream
	n    names
	name string
	it   jetstream.MessagesContext

	kv jetstream.KeyValue // the namespace's model bucket (anchors)

	// Send's goroutine: batches sent, the records' router, the unit rows
	// gathered for the anchors until they are fixed.
	sent  int64
	route *Router
	warm  [][]float64

	// mu guards late, the late labels Send sent to every partition
	// (each counted once per partition by the owners, as a late label and
	// a record), times P−1, cumulated up to each batch not yet received.
	mu      sync.Mutex
	late    map[int64]int64
	lateSum int64

	// want is the next batch Receive returns, got the answers received of
	// it and later batches by partition, last each partition's latest
	// answer returned (Receive's goroutine).
	want int64
	got  map[int64]map[int]*wireStep
	last map[int]*wireStep
	seq  uint64 // stream sequence of the last answer read (chain_resume.go)
	// gotSeq is, by batch held in got or chunks, the least stream
	// sequence of its answers and chunks read (Position); chunks holds the
	// answers being reassembled (take).
	gotSeq map[int64]uint64
	chunks map[answerKey]*partial

	// resume is the first batch a resumed driver publishes: Send routes
	// the batches before it without publishing them, Receive returns them
	// as Skipped (ResumeChainDriver). anchorFrom is the batch from which
	// it routes with the namespace's anchors, as its predecessor did (−1:
	// a new driver); anchoredAt the first batch this driver
	// routed by anchors, −1 before (Position reads it).
	resume     int64
	anchorFrom int64
	anchoredAt atomic.Int64
}

// NewChainDriver returns a driver on cfg's namespace, routing with the
// namespace's anchors if it holds them (Anchor, Send). It stores settings as the namespace's learner settings, or, if the
// namespace holds others, fails naming the namespace. Its name, which
// keys its answers, is random.
func NewChainDriver(ctx context.Context, nc *nats.Conn, cfg Config, settings []byte) (*ChainDriver, error) {
	return newChainDriver(ctx, nc, cfg, settings, ChainPosition{Driver: strconv.FormatUint(rand.Uint64(), 36)})
}

// newChainDriver returns a driver at pos (its name, the batch it
// publishes first and the answers it reads after) on cfg's namespace,
// whose learner settings must be settings (stored if it holds none).
func newChainDriver(ctx context.Context, nc *nats.Conn, cfg Config, settings []byte, pos ChainPosition) (*ChainDriver, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	// Send waits for every share's acknowledgement. nats.go's asynchronous
	// publishes have no timeout by default: an acknowledgement lost with a
	// NATS node (kill -9 of the node the driver was connected to, issue 29)
	// left Send waiting forever, the stream stalled without an error. With
	// one, the share is published again under its message id (republish).
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(attemptWithin))
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	st, err := setup(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	if err := setupChain(ctx, js, cfg); err != nil {
		return nil, err
	}
	if err := putSettings(ctx, st.model, keyLearner, settings, cfg.namespace()); err != nil {
		return nil, err
	}
	d := &ChainDriver{cfg: cfg, js: js, n: st.n, got: map[int64]map[int]*wireStep{}, last: map[int]*wireStep{}, gotSeq: map[int64]uint64{}, chunks: map[answerKey]*partial{},
		name: pos.Driver, kv: st.model, route: NewRouter(cfg.partitions()), late: map[int64]int64{},
		resume: pos.Next, seq: pos.AnswerSeq, anchorFrom: -1}
	d.anchoredAt.Store(-1)
	d.route.Warm = cfg.warm()
	if cfg.partitions() > 1 && d.route.Warm > 0 {
		if d.route.Once, err = claimStart(ctx, st.model, d.name); err != nil {
			return nil, fmt.Errorf("distributed: namespace %q: %w", cfg.namespace(), err)
		}
	}
	if pos.Next > 0 {
		if d.anchorFrom = pos.AnchoredAt; d.anchorFrom < 0 {
			d.anchorFrom = pos.Next // routed by id up to Next
		}
	}
	if cfg.partitions() > 1 && d.anchorFrom <= 0 {
		if err := d.loadAnchors(ctx); err != nil {
			return nil, err
		}
	}
	if d.it, err = orderedFrom(ctx, js, st.n.predStream(), st.n.predSubject(d.name), pos.AnswerSeq); err != nil {
		return nil, fmt.Errorf("distributed: predictions consumer: %w", err)
	}
	return d, nil
}

// putSettings stores val under key if the bucket holds nothing there, else
// checks that it holds val.
func putSettings(ctx context.Context, kv jetstream.KeyValue, key string, val []byte, ns string) error {
	_, err := kv.Create(ctx, key, val)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("distributed: namespace %q: storing its %s settings: %w", ns, key, err)
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("distributed: namespace %q: reading its %s settings: %w", ns, key, err)
	}
	if !bytes.Equal(e.Value(), val) {
		if diff := settingsDiff(e.Value(), val); diff != "" {
			return fmt.Errorf("distributed: namespace %q holds other %s settings: %s: use its settings or another namespace", ns, key, diff)
		}
		return fmt.Errorf("distributed: namespace %q holds other %s settings than this driver's (%s, here %s): use its settings or another namespace", ns, key, e.Value(), val)
	}
	return nil
}

// settingsDiff names the top-level keys in which the JSON objects held and
// here differ, each with its value in held, then here ("absent" where it
// has none), in key order: "rank 20 here 10, window 5000 here 10000". It
// returns "" if either is not a JSON object, or if they differ only in
// their spacing or order.
func settingsDiff(held, here []byte) string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(held, &a) != nil || json.Unmarshal(here, &b) != nil || a == nil || b == nil {
		return ""
	}
	text := func(m map[string]json.RawMessage, k string) string {
		v, ok := m[k]
		if !ok {
			return "absent"
		}
		var buf bytes.Buffer
		if json.Compact(&buf, v) != nil {
			return string(v)
		}
		return buf.String()
	}
	short := func(t string) string {
		if len(t) > 80 {
			return t[:77] + "..."
		}
		return t
	}
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var diffs []string
	for _, k := range keys {
		if x, y := text(a, k), text(b, k); x != y {
			diffs = append(diffs, fmt.Sprintf("%s %s here %s", k, short(x), short(y)))
		}
	}
	return strings.Join(diffs, ", ")
}

// Send publishes f as the next batch, each partition's share to its
// owner (Router.Split: dense samples by their nearest anchor once the
// namespace has anchors, other records by id; a partition with no record
// of the batch gets an empty share, so that every owner answers every
// batch), and returns the batch's number. Until the anchors are fixed it
// reads them from the namespace before each dense batch and gathers the
// batch's rows; once it has 50·P it fixes them (as Anchor does). It
// returns once the server has stored every share.
func (d *ChainDriver) Send(ctx context.Context, f *stages.Features) (int64, error) {
	b := d.sent
	P := d.cfg.partitions()
	if d.anchorFrom >= 0 && b == d.anchorFrom && d.route.anchors == nil {
		// A resumed driver routes with the anchors from the batch its
		// predecessor did.
		if err := d.loadAnchors(ctx); err != nil {
			return 0, err
		}
	}
	if _, dense := model.Rows(f.X).(*mat.Dense); P > 1 && d.route.anchors == nil && f.X != nil && dense && (d.anchorFrom < 0 || b >= d.anchorFrom) {
		d.route.locality = true
		// Another driver of the namespace may have fixed them.
		if err := d.loadAnchors(ctx); err != nil {
			return 0, err
		}
		if d.route.anchors == nil {
			if d.warm = gather(d.warm, f, anchorsPerPartition*P); len(d.warm) >= anchorsPerPartition*P {
				if err := d.fixAnchors(ctx); err != nil {
					return 0, err
				}
			}
		}
	}
	shares, context, broadcast, err := d.route.Split(f)
	if err != nil {
		return 0, err
	}
	if d.route.anchors != nil && d.anchoredAt.Load() < 0 {
		d.anchoredAt.Store(b)
	}
	d.mu.Lock()
	d.lateSum += int64(broadcast) * int64(P-1)
	d.late[b] = d.lateSum
	d.mu.Unlock()
	if b < d.resume {
		// Received and written before the driver resumed: routed again
		// only, so that the router's state is the one the batches after
		// it were routed with.
		d.sent++
		return b, nil
	}
	if err := d.publish(ctx, b, shares, context); err != nil {
		return 0, err
	}
	d.sent++
	return b, nil
}

// publish publishes batch b's shares and their contexts (Router.Split),
// each in chunks when it is larger than the connection carries
// (splitMsg), and returns once the server has stored every message,
// publishing again under its id any whose publish failed (republish).
func (d *ChainDriver) publish(ctx context.Context, b int64, shares, context []*stages.Features) error {
	type sent struct {
		fut jetstream.PubAckFuture
		p   int
		id  string
	}
	var futs []sent
	limit := d.js.Conn().MaxPayload()
	for p, sh := range shares {
		var c *stages.Features
		if context != nil {
			c = context[p]
		}
		data, err := encodeShare(sh, c)
		if err != nil {
			return err
		}
		msg := &nats.Msg{Subject: d.n.batchSubject(p), Header: nats.Header{}, Data: data}
		msg.Header.Set(hdrDriver, d.name)
		msg.Header.Set(hdrBatch, strconv.FormatInt(b, 10))
		if d.route.Forks() {
			msg.Header.Set(hdrStart, strconv.Itoa(d.route.StartBatches()))
		}
		msgs, ids := splitMsg(msg, chainMsgID(d.name, b, p), limit)
		for i, m := range msgs {
			f, err := d.js.PublishMsgAsync(m, jetstream.WithMsgID(ids[i]))
			if err != nil {
				return fmt.Errorf("distributed: publishing batch %d to partition %d (%d bytes in %d messages): %w", b, p, len(data), len(msgs), err)
			}
			futs = append(futs, sent{f, p, ids[i]})
		}
	}
	for _, f := range futs {
		select {
		case <-f.fut.Ok():
		case err := <-f.fut.Err():
			if err := d.republish(ctx, f.fut.Msg(), f.id, err); err != nil {
				return fmt.Errorf("distributed: publishing batch %d to partition %d: %w", b, f.p, err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Receive returns the answer of the next batch in Send order, once every
// partition's owner has answered it, waiting until ctx ends: the
// predictions of every partition in input order (by offset), the rejects
// and duplicates likewise, and the counters summed over the partitions
// (each owner's after its share of the batch). An answer that cannot be
// decoded is an error naming its batch.
func (d *ChainDriver) Receive(ctx context.Context) (*ChainStep, error) {
	P := d.cfg.partitions()
	if b := d.want; b < d.resume {
		d.want++
		d.mu.Lock()
		delete(d.late, b)
		d.mu.Unlock()
		return &ChainStep{Batch: b, Step: &stages.Step{}, Skipped: true}, nil
	}
	for {
		if parts := d.got[d.want]; len(parts) == P {
			delete(d.got, d.want)
			delete(d.gotSeq, d.want)
			for k := range d.chunks {
				if k.b <= d.want { // a second answer's chunks, of a batch answered
					delete(d.chunks, k)
				}
			}
			d.want++
			if d.TrimEvery > 0 && d.want%int64(d.TrimEvery) == 0 {
				// Best effort: what a failed purge leaves, the next one takes.
				_ = d.TrimAnswers(ctx, d.Position())
			}
			return d.merge(d.want-1, parts), nil
		}
		m, err := d.next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("distributed: waiting for batch %d: %w", d.want, err)
		}
		if err := d.take(m); err != nil {
			return nil, err
		}
	}
}

// take keeps the answer message m (Receive's goroutine): a whole answer in
// got, a chunk (chunkOf) in chunks until every chunk of its answer is
// read, the answer then decoded whole. An answer or chunk of a batch
// returned already, or written before a resume, or of an answer held
// already (a replaying owner's second one) is dropped. What it holds while
// reassembling is the chunks read of the answers not yet whole, of the
// batches in flight (sent, not yet returned by Receive); gotSeq counts
// every chunk read, so that a Position never lies after one of a batch not
// returned.
func (d *ChainDriver) take(m jetstream.Msg) error {
	P := d.cfg.partitions()
	h := m.Headers()
	b, err1 := strconv.ParseInt(h.Get(hdrBatch), 10, 64)
	p, err2 := strconv.Atoi(h.Get(hdrPart))
	if err1 != nil || err2 != nil || p < 0 || p >= P {
		return corrupt("answer on %s without a batch number and a partition below %d (%q, %q)", m.Subject(), P, h.Get(hdrBatch), h.Get(hdrPart))
	}
	if b < d.want || b < d.resume || d.got[b][p] != nil {
		return nil // a replaying owner's second answer, or one written before a resume
	}
	if s, ok := d.gotSeq[b]; !ok || d.seq < s {
		d.gotSeq[b] = d.seq
	}
	data := m.Data()
	i, n, err := chunkOf(h)
	if err != nil {
		return fmt.Errorf("batch %d partition %d: %w", b, p, err)
	}
	if n > 0 {
		key := answerKey{b, p}
		a := d.chunks[key]
		if a == nil {
			a = newPartial(n)
			d.chunks[key] = a
		} else if len(a.parts) != n {
			return corrupt("batch %d partition %d: chunk %d of %d, after chunks of %d", b, p, i, n, len(a.parts))
		}
		var done bool
		if data, done = a.add(i, data, d.seq, time.Time{}); !done {
			return nil
		}
		delete(d.chunks, key)
	}
	w, err := decodeStep(data)
	if err != nil {
		return fmt.Errorf("batch %d partition %d: %w", b, p, err)
	}
	if d.got[b] == nil {
		d.got[b] = map[int]*wireStep{}
	}
	d.got[b][p] = w
	return nil
}

// answerKey names partition p's answer of batch b.
type answerKey struct {
	b int64
	p int
}

// splitFeatureless returns the predictions of preds that are not at a
// reject's offset, and those that are: an owner's predictions of records
// without features (stages.Step.Featureless), which travel with its
// samples'. Both keep preds' order.
func splitFeatureless(preds []stages.Prediction, rejects []record.Reject) (samples, featureless []stages.Prediction) {
	if len(rejects) == 0 {
		return preds, nil
	}
	at := make(map[int64]bool, len(rejects))
	for _, r := range rejects {
		at[r.Offset] = true
	}
	samples = preds[:0:0]
	for _, p := range preds {
		if at[p.Offset] {
			featureless = append(featureless, p)
		} else {
			samples = append(samples, p)
		}
	}
	return samples, featureless
}

// merge assembles batch b's answer from every partition's.
func (d *ChainDriver) merge(b int64, parts map[int]*wireStep) *ChainStep {
	st := &stages.Step{}
	out := &ChainStep{Batch: b, Step: st}
	for p := range len(parts) {
		w := parts[p]
		for i := range w.IDs {
			st.Predictions = append(st.Predictions, stages.Prediction{ID: w.IDs[i], Offset: w.Offsets[i], Label: w.Labels[i], Score: w.Scores[i], Node: -1})
		}
		st.Rejects = append(st.Rejects, rejectsFromWire(w.Rejects)...)
		st.Duplicates = append(st.Duplicates, w.Duplicates...)
		out.LabelsWaited += w.LabelsWaited
		out.LabelsWaiting += w.LabelsWaiting
		out.LabelsForgotten += w.LabelsForgotten
		out.LabelsReplaced = append(out.LabelsReplaced, w.LabelsReplaced...)
		d.last[p] = w
	}
	slices.SortStableFunc(st.Predictions, func(a, b stages.Prediction) int { return cmp.Compare(a.Offset, b.Offset) })
	slices.SortStableFunc(st.Rejects, func(a, b record.Reject) int { return cmp.Compare(a.Offset, b.Offset) })
	st.Predictions, st.Featureless = splitFeatureless(st.Predictions, st.Rejects)
	slices.Sort(st.Duplicates)
	// A label sent to every partition is reported by each.
	slices.SortStableFunc(out.LabelsReplaced, func(a, b ReplacedLabel) int { return cmp.Compare(a.Offset, b.Offset) })
	out.LabelsReplaced = slices.CompactFunc(out.LabelsReplaced, func(a, b ReplacedLabel) bool { return a.Offset == b.Offset })
	// The confusions add by class name, only each class's sums kept: the
	// scores of their dense sum (stages.Confusion.Add), to the bit, without
	// making it. An answer's confusion, read as its cells
	// (answerReader.confusion), adds in O(classes + cells); an older
	// owner's dense one in O(classes²).
	var conf stages.ConfusionSum
	for _, p := range slices.Sorted(maps.Keys(d.last)) { // partition order: the same sums every run
		w := d.last[p]
		out.Counters = addCounters(out.Counters, w.Counters)
		out.Pending += w.Pending
		conf.Add(w.Confusion)
	}
	out.Scores = conf.Scores() // NaN before a scored sample
	d.mu.Lock()
	out.Counters.LateLabels -= d.late[b]
	out.Counters.Records -= d.late[b]
	delete(d.late, b)
	d.mu.Unlock()
	if len(d.last) == 1 && len(d.last[0].Confusion.Classes) == 0 {
		// An owner of before 2026-11-29 sends its scores but not the
		// counts behind them; Majority is not on the wire.
		out.Scores = d.last[0].Scored
		out.Scores.Majority = math.NaN()
	}
	return out
}

// addCounters returns the sum of two owners' counters: every count adds;
// Offset is the larger.
func addCounters(a, b stages.Counters) stages.Counters {
	return stages.Counters{
		Records: a.Records + b.Records, Samples: a.Samples + b.Samples, Rejected: a.Rejected + b.Rejected,
		Duplicates: a.Duplicates + b.Duplicates, LateLabels: a.LateLabels + b.LateLabels, Labeled: a.Labeled + b.Labeled,
		Correct: a.Correct + b.Correct, Unpredicted: a.Unpredicted + b.Unpredicted, Early: a.Early + b.Early,
		Unlearned: a.Unlearned + b.Unlearned, Offset: max(a.Offset, b.Offset),
	}
}

// subCounters returns a − b, count by count; Offset is a's.
func subCounters(a, b stages.Counters) stages.Counters {
	return stages.Counters{
		Records: a.Records - b.Records, Samples: a.Samples - b.Samples, Rejected: a.Rejected - b.Rejected,
		Duplicates: a.Duplicates - b.Duplicates, LateLabels: a.LateLabels - b.LateLabels, Labeled: a.Labeled - b.Labeled,
		Correct: a.Correct - b.Correct, Unpredicted: a.Unpredicted - b.Unpredicted, Early: a.Early - b.Early,
		Unlearned: a.Unlearned - b.Unlearned, Offset: a.Offset,
	}
}

// Close stops the driver's consumer.
func (d *ChainDriver) Close() { d.it.Stop() }

// Anchor fixes the namespace's anchors (distributed/DESIGN.md, "Locality")
// from the dense samples of fs, the first batches of the stream, before
// they are sent: it gathers up to 50·P unit rows, chooses the anchors
// (ChooseAnchors) if it has at least P, and stores them unless the
// namespace holds anchors already, which it then uses. It does nothing
// with one partition, when the driver has anchors, or when fs has fewer
// than P nonzero dense rows (Send then gathers them from the batches it
// sends, routing by the id hash until it has 50·P). Call it from Send's
// goroutine, before the first Send.
func (d *ChainDriver) Anchor(ctx context.Context, fs []*stages.Features) error {
	P := d.cfg.partitions()
	if P <= 1 || d.route.anchors != nil {
		return nil
	}
	for _, f := range fs {
		d.warm = gather(d.warm, f, anchorsPerPartition*P)
	}
	if len(d.warm) < P {
		return nil
	}
	return d.fixAnchors(ctx)
}

// Warm returns the common start the driver shares (Router.Warm): the
// number of its first unlabeled dense samples sent to every partition.
func (d *ChainDriver) Warm() int { return d.route.Warm }

// StartLen returns how many of fs, the batches it will send next, are
// batches of its common start learned once (Router.Once, StartLen): the
// batches after them, whose owners have forked, may be larger without
// changing a prediction made from the common start (stream --nats merges
// them, distributed/DESIGN.md, "A common start"). Call it from Send's
// goroutine.
func (d *ChainDriver) StartLen(fs []*stages.Features) int { return d.route.StartLen(fs) }

// ShortStream tells the driver that its whole stream holds samples
// samples: the common start is then at most half of them (Router.Warm =
// min(Warm, samples/2)), so that a stream shorter than twice the common
// start is not learned whole by every owner (distributed/DESIGN.md, "A
// common start"). Call it from Send's goroutine, before the first Send.
func (d *ChainDriver) ShortStream(samples int) {
	d.route.Warm = min(d.route.Warm, max(samples, 0)/2)
}

// fixAnchors chooses anchors from the gathered rows and stores them in the
// namespace, first writer wins, then routes with the namespace's.
func (d *ChainDriver) fixAnchors(ctx context.Context) error {
	x := mat.NewDense(len(d.warm), len(d.warm[0]), nil)
	for i, v := range d.warm {
		copy(x.RawRowView(i), v)
	}
	d.warm = nil
	a, err := ChooseAnchors(x, d.cfg.partitions())
	if err != nil {
		return err
	}
	if _, err := d.kv.Create(ctx, keyAnchors, encodeAnchors(a)); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("distributed: namespace %q: storing its anchors: %w", d.cfg.namespace(), err)
	}
	return d.loadAnchors(ctx)
}

// loadAnchors routes with the namespace's anchors, if it holds any.
func (d *ChainDriver) loadAnchors(ctx context.Context) error {
	e, err := d.kv.Get(ctx, keyAnchors)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("distributed: namespace %q: reading its anchors: %w", d.cfg.namespace(), err)
	}
	a, err := decodeAnchors(e.Value())
	if err == nil {
		err = d.route.SetAnchors(a)
	}
	if err != nil {
		return corrupt("namespace %q: anchors: %v", d.cfg.namespace(), err)
	}
	return nil
}

// Shares returns the number of samples this driver sent to each partition
// so far. Call it from Send's goroutine, or once Send is done.
func (d *ChainDriver) Shares() []int64 { return d.route.Shares() }
