package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// keyConfig is the key of the model bucket that holds the namespace's
// settings (JSON of namespaceSettings), written once by its first
// instance.
const keyConfig = "config"

// namespaceSettings are the settings of a Config that every instance of a
// namespace must share: roles move between instances. Zero-means-default fields are
// stored resolved, so "unset" and "the default spelled out" agree.
type namespaceSettings struct {
	Rank       int     `json:"rank"`
	Partitions int     `json:"partitions"`
	Staleness  int     `json:"staleness"`
	Alpha      float64 `json:"alpha"`
	GraphK     int     `json:"neighbors"`
	Window     int     `json:"window"`
	Refresh    int     `json:"refresh"`
	Sweeps     int     `json:"sweeps"`
	InitSweeps int     `json:"init_sweeps"`
	SketchDim  int     `json:"sketch_dim"`
	Seed       uint64  `json:"seed"`
}

func (c Config) settings() namespaceSettings {
	return namespaceSettings{Rank: c.Rank, Partitions: c.partitions(), Staleness: c.Staleness, Alpha: c.Alpha,
		GraphK: c.graphK(), Window: c.Window, Refresh: c.Refresh, Sweeps: c.sweeps(), InitSweeps: c.initSweeps(),
		SketchDim: c.sketchDim(), Seed: c.Seed}
}

// field is one setting: its name (the command line's flag, without
// dashes) and pointers to it in a namespaceSettings and a Config.
type field struct {
	name string
	s, c any // *int, *float64 or *uint64, of the same type
}

func settingFields(s *namespaceSettings, c *Config) []field {
	return []field{
		{name: "rank", s: &s.Rank, c: &c.Rank}, {name: "partitions", s: &s.Partitions, c: &c.Partitions},
		{name: "staleness", s: &s.Staleness, c: &c.Staleness}, {name: "alpha", s: &s.Alpha, c: &c.Alpha},
		{name: "neighbors", s: &s.GraphK, c: &c.GraphK}, {name: "window", s: &s.Window, c: &c.Window},
		{name: "refresh", s: &s.Refresh, c: &c.Refresh}, {name: "sweeps", s: &s.Sweeps, c: &c.Sweeps},
		{name: "init-sweeps", s: &s.InitSweeps, c: &c.InitSweeps}, {name: "sketch-dim", s: &s.SketchDim, c: &c.SketchDim},
		{name: "seed", s: &s.Seed, c: &c.Seed},
	}
}

// diff returns "name mine (the namespace's: theirs)" for each setting
// that differs, in settingFields' order.
func (s namespaceSettings) diff(theirs namespaceSettings) []string {
	var out []string
	fm, ft := settingFields(&s, &Config{}), settingFields(&theirs, &Config{})
	for i, f := range fm {
		a, b := fmt.Sprint(deref(f.s)), fmt.Sprint(deref(ft[i].s))
		if a != b {
			out = append(out, fmt.Sprintf("%s %s (the namespace's: %s)", f.name, a, b))
		}
	}
	return out
}

func deref(p any) any {
	switch p := p.(type) {
	case *int:
		return *p
	case *float64:
		return *p
	case *uint64:
		return *p
	}
	panic("distributed: setting of unknown type") // settingFields holds only the types above
}

// settingsReads bounds checkSettings' reads of settings that another
// instance created and this one cannot see yet: the waits between them sum
// to about 3.6 s.
const settingsReads = 8

// checkSettings stores c's settings in the namespace's bucket if it holds
// none yet (create-if-absent, so of instances starting at once exactly
// one writes), else compares them: an error names each setting of c that
// differs, with the namespace's value.
func checkSettings(ctx context.Context, kv jetstream.KeyValue, c Config) error {
	mine := c.settings()
	raw, err := json.Marshal(mine)
	if err != nil {
		return err
	}
	// A server that fails the request (a cluster still electing leaders)
	// is retried; a create that timed out but was stored answers "exists"
	// the next time and is then compared.
	for attempt := 0; ; attempt++ {
		created := false
		err = retry(ctx, func(ctx context.Context) error {
			_, err := kv.Create(ctx, keyConfig, raw)
			created = err == nil
			if errors.Is(err, jetstream.ErrKeyExists) {
				return nil // another instance's: compared below
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("distributed: namespace %q: storing its settings: %w", c.namespace(), err)
		}
		if created {
			return nil
		}
		e, gerr := kv.Get(ctx, keyConfig)
		if errors.Is(gerr, jetstream.ErrKeyNotFound) && attempt < settingsReads {
			// Deleted in between, or read from a replica that has not yet
			// received another instance's create (a replicated bucket
			// answers reads from any of its replicas): wait, then create
			// again.
			select {
			case <-ctx.Done():
				return fmt.Errorf("distributed: namespace %q: reading its settings: %w", c.namespace(), ctx.Err())
			case <-time.After(min(25*time.Millisecond<<attempt, time.Second)):
			}
			continue
		}
		if gerr != nil {
			return fmt.Errorf("distributed: namespace %q: reading its settings: %w", c.namespace(), gerr)
		}
		var theirs namespaceSettings
		if err := json.Unmarshal(e.Value(), &theirs); err != nil {
			return corrupt("namespace %q: settings: %v", c.namespace(), err)
		}
		if d := mine.diff(theirs); len(d) > 0 {
			return fmt.Errorf("distributed: namespace %q holds other settings than this instance's: %s; use the namespace's settings or another namespace",
				c.namespace(), strings.Join(d, ", "))
		}
		return nil
	}
}

// StoredConfig returns cfg with the settings that cfg's namespace holds
// (rank, partitions, staleness, alpha, neighbors, window, refresh, sweeps,
// init sweeps, sketch dimension, seed) in place of cfg's, and true; or cfg
// and false if the namespace holds none yet (no instance has started on
// it). It creates nothing.
func StoredConfig(ctx context.Context, nc *nats.Conn, cfg Config) (Config, bool, error) {
	return AdoptConfig(ctx, nc, cfg, func(string) bool { return false })
}

// AdoptConfig returns cfg with each setting for which given(name) is false
// replaced by the namespace's value, names being those of the command
// line's flags ("rank", "partitions", "staleness", "alpha", "neighbors",
// "window", "refresh", "sweeps", "init-sweeps", "sketch-dim", "seed"),
// and whether the namespace holds settings; it creates nothing. A setting
// given with a value other than the namespace's is left as given, for
// NewChainWorker and NewChainDriver to refuse with a message. An invalid
// cfg is refused before any request (Config.check).
func AdoptConfig(ctx context.Context, nc *nats.Conn, cfg Config, given func(name string) bool) (Config, bool, error) {
	if err := cfg.check(); err != nil {
		return cfg, false, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return cfg, false, fmt.Errorf("distributed: %w", err)
	}
	// A cluster just started answers JetStream requests only once it has
	// a meta leader: until then a lookup times out (it does not say "not
	// found"), so it is retried as a creation is.
	var kv jetstream.KeyValue
	var e jetstream.KeyValueEntry
	none := false
	err = retry(ctx, func(ctx context.Context) error {
		var err error
		if kv == nil {
			if kv, err = js.KeyValue(ctx, cfg.names().model); errors.Is(err, jetstream.ErrBucketNotFound) {
				none = true
				return nil
			} else if err != nil {
				return fmt.Errorf("bucket %s: %w", cfg.names().model, err)
			}
		}
		if e, err = kv.Get(ctx, keyConfig); errors.Is(err, jetstream.ErrKeyNotFound) {
			none = true
			return nil
		} else if err != nil {
			return fmt.Errorf("namespace %q: reading its settings: %w", cfg.namespace(), err)
		}
		return nil
	})
	if err != nil {
		return cfg, false, fmt.Errorf("distributed: %w", err)
	}
	if none {
		return cfg, false, nil
	}
	var theirs namespaceSettings
	if err := json.Unmarshal(e.Value(), &theirs); err != nil {
		return cfg, false, corrupt("namespace %q: settings: %v", cfg.namespace(), err)
	}
	out := cfg
	mine := cfg.settings()
	resolved := settingFields(&mine, &Config{})
	for i, f := range settingFields(&theirs, &out) {
		if given(f.name) || fmt.Sprint(deref(resolved[i].s)) == fmt.Sprint(deref(f.s)) {
			continue // as given, or already the namespace's (a default left unresolved)
		}
		switch p := f.c.(type) {
		case *int:
			*p = *f.s.(*int)
		case *float64:
			*p = *f.s.(*float64)
		case *uint64:
			*p = *f.s.(*uint64)
		}
	}
	return out, true, nil
}

// createWithin bounds the attempts to create or find a namespace's
// streams, buckets and object store; attemptWithin bounds one attempt.
// Instances that start at once on a new namespace of a cluster race to
// create the same objects, and the server may answer the losers late or
// never: they look the object up, and retry with backoff.
const (
	createWithin  = time.Minute
	attemptWithin = 5 * time.Second
)

// backoff paces the retries of a request to a cluster that is electing
// leaders: waits of 100 ms doubling to 2 s, for createWithin from the
// first failure.
type backoff struct {
	deadline time.Time
	wait     time.Duration
}

// pause sleeps before the next attempt and reports whether there is one:
// false once createWithin has passed since the first pause, or ctx ended.
func (b *backoff) pause(ctx context.Context) bool {
	if b.wait == 0 {
		b.deadline, b.wait = time.Now().Add(createWithin), 100*time.Millisecond
	}
	if ctx.Err() != nil || time.Now().Add(b.wait).After(b.deadline) {
		return false
	}
	sleep(ctx, b.wait)
	b.wait = min(2*b.wait, 2*time.Second)
	return ctx.Err() == nil
}

// retry runs attempt, each try bounded by attemptWithin, until it succeeds,
// fails with an error that retrying cannot cure (lasting), or backoff
// gives up; it returns the last error.
func retry(ctx context.Context, attempt func(context.Context) error) error {
	var b backoff
	for {
		actx, cancel := context.WithTimeout(ctx, attemptWithin)
		err := attempt(actx)
		cancel()
		if err == nil || lasting(err) || !b.pause(ctx) {
			return err
		}
	}
}

// The JetStream API's error codes (nats-server's
// jetstream_errors_generated.go) of the answers that retrying cannot
// change: the server's configuration or the request is at fault.
const (
	jsReplicasNotSupported  jetstream.ErrorCode = 10074 // replicas > 1 on a server that is not clustered
	jsInsufficientResources jetstream.ErrorCode = 10023 // more replicas or storage than the cluster can place
	jsStreamInvalidConfig   jetstream.ErrorCode = 10052 // a configuration the server refuses
	jsStreamNamePath        jetstream.ErrorCode = 10128 // a stream name with a path separator
	jsConsumerNamePath      jetstream.ErrorCode = 10127 // a consumer name with a path separator
	// jsNoPeers ("no suitable peers for placement") is retried: a cluster
	// answers it while its nodes are still joining, as it does for more
	// replicas than it has nodes.
	jsNoPeers jetstream.ErrorCode = 10005
)

// apiCode returns the JetStream API error code err carries, or 0.
func apiCode(err error) jetstream.ErrorCode {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil {
		return je.APIError().ErrorCode
	}
	return 0
}

// lasting reports whether err is one that retrying cannot cure: a
// replication the server cannot place (replicasError), or a name the
// client or the server refuses (the namespace's characters are checked
// first, Config.check).
func lasting(err error) bool {
	switch apiCode(err) {
	case jsReplicasNotSupported, jsInsufficientResources, jsStreamInvalidConfig, jsStreamNamePath, jsConsumerNamePath:
		return true
	}
	for _, e := range []error{jetstream.ErrInvalidStreamName, jetstream.ErrInvalidConsumerName, jetstream.ErrInvalidBucketName, jetstream.ErrInvalidStoreName} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// replicasError reports whether err says that the server cannot hold the
// replicas asked for: more than one on a server that is not clustered, or
// more than its cluster can place.
func replicasError(err error) bool {
	switch apiCode(err) {
	case jsReplicasNotSupported, jsInsufficientResources:
		return true
	}
	return false
}

// ensure returns the object that create makes, or, when create fails, the
// existing one that lookup finds; failing both, it retries (retry) and then
// returns the last error, prefixed by what.
func ensure[T any](ctx context.Context, what string, create, lookup func(context.Context) (T, error)) (T, error) {
	var h T
	err := retry(ctx, func(actx context.Context) error {
		var err error
		if h, err = create(actx); err != nil {
			if found, lerr := lookup(actx); lerr == nil {
				h, err = found, nil
			}
		}
		return err
	})
	switch {
	case err != nil && replicasError(err):
		return h, fmt.Errorf("distributed: %s: %w: the replicas of the namespace's streams and buckets (--replicas) exceed what the NATS server can hold: give at most the number of its cluster's nodes (1 for a server that is not clustered)", what, err)
	case err != nil && apiCode(err) == jsNoPeers:
		return h, fmt.Errorf("distributed: %s: %w, for %v: --replicas may be more than the cluster's nodes (give at most their number), or its nodes have not joined", what, err, createWithin)
	case err != nil:
		return h, fmt.Errorf("distributed: %s: %w", what, err)
	}
	return h, nil
}

// AwaitWorker returns nil once a live Worker of cfg's namespace shows
// itself (its next heartbeat: every Worker publishes one each quarter of
// its PinnedTTL, 0.5 s by default), calling report with the time waited
// so far every `every` without one. It returns ctx's error when ctx ends
// first. It needs no clock agreement with the server or the workers.
func AwaitWorker(ctx context.Context, nc *nats.Conn, cfg Config, every time.Duration, report func(waited time.Duration)) error {
	if err := cfg.check(); err != nil {
		return err
	}
	sub, err := nc.SubscribeSync(cfg.names().tickSubject())
	if err != nil {
		return fmt.Errorf("distributed: heartbeats of namespace %q: %w", cfg.namespace(), err)
	}
	defer sub.Unsubscribe()
	start := time.Now()
	for {
		wctx, cancel := context.WithTimeout(ctx, every)
		_, err := sub.NextMsgWithContext(wctx)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			report(time.Since(start))
		default:
			return fmt.Errorf("distributed: heartbeats of namespace %q: %w", cfg.namespace(), err)
		}
	}
}
