package distributed

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/sparse"
)

// owner is the state of one partition while this instance holds it: the
// partition's samples in stream order, their codes, and the position of
// its delta log.
type owner struct {
	w *Worker
	p int

	mu      sync.RWMutex // guards rows and codes against the k-NN responder
	rows    []Sample
	codes   [][]float64
	n       uint64 // deltas published
	round   uint64 // next round
	covered uint64 // last sample-stream sequence in rows
	lastSeq uint64 // stream sequence of the last delta on the subject
	cursor  int    // next row to refresh
	pending []seqSample
	in      jetstream.Consumer // samples of p after covered
}

type seqSample struct {
	seq uint64
	s   Sample
}

// own does partition p's work while the role is held.
func (w *Worker) own(ctx context.Context, pn *pin, p int) error {
	o := &owner{w: w, p: p}
	if err := o.restore(ctx); err != nil {
		return err
	}
	sub, err := w.nc.Subscribe(w.st.n.knnSubject(p), o.answer)
	if err != nil {
		return fmt.Errorf("distributed: partition %d: %w", p, err)
	}
	defer sub.Unsubscribe()
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
		if added == 0 && w.cfg.Rounds == 0 && !sleep(ctx, w.cfg.idle()) {
			return nil
		}
	}
	return nil
}

// restore rebuilds the partition's state: the last snapshot, the deltas
// published after it, and the samples they cover.
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
		d, err := decodeDelta(m.Data())
		if err != nil {
			return true, corrupt("partition %d: %v", o.p, err)
		}
		if d.N != o.n+1 || d.K != k {
			return true, corrupt("partition %d: delta %d of rank %d after delta %d", o.p, d.N, d.K, o.n)
		}
		for i, r := range d.Rows {
			for r >= len(o.codes) {
				o.codes = append(o.codes, make([]float64, k))
			}
			copy(o.codes[r], d.Codes[i*k:(i+1)*k])
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
	if o.covered > 0 {
		sc, err := st.js.OrderedConsumer(ctx, st.n.samples, jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResets, FilterSubjects: []string{st.n.sampleSubject(o.p)}})
		if err != nil {
			return err
		}
		err = drain(sc, func(m jetstream.Msg) (bool, error) {
			meta, err := m.Metadata()
			if err != nil {
				return true, err
			}
			if meta.Sequence.Stream > o.covered {
				return true, nil
			}
			s, err := decodeSample(m.Data())
			if err != nil {
				return true, corrupt("sample at sequence %d: %v", meta.Sequence.Stream, err)
			}
			rows = append(rows, s)
			return meta.Sequence.Stream == o.covered, nil
		})
		if err != nil {
			return err
		}
	}
	if len(rows) != len(o.codes) {
		return corrupt("partition %d: %d samples up to sequence %d but %d codes in its deltas", o.p, len(rows), o.covered, len(o.codes))
	}
	o.mu.Lock()
	o.rows = rows
	o.mu.Unlock()
	o.in, err = st.js.OrderedConsumer(ctx, st.n.samples, jetstream.OrderedConsumerConfig{
		MaxResetAttempts: maxResets,
		FilterSubjects:   []string{st.n.sampleSubject(o.p)},
		DeliverPolicy:    jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:      o.covered + 1,
	})
	return err
}

// ingest moves the samples of the partition with stream sequence ≤ cut
// into new rows, and returns how many it added.
func (o *owner) ingest(cut uint64) ([]Sample, uint64, error) {
	var add []Sample
	covered := o.covered
	keep := o.pending[:0]
	for _, ps := range o.pending {
		if ps.seq <= cut {
			add, covered = append(add, ps.s), ps.seq
		} else {
			keep = append(keep, ps)
		}
	}
	o.pending = keep
	if len(o.pending) > 0 {
		return add, covered, nil
	}
	err := drain(o.in, func(m jetstream.Msg) (bool, error) {
		meta, err := m.Metadata()
		if err != nil {
			return true, err
		}
		s, err := decodeSample(m.Data())
		if err != nil {
			return true, corrupt("sample at sequence %d: %v", meta.Sequence.Stream, err)
		}
		if seq := meta.Sequence.Stream; seq <= cut {
			add, covered = append(add, s), seq
		} else {
			o.pending = append(o.pending, seqSample{seq, s})
		}
		return false, nil
	})
	return add, covered, err
}

// step runs one round on basis b: codes the new samples, sweeps older
// codes and publishes the delta. It returns the number of samples added.
func (o *owner) step(ctx context.Context, b *basis) (int, error) {
	cfg := o.w.cfg
	k := cfg.Rank
	add, covered, err := o.ingest(b.SampleSeq)
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
	// The older rows to sweep.
	var swept []int
	old := len(o.rows)
	if cfg.Refresh == 0 || cfg.Refresh >= old {
		for i := range old {
			swept = append(swept, i)
		}
	} else {
		for range cfg.Refresh {
			swept = append(swept, o.cursor%old)
			o.cursor = (o.cursor + 1) % old
		}
	}
	var da, db mat.Dense
	dl := &delta{Part: o.p, N: o.n + 1, Round: o.round, Version: b.Version, Covered: max(covered, o.covered), Added: len(add), D: d, K: k}
	newCodes := make([][]float64, 0, len(swept)+len(add))
	if len(swept) > 0 {
		xs := make([]*Sample, len(swept))
		vold := mat.NewDense(len(swept), k, nil)
		for i, r := range swept {
			xs[i] = &o.rows[r]
			vold.SetRow(i, o.codes[r])
		}
		x := blockData(xs)
		vnew := mat.DenseCopyOf(vold)
		if err := model.SweepRows(vnew, x, b.U, cfg.sweeps()); err != nil {
			return 0, corrupt("partition %d: %v", o.p, err)
		}
		model.AddStats(&db, &da, x, vnew, 1)
		model.AddStats(&db, &da, x, vold, -1)
		for i, r := range swept {
			dl.Rows = append(dl.Rows, r)
			newCodes = append(newCodes, vnew.RawRowView(i))
		}
	}
	if len(add) > 0 {
		xs := make([]*Sample, len(add))
		for i := range add {
			xs[i] = &add[i]
			dl.IDSum += add[i].ID
		}
		x := blockData(xs)
		v := mat.NewDense(len(add), k, nil)
		for i := range v.RawMatrix().Data {
			v.RawMatrix().Data[i] = 1
		}
		if err := model.SweepRows(v, x, b.U, cfg.initSweeps()); err != nil {
			return 0, corrupt("partition %d: %v", o.p, err)
		}
		model.AddStats(&db, &da, x, v, 1)
		for i := range add {
			dl.Rows = append(dl.Rows, old+i)
			newCodes = append(newCodes, v.RawRowView(i))
		}
	}
	if !da.IsEmpty() {
		dl.A = da.RawMatrix().Data
		for i := range d {
			row := db.RawRowView(i)
			nz := false
			for _, x := range row {
				nz = nz || x != 0
			}
			if nz {
				dl.BRows = append(dl.BRows, i)
				dl.B = append(dl.B, row...)
			}
		}
	} else {
		dl.A = make([]float64, k*k)
	}
	for _, c := range newCodes {
		dl.Codes = append(dl.Codes, c...)
	}
	ack, err := o.w.js.Publish(ctx, o.w.st.n.deltaSubject(o.p), encodeDelta(dl),
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
	o.mu.Lock()
	o.rows = append(o.rows, add...)
	for i, r := range dl.Rows {
		if r < old {
			o.codes[r] = newCodes[i]
		} else {
			o.codes = append(o.codes, newCodes[i])
		}
	}
	o.mu.Unlock()
	o.n, o.round, o.covered, o.lastSeq = dl.N, o.round+1, dl.Covered, ack.Sequence
	o.w.mu.Lock()
	o.w.stats.Rounds++
	o.w.stats.Samples += len(add)
	o.w.mu.Unlock()
	if o.round%uint64(cfg.snapshotEvery()) == 0 {
		// A failed snapshot costs a longer replay, nothing else.
		o.w.st.snaps.PutBytes(ctx, fmt.Sprintf("owner-%d", o.p), o.encodeSnapshot())
	}
	return len(add), nil
}

// reset drops the state and rebuilds it from the logs.
func (o *owner) reset(ctx context.Context) error {
	o.mu.Lock()
	o.rows, o.codes = nil, nil
	o.mu.Unlock()
	o.n, o.round, o.covered, o.lastSeq, o.cursor = 0, 0, 0, 0, 0
	return o.restore(ctx)
}

func (o *owner) encodeSnapshot() []byte {
	var e enc
	e.u8(tagOwner)
	e.u64(o.n)
	e.u64(o.round)
	e.u64(o.covered)
	e.u64(o.lastSeq)
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
	n, round, covered, last := d.u64(), d.u64(), d.u64(), d.u64()
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
	o.n, o.round, o.covered, o.lastSeq, o.codes = n, round, covered, last, codes
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
	m := sparse.Zeros(0, d)
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
	return model.SparseRows(m)
}

// answer replies to a k-NN request with the partition's nearest samples.
func (o *owner) answer(msg *nats.Msg) {
	k, q, err := decodeKNNRequest(msg.Data)
	if err != nil {
		msg.Respond(nil)
		return
	}
	o.mu.RLock()
	best := nearest(o.rows, &q, k)
	o.mu.RUnlock()
	msg.Respond(encodeNeighbors(best))
}

// sqDistSample returns ‖a − b‖².
func sqDistSample(a, b *Sample) float64 {
	da, db := denseOf(a), denseOf(b)
	var s float64
	for j := range min(len(da), len(db)) {
		x := da[j] - db[j]
		s += x * x
	}
	return s + tailSq(da, len(db)) + tailSq(db, len(da))
}

func tailSq(a []float64, from int) float64 {
	var s float64
	for j := from; j < len(a); j++ {
		s += a[j] * a[j]
	}
	return s
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
