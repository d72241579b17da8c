package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model"
)

// coord is the coordinator's state while this instance holds the role:
// the summed statistics B and A, what it applied of each partition, and
// the basis it last published.
type coord struct {
	w       *Worker
	b, a    mat.Dense
	applied []uint64 // last delta number applied, by partition
	rounds  []int64  // last round applied, by partition (−1: none)
	cuts    []uint64 // samples-stream sequence each partition's owner holds everything up to
	lastSeq uint64   // delta-stream sequence of the last delta read
	samples uint64
	deltas  uint64
	idSum   uint64
	left    uint64
	cur     *basis
	rev     uint64   // revision of the basis key holding cur
	objs    []string // object names of the latest versions' U ("" when inline), oldest first
	in      jetstream.Consumer
}

// coordinate does the coordinator's work while the role is held.
func (w *Worker) coordinate(ctx context.Context, pn *pin) error {
	c := &coord{w: w}
	if err := c.restore(ctx, pn); err != nil {
		return err
	}
	for ctx.Err() == nil && pn.held() {
		m, err := c.in.Next(jetstream.FetchMaxWait(w.cfg.pinnedTTL() / 4))
		switch {
		case err == nil:
			if err := c.apply(ctx, m); err != nil {
				return err
			}
			if err := drain(c.in, func(m jetstream.Msg) (bool, error) { return false, c.apply(ctx, m) }); err != nil {
				return err
			}
		case errors.Is(err, jetstream.ErrMsgNotFound), errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		default:
			return err
		}
		for c.ready() {
			if err := c.step(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// restore loads the basis, the last snapshot and the deltas after it.
func (c *coord) restore(ctx context.Context, pn *pin) error {
	w := c.w
	st := w.st
	k, parts := w.cfg.Rank, w.cfg.partitions()
	c.applied = make([]uint64, parts)
	c.rounds = make([]int64, parts)
	c.cuts = make([]uint64, parts)
	for i := range c.rounds {
		c.rounds[i] = -1
	}
	for {
		e, err := st.model.Get(ctx, keyBasis)
		if err == nil {
			raw, err := st.resolve(ctx, e.Value())
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				continue // replaced meanwhile: read the newer one
			}
			if err != nil {
				return err
			}
			b, err := decodeBasis(raw)
			if err != nil {
				return corrupt("basis: %v", err)
			}
			c.cur, c.rev = b, e.Revision()
			c.objs = append(c.objs[:0], refName(e.Value()))
			break
		}
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		// No basis yet: start one from the partitioner's dimension and
		// scale once a publisher has placed it.
		pe, err := st.model.Get(ctx, keyPartitioner)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if !sleep(ctx, 50*time.Millisecond) || !pn.held() {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		part, err := decodePartitioner(pe.Value())
		if err != nil {
			return corrupt("partitioner: %v", err)
		}
		seq, err := st.lastSampleSeq(ctx)
		if err != nil {
			return err
		}
		b := &basis{SampleSeq: seq, U: initialBasis(part.Dim, k, part.Mean, w.cfg.Seed)}
		raw, err := w.offload(ctx, "u-0", encodeBasis(b))
		if err != nil {
			return err
		}
		rev, err := st.model.Create(ctx, keyBasis, raw)
		if errors.Is(err, jetstream.ErrKeyExists) {
			continue
		}
		if err != nil {
			return err
		}
		c.cur, c.rev = b, rev
		c.objs = append(c.objs[:0], refName(raw))
		w.setBasis(b)
		break
	}
	d, _ := c.cur.U.Dims()
	c.b.ReuseAs(d, k)
	c.b.Zero()
	c.a.ReuseAs(k, k)
	c.a.Zero()
	if raw, err := st.snaps.GetBytes(ctx, "coord"); err == nil {
		if err := c.decodeSnapshot(raw); err != nil {
			return corrupt("coordinator snapshot: %v", err)
		}
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{MaxResetAttempts: maxResets, FilterSubjects: []string{st.n.ns + ".delta.*"}}
	if c.lastSeq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, c.lastSeq+1
	}
	var err error
	c.in, err = st.js.OrderedConsumer(ctx, st.n.deltas, cfg)
	if err != nil {
		return err
	}
	return drain(c.in, func(m jetstream.Msg) (bool, error) { return false, c.apply(ctx, m) })
}

// initialBasis returns U₀ (d×k), entries uniform in [0, 2√(mean/k)) from a
// seeded source, so that U₀V₀ᵀ starts at the data's scale.
func initialBasis(d, k int, mean float64, seed uint64) *mat.Dense {
	scale := 2 * math.Sqrt(max(mean, 1e-12)/float64(k))
	rnd := rand.New(rand.NewPCG(seed, 3))
	u := mat.NewDense(d, k, nil)
	for i := range u.RawMatrix().Data {
		u.RawMatrix().Data[i] = scale * rnd.Float64()
	}
	return u
}

// apply adds a delta to B and A unless it was applied before.
func (c *coord) apply(ctx context.Context, m jetstream.Msg) error {
	meta, err := m.Metadata()
	if err != nil {
		return err
	}
	raw, err := c.w.st.resolve(ctx, m.Data())
	if err != nil {
		return err
	}
	c.lastSeq = meta.Sequence.Stream
	d, err := decodeDelta(raw)
	if err != nil {
		return corrupt("delta at sequence %d: %v", meta.Sequence.Stream, err)
	}
	k := c.w.cfg.Rank
	br, _ := c.b.Dims()
	switch {
	case d.Part < 0 || d.Part >= len(c.applied):
		return corrupt("delta at sequence %d: partition %d of %d", meta.Sequence.Stream, d.Part, len(c.applied))
	case d.K != k || d.D != br:
		return corrupt("delta at sequence %d: %d×%d statistics, want %d×%d", meta.Sequence.Stream, d.D, d.K, br, k)
	case d.N <= c.applied[d.Part]:
		return nil // applied before a takeover; the log repeats it
	case d.N != c.applied[d.Part]+1:
		return corrupt("delta %d of partition %d follows delta %d", d.N, d.Part, c.applied[d.Part])
	}
	a := c.a.RawMatrix().Data
	for i, x := range d.A {
		a[i] += x
	}
	for i, r := range d.BRows {
		row := c.b.RawRowView(r)
		for j, x := range d.B[i*k : (i+1)*k] {
			row[j] += x
		}
	}
	c.applied[d.Part] = d.N
	c.rounds[d.Part] = int64(d.Round)
	c.cuts[d.Part] = max(c.cuts[d.Part], d.Cut)
	c.samples += uint64(d.Added)
	c.left += uint64(d.Removed)
	c.deltas++
	c.idSum += d.IDSum
	return nil
}

// ready reports whether every partition's delta of the current version's
// round is in, and the version is below Rounds.
func (c *coord) ready() bool {
	if r := c.w.cfg.Rounds; r > 0 && c.cur.Version >= uint64(r) {
		return false
	}
	for _, r := range c.rounds {
		if r < int64(c.cur.Version) {
			return false
		}
	}
	return true
}

// step publishes the next version of U: one multiplicative step on B and
// A (U unchanged while no sample has arrived), through a compare-and-set
// on the basis key's revision.
func (c *coord) step(ctx context.Context) error {
	u := mat.DenseCopyOf(c.cur.U)
	if c.samples > 0 {
		model.StepU(u, &c.b, &c.a, 1)
	}
	seq, err := c.w.st.lastSampleSeq(ctx)
	if err != nil {
		return err
	}
	next := &basis{Version: c.cur.Version + 1, SampleSeq: seq, Samples: c.samples, Deltas: c.deltas, IDSum: c.idSum,
		Left: c.left, Ingested: slices.Min(c.cuts), U: u}
	raw, err := c.w.offload(ctx, fmt.Sprintf("u-%d", next.Version), encodeBasis(next))
	if err != nil {
		return err
	}
	rev, err := c.w.st.model.Update(ctx, keyBasis, raw, c.rev)
	if err != nil {
		if isWrongLast(err) {
			return errLost
		}
		return err
	}
	c.cur, c.rev = next, rev
	c.w.setBasis(next)
	// Keep the objects of the last keptVersions versions of U, for
	// watchers a few versions behind; a watcher further behind skips to
	// the latest. (A coordinator that fails over leaves its predecessor's
	// last few behind.)
	c.objs = append(c.objs, refName(raw))
	for len(c.objs) > keptVersions {
		if c.objs[0] != "" {
			c.w.st.snaps.Delete(ctx, c.objs[0]) // a failed delete leaves an object behind, nothing else
		}
		c.objs = c.objs[1:]
	}
	c.w.mu.Lock()
	c.w.stats.Versions++
	c.w.mu.Unlock()
	if next.Version%uint64(c.w.cfg.snapshotEvery()) == 0 {
		// A failed snapshot costs a longer replay, nothing else.
		c.w.st.snaps.PutBytes(ctx, "coord", c.encodeSnapshot())
	}
	return nil
}

func (c *coord) encodeSnapshot() []byte {
	var e enc
	e.u8(tagCoord)
	e.u64(c.lastSeq)
	e.u64(c.samples)
	e.u64(c.deltas)
	e.u64(c.idSum)
	e.u64(c.left)
	e.u32(uint32(len(c.applied)))
	for i := range c.applied {
		e.u64(c.applied[i])
		e.u64(uint64(c.rounds[i]))
		e.u64(c.cuts[i])
	}
	encodeDense(&e, &c.b)
	encodeDense(&e, &c.a)
	return e.b
}

func (c *coord) decodeSnapshot(b []byte) error {
	d := dec{b: b}
	if d.u8() != tagCoord {
		return errors.New("not a coordinator snapshot")
	}
	last, samples, deltas, idSum, left := d.u64(), d.u64(), d.u64(), d.u64(), d.u64()
	n := d.count(24)
	if d.err == nil && n != len(c.applied) {
		return errors.New("partition count differs")
	}
	applied, rounds, cuts := make([]uint64, n), make([]int64, n), make([]uint64, n)
	for i := range n {
		applied[i], rounds[i], cuts[i] = d.u64(), int64(d.u64()), d.u64()
	}
	bm, am := decodeDense(&d), decodeDense(&d)
	if d.err != nil {
		return d.err
	}
	br, bc := c.b.Dims()
	if bm == nil || am == nil || !sameDims(bm, br, bc) || !sameDims(am, bc, bc) {
		return errors.New("statistics of the wrong shape")
	}
	c.lastSeq, c.samples, c.deltas, c.idSum, c.left = last, samples, deltas, idSum, left
	c.applied, c.rounds, c.cuts = applied, rounds, cuts
	c.b.Copy(bm)
	c.a.Copy(am)
	return nil
}

func sameDims(m *mat.Dense, r, c int) bool {
	mr, mc := m.Dims()
	return mr == r && mc == c
}

// keptVersions is the number of versions of U whose objects stay in the
// store when U travels through it.
const keptVersions = 4
