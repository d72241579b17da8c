package distributed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Neighbor is a sample found near a query.
type Neighbor struct {
	// ID and Label are the sample's.
	ID    uint64
	Label int
	// Partition is the partition that holds it.
	Partition int
	// SqDist is the squared Euclidean distance to the query.
	SqDist float64
	// Classes, from SpreadNeighbors only, holds the sample's class
	// scores after label propagation over its partition's k-NN graph
	// (index c: class c), summing to 1; a labeled sample's are its own
	// class's, one-hot.
	Classes []float64

	row int // position in the owner's rows (nearest)
}

// Neighbors returns the k samples nearest to q among the partitions whose
// centroids are the probes nearest to q's sketch, nearest first, by
// request-reply to those partitions' owners. With probes ≥ P it is the
// exact k-NN over every sample the owners hold; with fewer, samples in
// the other partitions are missed. A partition whose owner does not answer
// within ctx makes it return an error naming the partition.
func Neighbors(ctx context.Context, nc *nats.Conn, cfg Config, part *Partitioner, q Sample, k, probes int) ([]Neighbor, error) {
	return neighbors(ctx, nc, cfg, part, q, k, probes, tagKNN)
}

// LabeledNeighbors is Neighbors among the samples whose label the owners
// know (Sample.Label, or a late label from Publisher.Label that they have
// ingested, State.Ingested): the k nearest labeled samples in the probes
// partitions nearest to q, nearest first.
func LabeledNeighbors(ctx context.Context, nc *nats.Conn, cfg Config, part *Partitioner, q Sample, k, probes int) ([]Neighbor, error) {
	return neighbors(ctx, nc, cfg, part, q, k, probes, tagKNNLab)
}

// SpreadNeighbors is Neighbors among the samples that labels reach by
// propagation (the harmonic function of Zhu, Ghahramani and Lafferty 2003,
// labeled samples clamped, as the single-machine stream spreads them) over
// their partition's k-NN graph, which owners keep when
// Config.Alpha is positive: each neighbour carries its class scores
// (Neighbor.Classes), labeled or not. Samples of a partition that no label
// reaches are skipped, as are all samples of an owner without a graph.
func SpreadNeighbors(ctx context.Context, nc *nats.Conn, cfg Config, part *Partitioner, q Sample, k, probes int) ([]Neighbor, error) {
	return neighbors(ctx, nc, cfg, part, q, k, probes, tagKNNSpread)
}

func neighbors(ctx context.Context, nc *nats.Conn, cfg Config, part *Partitioner, q Sample, k, probes int, kind byte) ([]Neighbor, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if k < 1 || probes < 1 {
		return nil, fmt.Errorf("distributed: k = %d and probes = %d (both must be positive)", k, probes)
	}
	n := cfg.names()
	parts := part.Nearest(&q, probes)
	req := encodeKNNRequest(k, kind, &q)
	var (
		mu   sync.Mutex
		all  []Neighbor
		errs []error
		wg   sync.WaitGroup
	)
	for _, p := range parts {
		wg.Go(func() {
			got, err := ask(ctx, nc, n.knnSubject(p), req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("distributed: neighbours from partition %d: %w", p, err))
				return
			}
			for i := range got {
				got[i].Partition = p
			}
			all = append(all, got...)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sortNeighbors(all)
	return all[:min(k, len(all))], nil
}

// ask sends a k-NN request to a partition's owner, and repeats it, each
// attempt bounded by a second, while no owner answers (a role moving to
// another instance unsubscribes one owner before the next subscribes)
// until ctx ends.
func ask(ctx context.Context, nc *nats.Conn, subject string, req []byte) ([]Neighbor, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		msg, err := nc.RequestWithContext(actx, subject, req)
		cancel()
		if err == nil {
			return decodeNeighbors(msg.Data)
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			return nil, err
		}
		if !sleep(ctx, 50*time.Millisecond) {
			return nil, err
		}
	}
}

func sortNeighbors(a []Neighbor) {
	slices.SortFunc(a, func(x, y Neighbor) int {
		if c := cmp.Compare(x.SqDist, y.SqDist); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
}

// nearest returns the k rows nearest to q among those keep accepts (all
// if keep is nil).
func nearest(rows []Sample, q *Sample, k int, keep func(i int) bool) []Neighbor {
	out := make([]Neighbor, 0, len(rows))
	for i := range rows {
		if keep != nil && !keep(i) {
			continue
		}
		out = append(out, Neighbor{ID: rows[i].ID, Label: rows[i].Label, SqDist: sqDistSample(&rows[i], q), row: i})
	}
	sortNeighbors(out)
	return out[:min(k, len(out))]
}

func encodeKNNRequest(k int, kind byte, q *Sample) []byte {
	var e enc
	e.u8(kind)
	e.u32(uint32(k))
	e.b = append(e.b, encodeSample(q)...)
	return e.b
}

func decodeKNNRequest(b []byte) (k int, kind byte, q Sample, err error) {
	d := dec{b: b}
	switch kind = d.u8(); kind {
	case tagKNN, tagKNNLab, tagKNNSpread:
	default:
		return 0, 0, Sample{}, errors.New("distributed: not a k-NN request")
	}
	k = int(d.u32())
	if d.err != nil {
		return 0, 0, Sample{}, d.err
	}
	q, err = decodeSample(d.b)
	return k, kind, q, err
}

func encodeNeighbors(a []Neighbor) []byte {
	var e enc
	e.u8(tagKNN)
	e.u32(uint32(len(a)))
	for _, x := range a {
		e.u64(x.ID)
		e.u32(uint32(int32(x.Label)))
		e.f64(x.SqDist)
		e.u32(uint32(len(x.Classes)))
		e.f64s(x.Classes)
	}
	return e.b
}

func decodeNeighbors(b []byte) ([]Neighbor, error) {
	d := dec{b: b}
	if len(b) == 0 {
		return nil, errors.New("owner refused the request")
	}
	if d.u8() != tagKNN {
		return nil, errors.New("not a k-NN reply")
	}
	out := make([]Neighbor, d.count(24))
	for i := range out {
		out[i] = Neighbor{ID: d.u64(), Label: int(int32(d.u32())), SqDist: d.f64()}
		if c := d.count(8); c > 0 {
			out[i].Classes = d.f64s(c)
		}
	}
	return out, d.err
}
