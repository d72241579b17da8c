//go:build nats

package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// waitFor waits until buf holds n occurrences of s, failing t after a
// minute.
func waitFor(t *testing.T, buf *syncBuffer, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); strings.Count(buf.String(), s) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %d× %q in a minute; stderr: %s", n, s, buf.String())
		}
	}
}

// TestWorkerServerRestart: the NATS server of a running worker stops and
// starts again on the same store and port. The worker says on stderr that
// the server is unreachable and then that it reconnected, takes its
// partition back, and answers a driver started after the restart with
// stream's predictions, byte for byte.
func TestWorkerServerRestart(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "js")
	s, err := natsembed.Start(store, "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	url := s.ClientURL()
	flags, outS := digitsReference(t, dir)

	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wout, werr syncBuffer
	wdone := make(chan int, 1)
	go func() {
		wdone <- run(wctx, []string{"worker", "--nats", url, "--namespace", "rs", "--pinned-ttl", "500ms"}, &wout, &werr)
	}()
	waitFor(t, &werr, "owner-0 taken", 1)

	port := s.Addr().(*net.TCPAddr).Port
	s.Shutdown()
	s.WaitForShutdown()
	waitFor(t, &werr, "NATS server at "+url+" unreachable since ", 1)
	s, err = natsembed.Start(store, "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	waitFor(t, &werr, "NATS server at "+url+" reconnected after ", 1)
	waitFor(t, &werr, "owner-0 taken", 2)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	outN := filepath.Join(dir, "nats.jsonl")
	var out, errb bytes.Buffer
	code := run(ctx, append([]string{"stream", "--nats", url, "--namespace", "rs", "--workers", "0",
		"--owner-timeout", "30s", "--pinned-ttl", "500ms", "-out", outN}, flags...), &out, &errb)
	if code != 0 {
		t.Fatalf("stream --nats --workers 0 after the restart: exit %d: %s; worker: %s", code, errb.String(), werr.String())
	}
	if a, b := readFile(t, outS), readFile(t, outN); !bytes.Equal(a, b) {
		t.Errorf("the worker's predictions after the restart differ from stream's (%d and %d bytes)", len(b), len(a))
	}
	stop()
	if code := <-wdone; code != 0 {
		t.Fatalf("worker: exit %d: %s", code, werr.String())
	}
}

// TestWorkerBadNamespaceOrReplicas: an invalid --namespace, and more
// --replicas than a one-node server holds, end the worker at once (exit 1)
// with an error naming the flag.
func TestWorkerBadNamespaceOrReplicas(t *testing.T) {
	s := testNATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--namespace", "a.b"}, "--namespace"},
		{[]string{"--namespace", "a b"}, "--namespace"},
		{[]string{"--namespace", "a>"}, "--namespace"},
		{[]string{"--replicas", "5"}, "--replicas"},
	} {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"worker", "--nats", s.ClientURL()}, c.args...), &out, &errb)
		if code == 0 || ctx.Err() != nil || !strings.Contains(errb.String(), c.flag) {
			t.Errorf("worker %v: exit %d, stderr %q; want a failure naming %s, at once", c.args, code, errb.String(), c.flag)
		}
	}
}
