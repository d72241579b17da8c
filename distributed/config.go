package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Config names a distributed factorization on a NATS server and sets its
// hyperparameters. Every Worker and Publisher of one factorization must
// use the same Namespace, Partitions and Rank; the zero value of every
// other field means its default.
type Config struct {
	// Namespace prefixes every subject, stream, bucket and consumer of the
	// factorization: letters, digits, '-' and '_'. If empty, "nmf".
	Namespace string
	// Partitions is P, the number of virtual partitions. If zero, 4.
	Partitions int
	// Rank is K, the number of latent factors. It must be positive.
	Rank int
	// Staleness is s: an owner starts round r only once U's version is at
	// least r − s. Zero gives synchronous rounds (the single-machine
	// answer to rounding).
	Staleness int
	// Rounds, if positive, stops the coordinator at U version Rounds and
	// the owners after round Rounds−1; zero runs until the context ends.
	Rounds int
	// InitSweeps is the number of multiplicative updates that code a new
	// sample on U, starting from constant codes. If zero, 10.
	InitSweeps int
	// Sweeps is the number of multiplicative updates of the older codes
	// per round. If zero, 1.
	Sweeps int
	// Refresh, if positive, bounds the older codes swept per round, taken
	// round-robin; zero sweeps every code of the partition each round.
	Refresh int
	// Alpha is GNMF's α, the weight of the graph term tr(VᵀLV) over each
	// partition's k-NN graph (Cai et al. 2011): it enters the owners' V
	// sweeps only, U's step reading the summed statistics as in NMF. Zero
	// runs plain NMF; it must not be negative.
	Alpha float64
	// GraphK is the number of neighbours of a sample in its partition's
	// k-NN graph (0-1 weights, symmetrized by max) when Alpha is positive.
	// If zero, 5.
	GraphK int
	// Window, if positive, bounds the samples each owner keeps: a round
	// that brings its partition past Window first removes the oldest, and
	// its delta subtracts their part of B and A. Zero keeps every sample.
	Window int
	// SketchDim is the dimension of the partitioner's sketch. If zero, 16.
	SketchDim int
	// Seed seeds the partitioner and U's initialization.
	Seed uint64
	// Replicas is the replication factor of streams and buckets (1 to 5;
	// 3 on a 3-node cluster survives the loss of a node). If zero, 1.
	Replicas int
	// PinnedTTL is how long a role stays with an instance that stopped
	// pulling before it moves to another: the failover time. If zero, 2 s.
	PinnedTTL time.Duration
	// Idle is the longest pause of an owner between rounds that brought no
	// new sample, when Rounds is zero: a sample or label published for its
	// partition ends the pause at once (the rounds without one still
	// refresh the older codes, at this pace). If zero, 100 ms.
	Idle time.Duration
	// SnapshotEvery is the number of rounds (owners) or versions
	// (coordinator) between snapshots in the object store. If zero, 20.
	SnapshotEvery int
}

func (c Config) namespace() string {
	if c.Namespace == "" {
		return "nmf"
	}
	return c.Namespace
}

func (c Config) partitions() int    { return defInt(c.Partitions, 4) }
func (c Config) initSweeps() int    { return defInt(c.InitSweeps, 10) }
func (c Config) sweeps() int        { return defInt(c.Sweeps, 1) }
func (c Config) sketchDim() int     { return defInt(c.SketchDim, 16) }
func (c Config) graphK() int        { return defInt(c.GraphK, 5) }
func (c Config) replicas() int      { return defInt(c.Replicas, 1) }
func (c Config) snapshotEvery() int { return defInt(c.SnapshotEvery, 20) }
func (c Config) pinnedTTL() time.Duration {
	if c.PinnedTTL == 0 {
		return 2 * time.Second
	}
	return c.PinnedTTL
}
func (c Config) idle() time.Duration {
	if c.Idle == 0 {
		return 100 * time.Millisecond
	}
	return c.Idle
}

func defInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// check returns an error naming the first invalid field.
func (c Config) check() error {
	ns := c.namespace()
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("distributed: namespace %q: only letters, digits, '-' and '_'", ns)
		}
	}
	switch {
	case c.Rank < 1:
		return fmt.Errorf("distributed: rank %d (must be positive)", c.Rank)
	case c.Partitions < 0:
		return fmt.Errorf("distributed: %d partitions", c.Partitions)
	case c.Staleness < 0:
		return fmt.Errorf("distributed: staleness %d (must be ≥ 0)", c.Staleness)
	case c.Rounds < 0 || c.InitSweeps < 0 || c.Sweeps < 0 || c.Refresh < 0 || c.SketchDim < 0 || c.SnapshotEvery < 0:
		return errors.New("distributed: negative rounds, sweeps, refresh, sketch dimension or snapshot interval")
	case !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("distributed: alpha %g (must be finite and ≥ 0)", c.Alpha)
	case c.GraphK < 0 || c.Window < 0:
		return fmt.Errorf("distributed: graph k %d and window %d (must be ≥ 0)", c.GraphK, c.Window)
	case c.Replicas < 0 || c.Replicas > 5:
		return fmt.Errorf("distributed: %d replicas (1 to 5)", c.Replicas)
	case c.PinnedTTL < 0 || c.Idle < 0:
		return errors.New("distributed: negative duration")
	}
	return nil
}

// names of the JetStream objects of a namespace.
type names struct {
	samples, deltas, ticks string // streams
	model, snapshots       string // KV bucket and object store
	ns                     string
}

func (c Config) names() names {
	ns := c.namespace()
	up := strings.ToUpper(strings.ReplaceAll(ns, "-", "_"))
	return names{
		samples: up + "_SAMPLES", deltas: up + "_DELTAS", ticks: up + "_TICKS",
		model: ns + "_model", snapshots: ns + "_snapshots", ns: ns,
	}
}

func (n names) sampleSubject(p int) string { return fmt.Sprintf("%s.samples.%d", n.ns, p) }
func (n names) deltaSubject(p int) string  { return fmt.Sprintf("%s.delta.%d", n.ns, p) }
func (n names) tickSubject() string        { return n.ns + ".tick" }

// Keys of the model bucket.
const (
	keyBasis       = "u"
	keyPartitioner = "partitioner"
	rolesGroup     = "roles"
)

// store holds the JetStream handles of a namespace.
type store struct {
	js      jetstream.JetStream
	n       names
	model   jetstream.KeyValue
	snaps   jetstream.ObjectStore
	samples jetstream.Stream // handle of the samples stream
}

// setup creates (or updates) the streams, bucket and object store of c's
// namespace, or finds them when another instance creates them at once
// (ensure), and stores or checks the namespace's settings (checkSettings);
// it is idempotent, so every instance calls it.
func setup(ctx context.Context, js jetstream.JetStream, c Config) (*store, error) {
	n := c.names()
	r := c.replicas()
	streams := []jetstream.StreamConfig{
		{Name: n.samples, Subjects: []string{n.ns + ".samples.*"}, Replicas: r, Duplicates: 2 * time.Minute},
		{Name: n.deltas, Subjects: []string{n.ns + ".delta.*"}, Replicas: r, Duplicates: 2 * time.Minute},
		// Ticks only drive the roles' pins: the last minute of them is enough.
		{Name: n.ticks, Subjects: []string{n.tickSubject()}, Replicas: r, MaxAge: time.Minute, Storage: jetstream.MemoryStorage},
	}
	var samples jetstream.Stream
	for i, sc := range streams {
		h, err := ensure(ctx, "stream "+sc.Name,
			func(ctx context.Context) (jetstream.Stream, error) { return js.CreateOrUpdateStream(ctx, sc) },
			func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, sc.Name) })
		if err != nil {
			return nil, err
		}
		if i == 0 {
			samples = h
		}
	}
	kv, err := ensure(ctx, "bucket "+n.model,
		func(ctx context.Context) (jetstream.KeyValue, error) {
			return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.model, Replicas: r, History: 1})
		},
		func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, n.model) })
	if err != nil {
		return nil, err
	}
	if err := checkSettings(ctx, kv, c); err != nil {
		return nil, err
	}
	obs, err := ensure(ctx, "object store "+n.snapshots,
		func(ctx context.Context) (jetstream.ObjectStore, error) {
			return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: n.snapshots, Replicas: r})
		},
		func(ctx context.Context) (jetstream.ObjectStore, error) { return js.ObjectStore(ctx, n.snapshots) })
	if err != nil {
		return nil, err
	}
	return &store{js: js, n: n, model: kv, snaps: obs, samples: samples}, nil
}

// roleConsumer creates (or updates) the pinned consumer through which
// instances compete for a role.
func (s *store) roleConsumer(ctx context.Context, name string, ttl time.Duration) (jetstream.Consumer, error) {
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.n.ticks, jetstream.ConsumerConfig{
		Durable:        name,
		FilterSubject:  s.n.tickSubject(),
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		AckPolicy:      jetstream.AckNonePolicy,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PriorityGroups: []string{rolesGroup},
		PinnedTTL:      ttl,
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: role consumer %s: %w", name, err)
	}
	return cons, nil
}

// lastSeq returns the last sequence of the samples stream.
func (s *store) lastSampleSeq(ctx context.Context) (uint64, error) {
	st, err := s.js.Stream(ctx, s.n.samples)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// lastSubjectSeq returns the stream sequence of the last message on
// subject of the samples stream, 0 if there is none.
func (s *store) lastSubjectSeq(ctx context.Context, subject string) (uint64, error) {
	m, err := s.samples.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

// isWrongLast reports whether err is a refused compare-and-set publish.
func isWrongLast(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}
