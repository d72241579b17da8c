//go:build nats

package distributed

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// TestBasisLargerThanMessage runs the synchronous oracle on a server whose
// max_payload (64 KiB) is smaller than U (1,200×8×8 bytes = 75 KiB) and
// than the deltas' ΔB: both travel through the object store, the basis key
// holding a reference, and U still equals the single-machine updates to
// rounding; only the last few versions' objects stay in the store.
func TestBasisLargerThanMessage(t *testing.T) {
	const n, d, k, rounds, parts = 60, 1200, 8, 10, 2
	s, err := natsembed.StartPayload(t.TempDir(), "127.0.0.1", 0, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	url := s.ClientURL()
	nc := connect(t, url)
	if nc.MaxPayload() != 64<<10 {
		t.Fatalf("server max_payload %d, want %d", nc.MaxPayload(), 64<<10)
	}
	samples := clusteredSamples(n, d, 4, 8)
	cfg := Config{Partitions: parts, Rank: k, Rounds: rounds, Seed: 5, PinnedTTL: time.Second}
	ctx := context.Background()
	part := publishAll(t, nc, cfg, samples)
	_, _, stop := runWorkers(t, url, cfg, 2)
	st := waitState(t, nc, cfg, 60*time.Second, func(s State) bool { return s.Version == rounds })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.Samples != n || st.Deltas != parts*rounds {
		t.Errorf("counters: %d samples in %d deltas, want %d in %d", st.Samples, st.Deltas, n, parts*rounds)
	}
	u := singleMachine(t, rowsOf(samples), part, cfg, rounds)
	var diff mat.Dense
	diff.Sub(st.U, u)
	// 1e-9: as the oracle with U in one message.
	if rel := mat.Norm(&diff, 2) / mat.Norm(u, 2); rel > 1e-9 {
		t.Errorf("U differs from the single-machine updates by %.3g (relative)", rel)
	}

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, cfg.names().model)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, keyBasis)
	if err != nil {
		t.Fatal(err)
	}
	if refName(e.Value()) == "" || len(e.Value()) > 1024 {
		t.Errorf("the basis key holds %d bytes and no reference", len(e.Value()))
	}
	obs, err := js.ObjectStore(ctx, cfg.names().snapshots)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := obs.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var us, deltas int
	for _, in := range infos {
		switch {
		case strings.HasPrefix(in.Name, "u-"):
			us++
		case strings.HasPrefix(in.Name, "delta-"):
			deltas++
		}
	}
	// Two coordinators at most held the role: each leaves keptVersions.
	if us == 0 || us > 2*keptVersions {
		t.Errorf("%d objects of U in the store, want 1 to %d", us, 2*keptVersions)
	}
	if deltas == 0 {
		t.Error("no delta went through the object store")
	}
	t.Logf("%d objects of U, %d of deltas; basis key %d bytes", us, deltas, len(e.Value()))
}
