//go:build nats

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed"
)

// TestStreamNATSTakesNamespaceSettings starts a namespace with settings
// other than stream --nats's defaults (as worker --partitions 2 does):
// a stream that gives none of those flags runs with the
// namespace's, and one that gives another partition count is refused
// with a message naming it and the namespace's value.
func TestStreamNATSTakesNamespaceSettings(t *testing.T) {
	s := testNATS(t)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	first := distributed.Config{Namespace: "ops", Partitions: 2}
	if _, err := distributed.NewChainWorker(context.Background(), nc, first, learnerOf); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "digits.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	code, _, stderr := runCmd(t, "stream", "--nats", s.ClientURL(), "--namespace", "ops", "--in", in, "--partitions", "3", "--json")
	if code == 0 || !strings.Contains(stderr, "partitions 3 (the namespace's: 2)") {
		t.Errorf("stream --partitions 3 on a 2-partition namespace: exit %d, stderr %q", code, stderr)
	}
	raw := mustRun(t, "stream", "--nats", s.ClientURL(), "--namespace", "ops", "--in", in, "--pinned-ttl", "500ms", "--json")
	var sum natsStats
	if err := json.Unmarshal([]byte(raw), &sum); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if sum.Partitions != 2 || sum.Samples == 0 || sum.Samples+sum.LateLabels+sum.Rejected != sum.Records {
		t.Errorf("%d partitions, %d samples of %d records; want the namespace's 2 partitions and every record learned", sum.Partitions, sum.Samples, sum.Records)
	}
}

// TestStreamNATSWithoutOwner runs stream --nats with no instance in the
// process and none elsewhere: it says that it waits, then fails after
// --owner-timeout naming the namespace, instead of hanging.
func TestStreamNATSWithoutOwner(t *testing.T) {
	s := testNATS(t)
	in := filepath.Join(t.TempDir(), "digits.arrow")
	writeDigitsStream(t, in, 0.1, 100)
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runCmd(t, "stream", "--nats", s.ClientURL(), "--namespace", "alone", "--in", in, "--workers", "0", "--owner-timeout", "4s")
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		if r.code == 0 || !strings.Contains(r.stderr, `no live worker on namespace "alone"`) || !strings.Contains(r.stderr, "waiting") || !strings.Contains(r.stderr, "--owner-timeout 4s") {
			t.Errorf("exit %d, stderr %q: want a waiting message, then a failure after --owner-timeout", r.code, r.stderr)
		}
	case <-time.After(time.Minute):
		t.Fatal("stream --nats with no live worker still runs after a minute")
	}
}
