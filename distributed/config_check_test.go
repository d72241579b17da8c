//go:build nats

package distributed

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// countRequests counts the JetStream API requests whose subject starts
// with prefix (e.g. "$JS.API.STREAM.CREATE.") seen on url from now on.
func countRequests(t *testing.T, url, prefix string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	spy := connect(t, url)
	if _, err := spy.Subscribe("$JS.API.>", func(m *nats.Msg) {
		if strings.HasPrefix(m.Subject, prefix) {
			n.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestInvalidNamespaceRefused: a namespace with a character that NATS
// names cannot hold ('.', a space, '*', '>') is refused by every entry
// point before any JetStream request, with an error naming --namespace
// and the allowed characters.
func TestInvalidNamespaceRefused(t *testing.T) {
	nc, url := startServer(t)
	requests := countRequests(t, url, "$JS.API.")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ns := range []string{"a.b", "a b", "a*", "a>", "ns.>"} {
		cfg := Config{Namespace: ns, Partitions: 1}
		_, werr := NewChainWorker(ctx, nc, cfg, testLearner)
		_, derr := NewChainDriver(ctx, nc, cfg, []byte(`{}`))
		_, _, aerr := AdoptConfig(ctx, nc, cfg, func(string) bool { return false })
		wait := AwaitWorker(ctx, nc, cfg, time.Second, func(time.Duration) {})
		for i, err := range []error{werr, derr, aerr, wait} {
			if err == nil || !strings.Contains(err.Error(), "--namespace") || !strings.Contains(err.Error(), "letters, digits, '-' and '_'") {
				t.Errorf("namespace %q, entry point %d: %v; want an error naming --namespace and the allowed characters", ns, i, err)
			}
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the spy counts asynchronously
	if n := requests.Load(); n != 0 {
		t.Errorf("%d JetStream requests for invalid namespaces; want none", n)
	}
}

// TestReplicasRefusedAtOnce: more replicas than a one-node server can hold
// fail at the first request that asks for them (one stream creation, not
// a minute of retries), with an error naming --replicas.
func TestReplicasRefusedAtOnce(t *testing.T) {
	nc, url := startServer(t)
	creates := countRequests(t, url, "$JS.API.STREAM.CREATE.")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{Namespace: "wide", Partitions: 1, Replicas: 5}
	_, werr := NewChainWorker(ctx, nc, cfg, testLearner)
	_, derr := NewChainDriver(ctx, nc, cfg, []byte(`{}`))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, err := range []error{werr, derr} {
		if err == nil || !strings.Contains(err.Error(), "--replicas") || ctx.Err() != nil {
			t.Errorf("entry point %d: %v; want an error naming --replicas, at once", i, err)
		}
	}
	// The spy's handler counts asynchronously: wait for the two requests,
	// then let a retry, if any, show.
	for deadline := time.Now().Add(10 * time.Second); creates.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if n := creates.Load(); n != 2 {
		t.Errorf("%d stream creations by a worker and a driver; want 2, one each, not retried", n)
	}
}
