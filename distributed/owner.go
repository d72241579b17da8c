package distributed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// owner is the state of one partition while this instance holds it: the
// partition's live samples in stream order (the last Config.Window of
// them), their labels and codes, their k-NN graph when the owner learns
// GNMF, and the position of its delta log. A sample's index is its place
// among the partition's samples from the first (0, 1, …); deltas name
// rows by index, so rows that leave the window do not renumber the rest.
type owner struct {
	w *Worker
	p int

	mu      sync.RWMutex // guards rows (and their labels) and byID against State readers
	rows    []Sample
	codes   [][]float64
	base    uint64            // index of rows[0]
	byID    map[uint64]uint64 // index of each live sample, by ID
	g       *graph.Graph      // k-NN graph of the live samples (Alpha > 0)
	dense   bool              // g stores dense rows (the first sample's kind)
	slots   []int             // graph node of each live row
	index   []uint64          // index of the sample at each graph node
	n       uint64            // deltas published
	round   uint64            // next round
	covered uint64            // last sample-stream sequence in rows
	lastSeq uint64            // stream sequence of the last delta on the subject
	cursor  int               // next row to refresh
	lag     int               // consecutive rounds the consumer lagged the subject
	pending []seqRecord
	in      jetstream.Consumer // samples of p after covered
}

// seqRecord is a message of the samples stream read ahead of the round
// that takes it: a sample, or a late label.
type seqRecord struct {
	seq   uint64
	s     Sample
	label bool
}

// own does partition p's work while the role is held.
func (w *Worker) own(ctx context.Context, pn *pin, p int) error {
	o := &owner{w: w, p: p}
	if err := o.restore(ctx); err != nil {
		return err
	}
	// arrived is signalled when a sample or label for p is published, so
	// that an owner idle between empty rounds takes it at once rather than
	// after a fixed pause; the callback never blocks.
	arrived := make(chan struct{}, 1)
	news, err := w.nc.Subscribe(w.st.n.sampleSubject(p), func(*nats.Msg) {
		select {
		case arrived <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return fmt.Errorf("distributed: partition %d: %w", p, err)
	}
	defer news.Unsubscribe()
	s := int64(w.cfg.Staleness)
	for ctx.Err() == nil && pn.held() {
		if w.cfg.Rounds > 0 && o.round >= uint64(w.cfg.Rounds) {
			if !sleep(ctx, w.cfg.pinnedTTL()/4) {
				return nil
			}
			continue
		}
		b := w.waitBasis(ctx, pn, int64(o.round)-s)
		if b == nil {
			return nil
		}
		added, err := o.step(ctx, b)
		if err != nil {
			return err
		}
		if added == 0 && w.cfg.Rounds == 0 && !idle(ctx, arrived, w.cfg.idle()) {
			return nil
		}
	}
	return nil
}

// idle waits until something arrives, d passes (an empty round still
// refreshes older codes) or ctx ends, and reports whether ctx is live.
func idle(ctx context.Context, arrived <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-arrived:
		return true
	case <-t.C:
		return true
	}
}

// restore rebuilds the partition's state: the last snapshot, the deltas
// published after it, the samples and labels they cover, and the k-NN
// graph of the live samples.
func (o *owner) restore(ctx context.Context) error {
	st := o.w.st
	k := o.w.cfg.Rank
	if raw, err := st.snaps.GetBytes(ctx, fmt.Sprintf("owner-%d", o.p)); err == nil {
		if err := o.decodeSnapshot(raw); err != nil {
			return corrupt("snapshot of partition %d: %v", o.p, err)
		}
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResets, FilterSubjects: []string{st.n.deltaSubject(o.p)}}
	if o.lastSeq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.lastSeq+1
	}
	dc, err := st.js.OrderedConsumer(ctx, st.n.deltas, cfg)
	if err != nil {
		return err
	}
	err = drain(dc, func(m jetstream.Msg) (bool, error) {
		raw, err := st.resolve(ctx, m.Data())
		if err != nil {
			return true, err
		}
		d, err := decodeDelta(raw)
		if err != nil {
			return true, corrupt("partition %d: %v", o.p, err)
		}
		if d.N != o.n+1 || d.K != k {
			return true, corrupt("partition %d: delta %d of rank %d after delta %d", o.p, d.N, d.K, o.n)
		}
		// Rows leave first, then the changed rows follow (see step).
		gone := min(d.Removed, len(o.codes))
		o.codes = o.codes[gone:]
		o.base += uint64(d.Removed)
		for i, r := range d.Rows {
			if uint64(r) < o.base {
				return true, corrupt("partition %d: delta %d changes row %d, before the window's first %d", o.p, d.N, r, o.base)
			}
			at := int(uint64(r) - o.base)
			for at >= len(o.codes) {
				o.codes = append(o.codes, make([]float64, k))
			}
			copy(o.codes[at], d.Codes[i*k:(i+1)*k])
		}
		meta, err := m.Metadata()
		if err != nil {
			return true, err
		}
		o.n, o.round, o.covered, o.lastSeq = d.N, d.Round+1, d.Covered, meta.Sequence.Stream
		return false, nil
	})
	if err != nil {
		return err
	}
	var rows []Sample
	byID := map[uint64]uint64{}
	if o.covered > 0 {
		sc, err := st.js.OrderedConsumer(ctx, st.n.samples, jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResets, FilterSubjects: []string{st.n.sampleSubject(o.p)}})
		if err != nil {
			return err
		}
		var index uint64 // of the next sample
		err = drain(sc, func(m jetstream.Msg) (bool, error) {
			meta, err := m.Metadata()
			if err != nil {
				return true, err
			}
			if meta.Sequence.Stream > o.covered {
				return true, nil
			}
			s, isLabel, err := decodeRecord(m.Data())
			if err != nil {
				return true, corrupt("record at sequence %d: %v", meta.Sequence.Stream, err)
			}
			switch {
			case isLabel:
				if i, ok := byID[s.ID]; ok {
					rows[i-o.base].Label = s.Label
				}
			case index >= o.base:
				byID[s.ID] = index
				rows = append(rows, s)
				index++
			default:
				index++
			}
			return meta.Sequence.Stream == o.covered, nil
		})
		if err != nil {
			return err
		}
	}
	if len(rows) != len(o.codes) {
		return corrupt("partition %d: %d samples in the window up to sequence %d but %d codes in its deltas", o.p, len(rows), o.covered, len(o.codes))
	}
	o.g, o.slots, o.index = nil, nil, nil
	if o.w.cfg.Alpha > 0 && len(rows) > 0 {
		if _, err := o.insert(rows); err != nil {
			return corrupt("partition %d: %v", o.p, err)
		}
	}
	o.mu.Lock()
	o.rows, o.byID = rows, byID
	o.mu.Unlock()
	o.in, err = st.js.OrderedConsumer(ctx, st.n.samples, jetstream.OrderedConsumerConfig{
		MaxResetAttempts: maxResets,
		FilterSubjects:   []string{st.n.sampleSubject(o.p)},
		DeliverPolicy:    jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:      o.covered + 1,
	})
	return err
}

// insert adds the samples, the newest of the partition, to the k-NN graph
// (creating it on the first), the first of them having index
// o.base+len(o.slots), and returns the change.
func (o *owner) insert(add []Sample) (graph.Change, error) {
	if o.g == nil {
		var err error
		knn := graph.KNN{K: o.w.cfg.graphK()}
		o.dense = add[0].Dense != nil
		if o.dense {
			o.g, err = knn.NewDense(add[0].Dim)
		} else {
			// Sparse rows (TF-IDF) are compared by angle, as
			// graph.KNN.Sparse suggests; on l2-normalized rows cosine
			// and Euclidean rank neighbours alike.
			knn.Metric = graph.Cosine
			o.g, err = knn.NewSparse(add[0].Dim)
		}
		if err != nil {
			return graph.Change{}, err
		}
	}
	var ch graph.Change
	var err error
	if o.dense {
		m := mat.NewDense(len(add), add[0].Dim, nil)
		for i := range add {
			m.SetRow(i, denseOf(&add[i]))
		}
		ch, err = o.g.InsertDense(m)
	} else {
		xs := make([]*Sample, len(add))
		for i := range add {
			xs[i] = &add[i]
		}
		ch, err = o.g.InsertSparse(sparseOf(xs))
	}
	if err != nil {
		return ch, err
	}
	first := o.base + uint64(len(o.slots))
	for i, id := range ch.Added {
		for id >= len(o.index) {
			o.index = append(o.index, 0)
		}
		o.index[id] = first + uint64(i)
	}
	o.slots = append(o.slots, ch.Added...)
	return ch, nil
}

// weights returns the graph's 0-1 weights, symmetrized by max (Cai et
// al.'s), between the live rows in row order (n×n).
func (o *owner) weights() *sparse.CSR {
	w := o.g.Weights(graph.Weighting{})
	n := len(o.slots)
	indptr := make([]int, 1, n+1)
	var ind []int
	var val []float64
	for _, slot := range o.slots {
		js, vs := w.Row(slot)
		from := len(ind)
		for q, j := range js {
			ind, val = append(ind, int(o.index[j]-o.base)), append(val, vs[q])
		}
		sortPairs(ind[from:], val[from:])
		indptr = append(indptr, len(ind))
	}
	return sparse.NewCSR(n, n, indptr, ind, val)
}

// sortPairs sorts ind ascending, carrying val along.
func sortPairs(ind []int, val []float64) {
	for i := 1; i < len(ind); i++ {
		for j := i; j > 0 && ind[j] < ind[j-1]; j-- {
			ind[j], ind[j-1] = ind[j-1], ind[j]
			val[j], val[j-1] = val[j-1], val[j]
		}
	}
}

// lagLimit is the number of consecutive rounds in which the owner's
// consumer delivers nothing while the partition's subject holds records
// past what it delivered, before the owner gives up the consumer and
// rebuilds from the logs (an ordered consumer can stall on a server that
// was lost).
const lagLimit = 20

// ingest moves the records of the partition with stream sequence ≤ cut
// out of the stream: the new samples and the late labels, in order, and
// the sequence of the last. held reports whether every record of the
// partition up to cut is now in: a record past cut was delivered (the
// consumer is ordered), or the subject's last record is in.
func (o *owner) ingest(ctx context.Context, cut uint64) (add, labels []Sample, covered uint64, held bool, err error) {
	covered = o.covered
	take := func(r seqRecord) {
		if r.label {
			labels = append(labels, r.s)
		} else {
			add = append(add, r.s)
		}
		covered = r.seq
	}
	keep := o.pending[:0]
	for _, r := range o.pending {
		if r.seq <= cut {
			take(r)
		} else {
			keep = append(keep, r)
		}
	}
	o.pending = keep
	if len(o.pending) > 0 {
		return add, labels, covered, true, nil
	}
	err = drain(o.in, func(m jetstream.Msg) (bool, error) {
		meta, err := m.Metadata()
		if err != nil {
			return true, err
		}
		s, isLabel, err := decodeRecord(m.Data())
		if err != nil {
			return true, corrupt("record at sequence %d: %v", meta.Sequence.Stream, err)
		}
		r := seqRecord{meta.Sequence.Stream, s, isLabel}
		if r.seq <= cut {
			take(r)
		} else {
			o.pending = append(o.pending, r)
		}
		return false, nil
	})
	if err != nil || len(o.pending) > 0 {
		o.lag = 0
		return add, labels, covered, err == nil, err
	}
	last, err := o.w.st.lastSubjectSeq(ctx, o.w.st.n.sampleSubject(o.p))
	if err != nil {
		return add, labels, covered, false, err
	}
	switch {
	case last <= covered:
		o.lag = 0
		return add, labels, covered, true, nil
	case covered > o.covered:
		o.lag = 0 // delivering, not yet past the subject's end
	default:
		// The subject holds records past covered and the consumer
		// delivered none of them.
		if o.lag++; o.lag > lagLimit {
			return add, labels, covered, false, fmt.Errorf("distributed: partition %d: the consumer delivers nothing past sequence %d, the subject holds %d", o.p, covered, last)
		}
	}
	return add, labels, covered, false, nil
}

// step runs one round on basis b: the oldest samples leave the window,
// the new ones join it (and the graph), new codes are computed, older
// codes swept, labels set, and the delta published. It returns the number
// of samples added.
//
// With Alpha > 0 the codes follow GNMF's V rule on the partition's k-NN
// graph (model.SweepGraphRows): the new rows first, from constant codes,
// with their neighbours' codes fixed, then the older rows due this round
// (all, or Refresh of them round-robin, and every row whose graph edges
// changed) with the new codes fixed.
func (o *owner) step(ctx context.Context, b *basis) (int, error) {
	cfg := o.w.cfg
	k := cfg.Rank
	add, labels, covered, held, err := o.ingest(ctx, b.SampleSeq)
	if err != nil {
		return 0, err
	}
	if b.U == nil {
		return 0, corrupt("basis version %d has no U", b.Version)
	}
	d, _ := b.U.Dims()
	for i := range add {
		if add[i].Dim != d {
			return 0, corrupt("sample %d has dimension %d, the basis %d", add[i].ID, add[i].Dim, d)
		}
	}
	dl := &delta{Part: o.p, N: o.n + 1, Round: o.round, Version: b.Version, Covered: max(covered, o.covered),
		Added: len(add), D: d, K: k, Cut: o.covered}
	if held {
		dl.Cut = max(b.SampleSeq, dl.Covered)
	}
	for i := range add {
		dl.IDSum += add[i].ID
	}
	acc := stats{k: k}
	// The window: the oldest rows leave, their part of B and A subtracted
	// with the codes they were counted with; new samples beyond the window
	// (a round larger than it) leave at once.
	old := len(o.rows)
	leave := 0
	if cfg.Window > 0 {
		leave = max(0, old+len(add)-cfg.Window)
	}
	drop := min(leave, old)
	add = add[leave-drop:]
	dl.Removed = leave
	if drop > 0 {
		xs := make([]*Sample, drop)
		vd := mat.NewDense(drop, k, nil)
		for i := range drop {
			xs[i] = &o.rows[i]
			vd.SetRow(i, o.codes[i])
		}
		acc.add(xs, vd, -1)
	}
	rows := slices.Concat(o.rows[drop:], add)
	codes := slices.Clone(o.codes[drop:])
	base := o.base + uint64(leave)
	keep := old - drop // older rows that stay: positions [0, keep)
	n := len(rows)
	for range add {
		c := make([]float64, k)
		for j := range c {
			c[j] = 1
		}
		codes = append(codes, c)
	}

	// The graph follows the window; rows whose edges changed are swept.
	changed := map[int]bool{}
	var s *sparse.CSR
	if cfg.Alpha > 0 && n > 0 {
		if drop > 0 {
			ch, err := o.g.Remove(o.slots[:drop]...)
			if err != nil {
				return 0, corrupt("partition %d: %v", o.p, err)
			}
			o.slots = o.slots[drop:]
			for _, id := range ch.Changed {
				changed[int(o.index[id]-base)] = true
			}
		}
		o.base = base
		if len(add) > 0 {
			ch, err := o.insert(add)
			if err != nil {
				return 0, corrupt("partition %d: %v", o.p, err)
			}
			for _, id := range ch.Changed {
				changed[int(o.index[id]-base)] = true
			}
		}
		s = o.weights()
	}
	o.base = base

	// The older rows to sweep.
	var swept []int
	if cfg.Refresh == 0 || cfg.Refresh >= keep {
		for i := range keep {
			swept = append(swept, i)
		}
	} else if keep > 0 {
		o.cursor %= keep
		for range cfg.Refresh {
			changed[o.cursor] = true
			o.cursor = (o.cursor + 1) % keep
		}
		for i := range changed {
			if i < keep {
				swept = append(swept, i)
			}
		}
		slices.Sort(swept)
	}
	fresh := make([]int, len(add))
	for i := range fresh {
		fresh[i] = keep + i
	}
	var xAll model.Data
	var vAll *mat.Dense
	if s != nil {
		xs := make([]*Sample, n)
		vAll = mat.NewDense(n, k, nil)
		for i := range rows {
			xs[i] = &rows[i]
			vAll.SetRow(i, codes[i])
		}
		xAll = blockData(xs)
	}
	// sweepAt sweeps the rows at pos: GNMF's rule on the whole window's
	// graph, or NMF's on those rows alone; it returns their samples and
	// their codes before and after.
	sweepAt := func(pos []int, sweeps int) ([]*Sample, *mat.Dense, *mat.Dense, error) {
		xs := make([]*Sample, len(pos))
		before := mat.NewDense(len(pos), k, nil)
		for i, r := range pos {
			xs[i] = &rows[r]
			before.SetRow(i, codes[r])
		}
		after := mat.DenseCopyOf(before)
		if s != nil {
			if err := model.SweepGraphRows(vAll, xAll, b.U, s, cfg.Alpha, pos, sweeps); err != nil {
				return nil, nil, nil, err
			}
			for i, r := range pos {
				after.SetRow(i, vAll.RawRowView(r))
			}
		} else if err := model.SweepRows(after, blockData(xs), b.U, sweeps); err != nil {
			return nil, nil, nil, err
		}
		for i, r := range pos {
			codes[r] = after.RawRowView(i)
		}
		return xs, before, after, nil
	}
	if len(fresh) > 0 {
		x, _, v, err := sweepAt(fresh, cfg.initSweeps())
		if err != nil {
			return 0, corrupt("partition %d: %v", o.p, err)
		}
		acc.add(x, v, 1)
	}
	if len(swept) > 0 {
		x, vold, vnew, err := sweepAt(swept, cfg.sweeps())
		if err != nil {
			return 0, corrupt("partition %d: %v", o.p, err)
		}
		acc.add(x, vnew, 1)
		acc.add(x, vold, -1)
	}
	for _, r := range slices.Concat(swept, fresh) {
		dl.Rows = append(dl.Rows, int(base)+r)
		dl.Codes = append(dl.Codes, codes[r]...)
	}
	acc.to(dl)

	// The new state is visible to the k-NN responder before the delta is
	// published, so that a reader who sees the coordinator apply it finds
	// it here; if the publish fails, the state is rebuilt from the log (or
	// dropped with the role).
	o.mu.Lock()
	for i := range drop {
		delete(o.byID, o.rows[i].ID)
	}
	for i := range add {
		o.byID[add[i].ID] = base + uint64(keep+i)
	}
	for _, l := range labels {
		if i, ok := o.byID[l.ID]; ok {
			rows[i-base].Label = l.Label
		}
	}
	o.rows, o.codes = rows, codes
	o.mu.Unlock()

	raw, err := o.w.offload(ctx, fmt.Sprintf("delta-%d-%d", o.p, dl.N), encodeDelta(dl))
	if err != nil {
		return 0, err
	}
	ack, err := o.w.js.Publish(ctx, o.w.st.n.deltaSubject(o.p), raw,
		jetstream.WithMsgID(fmt.Sprintf("%d.%d", o.p, dl.N)),
		jetstream.WithExpectLastSequencePerSubject(o.lastSeq))
	if err != nil {
		if isWrongLast(err) {
			return 0, errLost
		}
		// The delta may have been stored: rebuild from the log before
		// the next round (a retry of the same delta is dropped as a
		// duplicate, and a different one refused).
		o.pending = nil
		if rerr := o.reset(ctx); rerr != nil {
			return 0, rerr
		}
		return 0, nil
	}
	o.n, o.round, o.covered, o.lastSeq = dl.N, o.round+1, dl.Covered, ack.Sequence
	o.w.mu.Lock()
	o.w.stats.Rounds++
	o.w.stats.Samples += dl.Added
	o.w.mu.Unlock()
	if o.round%uint64(cfg.snapshotEvery()) == 0 {
		// A failed snapshot costs a longer replay, nothing else.
		o.w.st.snaps.PutBytes(ctx, fmt.Sprintf("owner-%d", o.p), o.encodeSnapshot())
	}
	return dl.Added, nil
}

// reset drops the state and rebuilds it from the logs.
func (o *owner) reset(ctx context.Context) error {
	o.mu.Lock()
	o.rows, o.codes, o.byID = nil, nil, map[uint64]uint64{}
	o.mu.Unlock()
	o.n, o.round, o.covered, o.lastSeq, o.cursor, o.base = 0, 0, 0, 0, 0, 0
	o.g, o.slots, o.index = nil, nil, nil
	return o.restore(ctx)
}

func (o *owner) encodeSnapshot() []byte {
	var e enc
	e.u8(tagOwner)
	e.u64(o.n)
	e.u64(o.round)
	e.u64(o.covered)
	e.u64(o.lastSeq)
	e.u64(o.base)
	e.u32(uint32(len(o.codes)))
	e.u32(uint32(o.w.cfg.Rank))
	for _, c := range o.codes {
		e.f64s(c)
	}
	return e.b
}

func (o *owner) decodeSnapshot(b []byte) error {
	d := dec{b: b}
	if d.u8() != tagOwner {
		return errors.New("not an owner snapshot")
	}
	n, round, covered, last, base := d.u64(), d.u64(), d.u64(), d.u64(), d.u64()
	r, k := int(d.u32()), int(d.u32())
	if d.err == nil && k != o.w.cfg.Rank {
		return fmt.Errorf("rank %d, want %d", k, o.w.cfg.Rank)
	}
	codes := make([][]float64, 0, min(r, len(d.b)/8+1))
	for range r {
		codes = append(codes, d.f64s(k))
		if d.err != nil {
			break
		}
	}
	if d.err != nil {
		return d.err
	}
	o.n, o.round, o.covered, o.lastSeq, o.base, o.codes = n, round, covered, last, base, codes
	return nil
}

// blockData returns the samples as the rows of a model.Data: dense if all
// are dense, else sparse.
func blockData(xs []*Sample) model.Data {
	d := xs[0].Dim
	dense := true
	for _, s := range xs {
		dense = dense && s.Dense != nil
	}
	if dense {
		m := mat.NewDense(len(xs), d, nil)
		for i, s := range xs {
			m.SetRow(i, s.Dense)
		}
		return model.DenseRows(m)
	}
	return model.SparseRows(sparseOf(xs))
}

// sparseOf returns the samples as the rows of a sparse matrix.
func sparseOf(xs []*Sample) *sparse.CSR {
	m := sparse.Zeros(0, xs[0].Dim)
	for _, s := range xs {
		if s.Dense != nil {
			var ind []int
			var val []float64
			for j, v := range s.Dense {
				if v != 0 {
					ind, val = append(ind, j), append(val, v)
				}
			}
			m.AppendRow(ind, val)
			continue
		}
		m.AppendRow(s.Index, s.Value)
	}
	return m
}

func denseOf(s *Sample) []float64 {
	if s.Dense != nil {
		return s.Dense
	}
	out := make([]float64, s.Dim)
	for i, j := range s.Index {
		out[j] = s.Value[i]
	}
	return out
}
