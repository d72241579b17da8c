package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Config names a namespace of the chain on the owners on a NATS server
// and sets how it is run. Every Worker and ChainDriver of one namespace
// must use the same Namespace and Partitions; the zero value of every
// other field means its default. What the owners learn with (method,
// rank, window, predictor, …) is the namespace's learner settings, which
// its first ChainDriver stores (chain.go), not a field of Config.
type Config struct {
	// Namespace prefixes every subject, stream, bucket and consumer of the
	// namespace: letters, digits, '-' and '_'. If empty, "nmf".
	Namespace string
	// Partitions is P, the number of partitions, each with one owner at a
	// time. If zero, 4 (the commands give 1 unless told).
	Partitions int
	// Rank, Staleness, InitSweeps, Sweeps, Refresh, Alpha, GraphK, Window,
	// SketchDim and Seed were the settings of the owners' own GNMF step,
	// retired for the chain (distributed/DESIGN.md, "History"). The chain
	// does not read them: they remain only as namespace settings that
	// every instance must share (namespace.go), the commands filling Rank
	// with the learner's rank. Rank must not be negative, the others not
	// negative either (Alpha finite).
	Rank       int
	Staleness  int
	InitSweeps int
	Sweeps     int
	Refresh    int
	Alpha      float64
	GraphK     int
	Window     int
	SketchDim  int
	Seed       uint64
	// Replicas is the replication factor of streams and buckets (1 to 5;
	// 3 on a 3-node cluster survives the loss of a node). If zero, 1.
	Replicas int
	// PinnedTTL is how long a role stays with an instance that stopped
	// pulling before it moves to another: the failover time. If zero, 2 s.
	PinnedTTL time.Duration
	// Warm is the number of a driver's first unlabeled dense samples that
	// every owner starts from (distributed/DESIGN.md, "A common start"):
	// the namespace's first driver sends the batches up to them whole to
	// partition 0, and the other owners start from its Learner's state
	// after them (Router.Once); a later driver sends them to every other
	// partition as context, (P − 1)·Warm samples more to learn. It
	// concerns the driver only (not a namespace setting). If zero, 2,000;
	// negative, none.
	Warm int
}

// warm returns Warm or its default.
func (c Config) warm() int {
	switch {
	case c.Warm < 0:
		return 0
	case c.Warm == 0:
		return defaultWarm
	}
	return c.Warm
}

// defaultWarm is Warm's default: at P = 3 it brought digits d2 and MNIST
// 15k within 0.5 point of one machine, the smallest of those measured to
// (BENCHMARKS.md, "Every sample answered, a common start, and the CPU of
// one worker").
const defaultWarm = 2000

func (c Config) namespace() string {
	if c.Namespace == "" {
		return "nmf"
	}
	return c.Namespace
}

func (c Config) partitions() int { return defInt(c.Partitions, 4) }
func (c Config) initSweeps() int { return defInt(c.InitSweeps, 10) }
func (c Config) sweeps() int     { return defInt(c.Sweeps, 1) }
func (c Config) sketchDim() int  { return defInt(c.SketchDim, 16) }
func (c Config) graphK() int     { return defInt(c.GraphK, 5) }
func (c Config) replicas() int   { return defInt(c.Replicas, 1) }
func (c Config) pinnedTTL() time.Duration {
	if c.PinnedTTL == 0 {
		return 2 * time.Second
	}
	return c.PinnedTTL
}

func defInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// check returns an error naming the first invalid field (and its flag of
// the command line), before anything is asked of the server.
func (c Config) check() error {
	ns := c.namespace()
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("distributed: namespace %q (--namespace): %q is not allowed: use only letters, digits, '-' and '_' (the namespace names NATS subjects, streams and buckets)", ns, r)
		}
	}
	switch {
	case c.Rank < 0:
		return fmt.Errorf("distributed: rank %d (must not be negative)", c.Rank)
	case c.Partitions < 0:
		return fmt.Errorf("distributed: %d partitions", c.Partitions)
	case c.Staleness < 0:
		return fmt.Errorf("distributed: staleness %d (must be ≥ 0)", c.Staleness)
	case c.InitSweeps < 0 || c.Sweeps < 0 || c.Refresh < 0 || c.SketchDim < 0:
		return errors.New("distributed: negative sweeps, refresh or sketch dimension")
	case !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("distributed: alpha %g (must be finite and ≥ 0)", c.Alpha)
	case c.GraphK < 0 || c.Window < 0:
		return fmt.Errorf("distributed: graph k %d and window %d (must be ≥ 0)", c.GraphK, c.Window)
	case c.Replicas < 0 || c.Replicas > 5:
		return fmt.Errorf("distributed: %d replicas (1 to 5)", c.Replicas)
	case c.PinnedTTL < 0 || c.PinnedTTL > 0 && c.PinnedTTL < minPinnedTTL:
		// A Worker ticks every TTL/4: a TTL of 1 ns published ticks in a
		// tight loop and grew the server's memory without bound.
		return fmt.Errorf("distributed: pinned TTL %v (--pinned-ttl): use %v or more (0: the default, 2s)", c.PinnedTTL, minPinnedTTL)
	case len(ns) > maxNamespace:
		return fmt.Errorf("distributed: namespace of %d characters (--namespace): use at most %d (it names streams and buckets, whose names NATS bounds at 255)", len(ns), maxNamespace)
	}
	return nil
}

// minPinnedTTL is the shortest PinnedTTL Config.check accepts, and
// maxNamespace the longest namespace: with the longest suffix the chain
// gives its streams ("OBJ_…_snapshots"), 200 characters stay within
// NATS's 255.
const (
	minPinnedTTL = 50 * time.Millisecond
	maxNamespace = 200
)

// names of the JetStream objects of a namespace.
type names struct {
	ticks            string // stream of the roles' heartbeats
	model, snapshots string // KV bucket and object store
	ns               string
}

func (c Config) names() names {
	ns := c.namespace()
	up := strings.ToUpper(strings.ReplaceAll(ns, "-", "_"))
	return names{
		ticks: up + "_TICKS",
		model: ns + "_model", snapshots: ns + "_snapshots", ns: ns,
	}
}

func (n names) tickSubject() string { return n.ns + ".tick" }

// ticksStream is the configuration of the namespace's ticks stream. Ticks
// only drive the roles' pins: the last minute of them is enough, in
// memory (a server that restarts loses the stream and its role consumers,
// and the Workers make them anew: pin.run).
func (c Config) ticksStream() jetstream.StreamConfig {
	n := c.names()
	return jetstream.StreamConfig{Name: n.ticks, Subjects: []string{n.tickSubject()}, Replicas: c.replicas(), MaxAge: time.Minute, Storage: jetstream.MemoryStorage}
}

// rolesGroup is the priority group of the roles' pinned consumers.
const rolesGroup = "roles"

// store holds the JetStream handles of a namespace.
type store struct {
	js    jetstream.JetStream
	n     names
	model jetstream.KeyValue    // the namespace's settings, learner settings and anchors
	snaps jetstream.ObjectStore // for owner snapshots
}

// setup creates (or updates) the ticks stream, bucket and object store of c's
// namespace, or finds them when another instance creates them at once
// (ensure), and stores or checks the namespace's settings (checkSettings);
// it is idempotent, so every instance calls it.
func setup(ctx context.Context, js jetstream.JetStream, c Config) (*store, error) {
	n := c.names()
	r := c.replicas()
	if _, err := ensureStream(ctx, js, c.ticksStream()); err != nil {
		return nil, err
	}
	kv, err := ensureFound(ctx, "bucket "+n.model,
		func(ctx context.Context, kv jetstream.KeyValue) bool {
			st, err := kv.Status(ctx)
			b, ok := st.(*jetstream.KeyValueBucketStatus)
			return err == nil && ok && b.History() == 1 && b.StreamInfo().Config.Replicas == r
		},
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
	obs, err := ensureFound(ctx, "object store "+n.snapshots,
		func(ctx context.Context, obs jetstream.ObjectStore) bool {
			st, err := obs.Status(ctx)
			return err == nil && st.Replicas() == r
		},
		func(ctx context.Context) (jetstream.ObjectStore, error) {
			return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: n.snapshots, Replicas: r})
		},
		func(ctx context.Context) (jetstream.ObjectStore, error) { return js.ObjectStore(ctx, n.snapshots) })
	if err != nil {
		return nil, err
	}
	return &store{js: js, n: n, model: kv, snaps: obs}, nil
}

// ensureStream returns the stream sc, made or updated unless it exists
// with sc's subjects, replicas, duplicate window, age limit and storage
// (ensureFound).
func ensureStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.Stream, error) {
	return ensureFound(ctx, "stream "+sc.Name,
		func(_ context.Context, s jetstream.Stream) bool {
			c := s.CachedInfo().Config
			return slices.Equal(c.Subjects, sc.Subjects) && c.Replicas == max(sc.Replicas, 1) && c.MaxAge == sc.MaxAge && c.Storage == sc.Storage &&
				(sc.Duplicates == 0 || c.Duplicates == sc.Duplicates)
		},
		func(ctx context.Context) (jetstream.Stream, error) { return js.CreateOrUpdateStream(ctx, sc) },
		func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, sc.Name) })
}

// ensureFound is ensure that first looks the object up and takes it when
// same accepts its configuration: the instances of a namespace find its
// streams and buckets made, and updating one unchanged rewrites its
// metadata on the server's disk, a fixed cost of every instance
// (BENCHMARKS.md, "… (issue 29, branch dist7)").
func ensureFound[T any](ctx context.Context, what string, same func(context.Context, T) bool, create, lookup func(context.Context) (T, error)) (T, error) {
	return ensure(ctx, what, func(ctx context.Context) (T, error) {
		if h, err := lookup(ctx); err == nil && same(ctx, h) {
			return h, nil
		}
		return create(ctx)
	}, lookup)
}

// roleConsumer creates (or updates) the pinned consumer through which
// instances compete for a role, retrying (retry) as the namespace's other
// objects are made: on a new 3-node cluster with workers starting at once,
// a request can time out while the ticks stream's leader is elected, and a
// worker that stopped there left its partitions to the others (one of four
// in a sweep of scripts/netlab.sh on MNIST, BENCHMARKS.md, "… session 20").
func (s *store) roleConsumer(ctx context.Context, name string, ttl time.Duration) (jetstream.Consumer, error) {
	var cons jetstream.Consumer
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		cons, err = s.makeRoleConsumer(ctx, name, ttl)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: role consumer %s: %w", name, err)
	}
	return cons, nil
}

// makeRoleConsumer creates (or updates) a role's pinned consumer, one
// attempt.
func (s *store) makeRoleConsumer(ctx context.Context, name string, ttl time.Duration) (jetstream.Consumer, error) {
	return s.js.CreateOrUpdateConsumer(ctx, s.n.ticks, jetstream.ConsumerConfig{
		Durable:        name,
		FilterSubject:  s.n.tickSubject(),
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		AckPolicy:      jetstream.AckNonePolicy,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PriorityGroups: []string{rolesGroup},
		PinnedTTL:      ttl,
	})
}

// remakeRoleConsumer makes a role's consumer anew, and first the ticks
// stream (ticks) if it is gone, in one attempt bounded by attemptWithin:
// the caller (pin.run) retries with its pause.
func (s *store) remakeRoleConsumer(ctx context.Context, ticks jetstream.StreamConfig, name string, ttl time.Duration) (jetstream.Consumer, error) {
	actx, cancel := context.WithTimeout(ctx, attemptWithin)
	defer cancel()
	if _, err := s.js.Stream(actx, ticks.Name); errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := s.js.CreateOrUpdateStream(actx, ticks); err != nil {
			return nil, fmt.Errorf("distributed: stream %s: %w", ticks.Name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("distributed: stream %s: %w", ticks.Name, err)
	}
	cons, err := s.makeRoleConsumer(actx, name, ttl)
	if err != nil {
		return nil, fmt.Errorf("distributed: role consumer %s: %w", name, err)
	}
	return cons, nil
}
