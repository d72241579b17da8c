//go:build nats

package distributed

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/nmfstream/nmfstream/stages"
)

// TestOwnerSkipsUnreadableMessages puts messages that are not the chain's
// on a partition's batch subject (no driver, impossible chunk headers, a
// payload that does not decode) before and between a driver's batches:
// the owner logs and skips each (Stats.Skipped), and its answers are those
// of a run without them, where one such message stopped every owner of the
// partition for good.
func TestOwnerSkipsUnreadableMessages(t *testing.T) {
	const nb, b, D = 6, 10, 20
	batches := wideBatches(nb, b, D, everyThird)
	settings := []byte(`{"Rank":3,"Seed":4}`)
	cfg := Config{Namespace: "poison", Partitions: 1, Rank: 3, PinnedTTL: 500 * time.Millisecond, Warm: -1}

	ncRef, urlRef := startServer(t)
	want := runChain(t, ncRef, urlRef, cfg, settings, batches)

	nc, url := startServer(t)
	ctx, d := startDriver(t, nc, cfg, settings) // makes the namespace's streams
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subject := cfg.names().batchSubject(0)
	poison := func(h map[string]string, data string) {
		t.Helper()
		msg := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: []byte(data)}
		for k, v := range h {
			msg.Header.Set(k, v)
		}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	poison(nil, "no headers")
	poison(map[string]string{hdrDriver: "evil", hdrBatch: "0", hdrChunks: "2", hdrChunk: "7"}, "x")
	ws, _, stop := runWorkersOf(t, url, 1, func(nc *nats.Conn) (*Worker, error) {
		w, err := NewChainWorker(context.Background(), nc, cfg, testLearner)
		if err == nil {
			w.Log = func(line string) { t.Log(line) }
		}
		return w, err
	})
	var got []*ChainStep
	for k, bt := range batches {
		if k == 3 {
			poison(map[string]string{hdrDriver: "evil", hdrBatch: "1"}, "not a share")
		}
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		st, err := d.Receive(ctx)
		if err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		got = append(got, st)
	}
	skipped := ws[0].Stats().Skipped
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	sameSteps(t, got, want)
	if skipped != 3 {
		t.Errorf("%d messages skipped, want the 3 unreadable ones", skipped)
	}
}
