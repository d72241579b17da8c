package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"
)

// Publisher places samples on the samples stream, each on its partition's
// subject. The first Publish of a namespace fits the partitioner on its
// samples and stores it in the model bucket; every later publisher, here
// or elsewhere, reads it from there, so all agree on the partitions.
//
// A Publisher is safe for concurrent use.
type Publisher struct {
	cfg Config
	st  *store

	mu   sync.Mutex
	part *Partitioner
	home map[uint64]int // partition of each sample ID this publisher placed
	last uint64         // highest stream sequence acknowledged
}

// NewPublisher returns a publisher for cfg on nc, creating the namespace's
// streams and buckets if they do not exist.
func NewPublisher(ctx context.Context, nc *nats.Conn, cfg Config) (*Publisher, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	st, err := setup(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	return &Publisher{cfg: cfg, st: st, home: map[uint64]int{}}, nil
}

// Partitioner returns the namespace's partitioner, reading it from the
// model bucket if this publisher has not yet; it returns nil and no error
// if none is stored yet.
func (p *Publisher) Partitioner(ctx context.Context) (*Partitioner, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.part != nil {
		return p.part, nil
	}
	e, err := p.st.model.Get(ctx, keyPartitioner)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("distributed: partitioner: %w", err)
	}
	part, err := decodePartitioner(e.Value())
	if err != nil {
		return nil, err
	}
	if len(part.Centroids) != p.cfg.partitions() {
		return nil, fmt.Errorf("distributed: stored partitioner has %d partitions, the configuration %d", len(part.Centroids), p.cfg.partitions())
	}
	p.part = part
	return part, nil
}

// Publish stores the samples on the stream and returns once the server
// has acknowledged each. A sample whose ID was published within the
// stream's duplicate window (two minutes) is stored once. If no
// partitioner is stored yet, it is fitted on these samples, which must be
// at least P then.
func (p *Publisher) Publish(ctx context.Context, samples []Sample) error {
	_, err := p.PublishIDs(ctx, samples, nil)
	return err
}

// PublishIDs is Publish with the message id (the Nats-Msg-Id header) of
// each sample given: msgIDs[i] for samples[i], or the sample's ID when
// msgIDs is nil. A message id the stream stored within its duplicate
// window (two minutes), from any publisher, is not stored again; dup[i]
// reports that for samples[i] (the server acknowledged it as a duplicate).
func (p *Publisher) PublishIDs(ctx context.Context, samples []Sample, msgIDs []string) (dup []bool, err error) {
	if len(samples) == 0 {
		return nil, nil
	}
	if msgIDs != nil && len(msgIDs) != len(samples) {
		return nil, fmt.Errorf("distributed: %d message ids for %d samples", len(msgIDs), len(samples))
	}
	for i := range samples {
		if err := samples[i].check(); err != nil {
			return nil, err
		}
	}
	part, err := p.Partitioner(ctx)
	if err != nil {
		return nil, err
	}
	if part == nil {
		part, err = NewPartitioner(samples, p.cfg.partitions(), p.cfg.sketchDim(), p.cfg.Seed)
		if err != nil {
			return nil, err
		}
		_, err = p.st.model.Create(ctx, keyPartitioner, encodePartitioner(part))
		if errors.Is(err, jetstream.ErrKeyExists) {
			// Another publisher placed it first: use theirs.
			if part, err = p.Partitioner(ctx); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, fmt.Errorf("distributed: storing the partitioner: %w", err)
		} else {
			p.mu.Lock()
			p.part = part
			p.mu.Unlock()
		}
	}
	msgs := make([]*nats.Msg, len(samples))
	ids := make([]string, len(samples))
	parts := make([]int, len(samples))
	for i := range samples {
		s := &samples[i]
		if s.Dim != part.Dim {
			return nil, fmt.Errorf("distributed: sample %d has dimension %d, the stream %d", s.ID, s.Dim, part.Dim)
		}
		parts[i] = part.Partition(s)
		msgs[i] = &nats.Msg{Subject: p.st.n.sampleSubject(parts[i]), Data: encodeSample(s)}
		ids[i] = strconv.FormatUint(s.ID, 10)
		if msgIDs != nil {
			ids[i] = msgIDs[i]
		}
	}
	if dup, err = p.publish(ctx, msgs, ids); err != nil {
		return nil, err
	}
	p.mu.Lock()
	for i := range samples {
		p.home[samples[i].ID] = parts[i]
	}
	p.mu.Unlock()
	return dup, nil
}

// Label publishes a late label: class label (≥ 0) for the sample with
// this ID, on the samples subject of the partition this publisher placed
// the sample in, after the sample; the partition's owner sets it on the
// sample if it still holds it. A sample this publisher did not place gets
// the label on every partition's subject, and the owner that holds it
// sets it. A label published twice within the duplicate window is stored
// once.
func (p *Publisher) Label(ctx context.Context, id uint64, label int) error {
	if label < 0 {
		return fmt.Errorf("distributed: label %d for sample %d (classes are ≥ 0)", label, id)
	}
	p.mu.Lock()
	home, ok := p.home[id]
	p.mu.Unlock()
	parts := []int{home}
	if !ok {
		parts = parts[:0]
		for q := range p.cfg.partitions() {
			parts = append(parts, q)
		}
	}
	msgs := make([]*nats.Msg, len(parts))
	ids := make([]string, len(parts))
	for i, q := range parts {
		msgs[i] = &nats.Msg{Subject: p.st.n.sampleSubject(q), Data: encodeLabel(id, label)}
		ids[i] = fmt.Sprintf("L%d.%d", id, label)
	}
	_, err := p.publish(ctx, msgs, ids)
	return err
}

// LastSeq returns the highest samples-stream sequence acknowledged to
// this publisher: once State.Ingested reaches it, every owner holds what
// it published.
func (p *Publisher) LastSeq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// publish stores msgs with the message ids ids and returns once the
// server has acknowledged each; dup[i] reports that msgs[i] was a
// duplicate (its id stored within the duplicate window: not stored again).
func (p *Publisher) publish(ctx context.Context, msgs []*nats.Msg, ids []string) (dup []bool, err error) {
	dup = make([]bool, len(msgs))
	// Publish asynchronously, then republish what was not acknowledged (a
	// node lost, a leader moving): the message ids make a repeat a no-op.
	todo := make([]int, len(msgs))
	for i := range todo {
		todo[i] = i
	}
	var last error
	var seq uint64
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == publishAttempts {
			return nil, fmt.Errorf("distributed: publishing message %s: %w", ids[todo[0]], last)
		}
		if attempt > 0 && !sleep(ctx, time.Duration(attempt)*200*time.Millisecond) {
			return nil, ctx.Err()
		}
		futures := make([]jetstream.PubAckFuture, len(todo))
		var failed []int
		for j, i := range todo {
			msg := &nats.Msg{Subject: msgs[i].Subject, Data: msgs[i].Data, Header: nats.Header{}}
			f, err := p.st.js.PublishMsgAsync(msg, jetstream.WithMsgID(ids[i]))
			if err != nil {
				last = err
				failed = append(failed, i)
				continue
			}
			futures[j] = f
		}
		for j, i := range todo {
			f := futures[j]
			if f == nil {
				continue
			}
			select {
			case ack := <-f.Ok():
				seq = max(seq, ack.Sequence)
				// A republished message acknowledged as a duplicate of
				// its own first attempt was stored once, by this call.
				dup[i] = ack.Duplicate && attempt == 0
			case err := <-f.Err():
				last = err
				failed = append(failed, i)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		todo = failed
	}
	p.mu.Lock()
	p.last = max(p.last, seq)
	p.mu.Unlock()
	return dup, nil
}

// publishAttempts bounds the publications of one sample.
const publishAttempts = 8

// State is a published version of the basis and the coordinator's exact
// counters at that version.
type State struct {
	// Version counts the basis updates.
	Version uint64
	// Samples and Deltas count the samples and deltas in the statistics
	// U was stepped from; IDSum is the sum of those samples' IDs modulo
	// 2⁶⁴, a check that each was applied once.
	Samples, Deltas, IDSum uint64
	// Left counts the samples that left the owners' windows (their part
	// of the statistics subtracted).
	Left uint64
	// Ingested is a samples-stream sequence up to which every owner holds
	// every sample and label of its partition (compare Publisher.LastSeq).
	Ingested uint64
	// U is the D×K basis.
	U *mat.Dense
}

// ReadState returns the latest basis of cfg's namespace, or an error
// wrapping jetstream.ErrKeyNotFound if there is none yet.
func ReadState(ctx context.Context, nc *nats.Conn, cfg Config) (State, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return State{}, err
	}
	kv, err := js.KeyValue(ctx, cfg.names().model)
	if err != nil {
		return State{}, fmt.Errorf("distributed: %w", err)
	}
	st := &store{js: js, snaps: nil}
	var raw []byte
	for {
		e, err := kv.Get(ctx, keyBasis)
		if err != nil {
			return State{}, fmt.Errorf("distributed: basis: %w", err)
		}
		if refName(e.Value()) != "" && st.snaps == nil {
			if st.snaps, err = js.ObjectStore(ctx, cfg.names().snapshots); err != nil {
				return State{}, fmt.Errorf("distributed: %w", err)
			}
		}
		raw, err = st.resolve(ctx, e.Value())
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			continue // replaced meanwhile: read the newer one
		}
		if err != nil {
			return State{}, fmt.Errorf("distributed: basis: %w", err)
		}
		break
	}
	b, err := decodeBasis(raw)
	if err != nil {
		return State{}, err
	}
	return State{Version: b.Version, Samples: b.Samples, Deltas: b.Deltas, IDSum: b.IDSum, Left: b.Left, Ingested: b.Ingested, U: b.U}, nil
}
