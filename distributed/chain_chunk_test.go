//go:build nats

package distributed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

// smallPayload is the max_payload of the chunk tests' small server: the
// shares and answers they send are several times larger.
const smallPayload = 64 << 10

// startServerPayload is startServer with the server's max_payload.
func startServerPayload(t testing.TB, maxPayload int32) (*nats.Conn, string) {
	t.Helper()
	s, err := natsembed.StartPayload(t.TempDir(), "127.0.0.1", 0, maxPayload)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return connect(t, s.ClientURL()), s.ClientURL()
}

// wideBatches returns nb batches of b dense records of dimension d (ids
// "0", "1", …), labeled by label (sample i, its cluster), and every batch
// after the first with a late label for a sample of the batch before.
func wideBatches(nb, b, d int, label func(i, cluster int) (string, bool)) []*record.Batch {
	samples := clusteredSamples(nb*b, d, 4, 7)
	var out []*record.Batch
	for k := range nb {
		x := mat.NewDense(b, d, nil)
		bt := &record.Batch{Form: record.FormDense, Dense: x}
		off := int64(k * (b + 1))
		for i := range b {
			s := samples[k*b+i]
			x.SetRow(i, s.Dense)
			lab, ok := label(k*b+i, s.Label)
			bt.IDs = append(bt.IDs, fmt.Sprint(k*b+i))
			bt.Labels, bt.Labeled = append(bt.Labels, lab), append(bt.Labeled, ok)
			bt.Offsets = append(bt.Offsets, off+int64(i))
		}
		if k > 0 {
			prev := samples[(k-1)*b+2]
			lab, _ := label((k-1)*b+2, prev.Label)
			bt.LateLabels = []record.LateLabel{{Offset: off + int64(b), ID: fmt.Sprint((k-1)*b + 2), Label: lab}}
		}
		out = append(out, bt)
	}
	return out
}

// everyThird labels every third sample with its cluster.
func everyThird(i, cluster int) (string, bool) {
	if i%3 == 0 {
		return fmt.Sprint(cluster), true
	}
	return "", false
}

// runChain sends batches through a driver of cfg's namespace on nc, with
// P workers on url, one batch at a time, and returns every answer.
func runChain(t *testing.T, nc *nats.Conn, url string, cfg Config, settings []byte, batches []*record.Batch) []*ChainStep {
	t.Helper()
	_, _, stop := runWorkersOf(t, url, cfg.Partitions, func(nc *nats.Conn) (*Worker, error) {
		w, err := NewChainWorker(context.Background(), nc, cfg, testLearner)
		if err == nil {
			w.Log = func(line string) { t.Log(line) }
		}
		return w, err
	})
	ctx, d := startDriver(t, nc, cfg, settings)
	var out []*ChainStep
	for k, bt := range batches {
		if _, err := d.Send(ctx, stages.NewFeatures(bt)); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		st, err := d.Receive(ctx)
		if err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
		out = append(out, st)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSteps fails t unless got and want agree field for field: every
// prediction (score bit for bit), reject, duplicate, the counters, the
// pending labels and the scores (bit for bit).
func sameSteps(t *testing.T, got, want []*ChainStep) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	bits := func(s stages.Scores) [2]uint64 {
		return [2]uint64{math.Float64bits(s.BalancedAccuracy), math.Float64bits(s.MacroF1)}
	}
	for k := range got {
		checkStep(t, k, got[k].Step, want[k].Step)
		if got[k].Counters != want[k].Counters || got[k].Pending != want[k].Pending || bits(got[k].Scores) != bits(want[k].Scores) {
			t.Fatalf("batch %d: counters %+v pending %d scores %+v; want %+v, %d, %+v", k,
				got[k].Counters, got[k].Pending, got[k].Scores, want[k].Counters, want[k].Pending, want[k].Scores)
		}
	}
}

// TestChainChunkedShares runs the same wide stream (shares of about
// 160 KB, with the labeled samples of the other partition as context)
// through 2 partitions, on a server of 64 KiB messages and on the default
// one: every share crosses the small server in chunks (the batch stream
// holds more messages than shares), and every answer (predictions,
// rejects, duplicates, counters, scores) is the default server's. With a
// common start, whose state object is stored in chunks the small server
// takes (Worker.putObject).
func TestChainChunkedShares(t *testing.T) {
	const nb, b, D, P = 12, 20, 2000, 2
	batches := wideBatches(nb, b, D, everyThird)
	settings := []byte(`{"Rank":3,"Seed":4}`)
	cfg := Config{Namespace: "wide", Partitions: P, Rank: 3, PinnedTTL: 500 * time.Millisecond, Warm: 40}
	if share := 8 * D * b / P; share < 2*smallPayload {
		t.Fatalf("shares of about %d bytes do not test chunks of %d", share, smallPayload)
	}

	ncBig, urlBig := startServer(t)
	want := runChain(t, ncBig, urlBig, cfg, settings, batches)
	ncSmall, urlSmall := startServerPayload(t, smallPayload)
	got := runChain(t, ncSmall, urlSmall, cfg, settings, batches)
	sameSteps(t, got, want)

	last := got[nb-1].Counters
	if last.Samples != nb*b || last.Labeled == 0 || last.LateLabels != nb-1 {
		t.Fatalf("the stream lacks samples, labels or late labels: %+v", last)
	}
	for _, s := range []struct {
		nc   *nats.Conn
		name string
		more bool
	}{{ncBig, "default", false}, {ncSmall, "64 KiB", true}} {
		js, err := jetstream.New(s.nc)
		if err != nil {
			t.Fatal(err)
		}
		n := streamMsgs(t, js, cfg.names().batchStream())
		if s.more && n < 2*nb*P || !s.more && n != nb*P {
			t.Errorf("the %s server's batch stream holds %d messages for %d shares", s.name, n, nb*P)
		}
	}
}

// manyClasses labels every sample with a class of its own, of a long
// name: an answer's confusion names every class the owner knows.
func manyClasses(i, _ int) (string, bool) {
	return fmt.Sprintf("class-%05d-%s", i, strings.Repeat("x", 90)), true
}

// TestChainChunkedAnswer: with 1,000 classes of 100-byte names, an
// owner's answer (its confusion names them all) is larger than the small
// server's messages, and arrives in chunks: the driver's predictions,
// counters and scores are one in-process Learner's, bit for bit.
func TestChainChunkedAnswer(t *testing.T) {
	const nb, b = 10, 100
	batches := wideBatches(nb, b, 12, manyClasses)
	settings := []byte(`{"Rank":3,"Seed":4}`)
	cfg := Config{Namespace: "classes", Partitions: 1, Rank: 3, PinnedTTL: 500 * time.Millisecond}
	ref, err := testLearner(settings)
	if err != nil {
		t.Fatal(err)
	}
	var want []*ChainStep
	for _, bt := range batches {
		st, err := ref.Learn(bt)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, &ChainStep{Step: st, Counters: ref.Counters(), Scores: ref.Scores(), Pending: ref.Pending()})
	}
	if c := ref.Confusion(); len(c.Classes) < 900 {
		t.Fatalf("the learner's confusion has %d classes", len(c.Classes))
	}
	nc, url := startServerPayload(t, smallPayload)
	got := runChain(t, nc, url, cfg, settings, batches)
	for k := range want {
		want[k].Scores.Majority = got[k].Scores.Majority // not on the wire
	}
	sameSteps(t, got, want)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, js, cfg.names().predStream()); n <= nb {
		t.Errorf("the answer stream holds %d messages for %d answers: none was chunked", n, nb)
	}
}

// TestChainChunkedTakeover stops the owner of the partition mid-stream on
// the small server, with snapshots every 3 batches: the instance that
// takes over restores the snapshot (taken after a chunked share's last
// chunk) and replays chunked shares, and the driver receives every
// answer once, bit-identical to one in-process Learner's.
func TestChainChunkedTakeover(t *testing.T) {
	const nb, b, D, N, M = 16, 10, 2000, 3, 8
	nc, url := startServerPayload(t, smallPayload)
	cfg := Config{Namespace: "wide-snap", Partitions: 1, Rank: 3, PinnedTTL: 500 * time.Millisecond}
	// The survivor replays the batches after the last snapshot (batch 5):
	// 6 and 7, each a chunked share.
	other, replayed := takeoverRun(t, nc, url, cfg, N, wideBatches(nb, b, D, everyThird), M)
	if other.Takeovers == 0 || replayed < 1 || replayed > N {
		t.Errorf("the surviving instance took %d roles over and replayed %d batches; want a takeover replaying 1 to %d", other.Takeovers, replayed, N)
	}
	// What the trims left of the batch stream: the last share's chunks.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, js, cfg.names().batchStream()); n < 3 {
		t.Errorf("the batch stream holds %d messages: the shares of %d bytes were not chunked", n, 8*D*b)
	}
}

// TestChainDriverRefusesOtherSettingsNamed: a driver refused for other
// learner settings is told the keys that differ, with both values, not
// both documents.
func TestChainDriverRefusesOtherSettingsNamed(t *testing.T) {
	nc, _ := startServer(t)
	ctx := context.Background()
	cfg := Config{Namespace: "named", Partitions: 1, Rank: 3}
	held := []byte(`{"Rank":20,"Seed":1,"Window":5000,"Space":"` + strings.Repeat("s", 300) + `"}`)
	d, err := NewChainDriver(ctx, nc, cfg, held)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, err = NewChainDriver(ctx, nc, cfg, []byte(`{"Rank":10,"Seed":1,"Window":10000,"Space":"`+strings.Repeat("s", 300)+`","Extra":true}`))
	want := `namespace "named" holds other learner settings: Extra absent here true, Rank 20 here 10, Window 5000 here 10000: use its settings or another namespace`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("other settings: %v\nwant it to end %q", err, want)
	}
	if strings.Contains(err.Error(), "sss") {
		t.Errorf("the message repeats a key that does not differ: %v", err)
	}
	// Not JSON objects, or differing only in spacing and order: no key
	// named (putSettings then gives both documents, as before).
	for _, pair := range [][2]string{{`[1]`, `{"a":1}`}, {`{"a":1}`, `"x"`}, {`{"a":1,"b":[1, 2]}`, `{"b":[1,2], "a": 1}`}} {
		if got := settingsDiff([]byte(pair[0]), []byte(pair[1])); got != "" {
			t.Errorf("%s against %s: %q", pair[0], pair[1], got)
		}
	}
}

// fakeMsg is a stored message of a stream, for takeMsg and take.
type fakeMsg struct {
	jetstream.Msg
	subject string
	h       nats.Header
	data    []byte
	seq     uint64
	at      time.Time
}

func (m *fakeMsg) Headers() nats.Header { return m.h }
func (m *fakeMsg) Data() []byte         { return m.data }
func (m *fakeMsg) Subject() string      { return m.subject }
func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}, Timestamp: m.at}, nil
}

// TestOwnerChunksInterleaved feeds an owner the chunks of two drivers'
// shares interleaved, as two drivers publishing to one partition store
// them: each share is learned once, when its last chunk is read, never
// half; the owner's consumed sequence (o.seq, what a snapshot records and
// the trim purges to) stays before the first chunk of a share not yet
// whole; a replay from it learns only that share (the chunks of one
// learned are dropped); and a share whose driver stopped amid it is given
// up once its chunks have left the duplicate window. The driver's side:
// a Position never lies after a chunk read of an answer not yet whole.
func TestOwnerChunksInterleaved(t *testing.T) {
	nc, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{Namespace: "inter", Partitions: 1, Rank: 3}
	settings := []byte(`{"Rank":3,"Seed":4}`)
	w, err := NewChainWorker(ctx, nc, cfg, testLearner)
	if err != nil {
		t.Fatal(err)
	}
	batches := wideBatches(3, 10, 300, everyThird)
	t0 := time.Unix(1e9, 0)
	chunks := func(drv string, b int64, bt *record.Batch) []*fakeMsg {
		data, err := encodeShare(stages.NewFeatures(bt), nil)
		if err != nil {
			t.Fatal(err)
		}
		msg := &nats.Msg{Subject: cfg.names().batchSubject(0), Header: nats.Header{}, Data: data}
		msg.Header.Set(hdrDriver, drv)
		msg.Header.Set(hdrBatch, fmt.Sprint(b))
		msgs, _ := splitMsg(msg, chainMsgID(drv, b, 0), int64(len(data)/3+2*chunkRoom))
		if len(msgs) != 3 {
			t.Fatalf("a share of %d bytes in %d chunks", len(data), len(msgs))
		}
		var out []*fakeMsg
		for _, m := range msgs {
			out = append(out, &fakeMsg{subject: m.Subject, h: m.Header, data: m.Data, at: t0})
		}
		return out
	}
	a, b := chunks("A", 0, batches[0]), chunks("B", 0, batches[1])
	feed := func(o *ownerState, l *stages.Learner, seq uint64, m *fakeMsg) (*stages.Learner, bool) {
		t.Helper()
		m.seq = seq
		l, whole, err := w.takeMsg(ctx, l, o, 0, m)
		if err != nil {
			t.Fatalf("sequence %d: %v", seq, err)
		}
		return l, whole
	}
	l, err := testLearner(settings)
	if err != nil {
		t.Fatal(err)
	}
	o := &ownerState{last: map[string]int64{}}
	order := []*fakeMsg{a[0], b[0], a[2], b[1], a[1], b[2]} // sequences 1 to 6
	wantSeq := []uint64{0, 0, 0, 0, 1, 6}
	wantBatches := []int64{0, 0, 0, 0, 1, 2}
	for i, m := range order {
		var whole bool
		l, whole = feed(o, l, uint64(i+1), m)
		if o.seq != wantSeq[i] || o.batches != wantBatches[i] || whole != (i == 4 || i == 5) {
			t.Fatalf("after sequence %d: consumed to %d, %d batches learned, whole %v; want %d, %d", i+1, o.seq, o.batches, whole, wantSeq[i], wantBatches[i])
		}
	}
	// A replay after a snapshot taken at sequence 5 (A learned, B not
	// whole): from sequence 2, B's chunks and A's last.
	l2, err := testLearner(settings)
	if err != nil {
		t.Fatal(err)
	}
	o2 := &ownerState{seq: 1, last: map[string]int64{"A": 0}}
	for i, m := range order[1:] {
		l2, _ = feed(o2, l2, uint64(i+2), m)
	}
	if o2.batches != 1 || o2.seq != 6 || len(o2.chunks) != 0 || o2.last["B"] != 0 {
		t.Errorf("replay from sequence 2: %d batches learned, consumed to %d, %d shares held, last %v; want B's alone", o2.batches, o2.seq, len(o2.chunks), o2.last)
	}
	// Driver C stops amid its share: its chunk holds the consumed sequence
	// back until a message read more than the duplicate window later.
	c := chunks("C", 0, batches[2])
	feed(o, l, 7, c[0])
	late := chunks("A", 1, batches[2])
	late[0].at = t0.Add(chainDuplicates / 2)
	feed(o, l, 8, late[0])
	if o.seq != 6 || len(o.chunks) != 2 {
		t.Fatalf("consumed to %d with %d shares held, want 6 and 2", o.seq, len(o.chunks))
	}
	late[1].at = t0.Add(chainDuplicates + time.Second)
	feed(o, l, 9, late[1])
	if o.seq != 7 || len(o.chunks) != 1 {
		t.Errorf("after the duplicate window: consumed to %d with %d shares held, want 7 (C's chunk given up) and 1", o.seq, len(o.chunks))
	}

	// The driver: chunk 0 of batch 0's answer at sequence 10.
	_, d := startDriver(t, nc, cfg, settings)
	ans, err := encodeStep(&stages.Step{}, stages.Counters{}, stages.Scores{}, stages.Confusion{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: cfg.names().predSubject(d.name), Header: nats.Header{}, Data: ans}
	msg.Header.Set(hdrBatch, "0")
	msg.Header.Set(hdrPart, "0")
	parts, _ := splitMsg(msg, "x", int64(chunkRoom+40))
	if len(parts) < 2 {
		t.Fatalf("an answer of %d bytes in %d chunks", len(ans), len(parts))
	}
	d.seq = 10
	if err := d.take(&fakeMsg{subject: msg.Subject, h: parts[0].Header, data: parts[0].Data, seq: 10}); err != nil {
		t.Fatal(err)
	}
	if pos := d.Position(); pos.AnswerSeq != 9 || len(d.got) != 0 {
		t.Errorf("after chunk 0 of batch 0's answer at sequence 10: position %+v, %d answers whole", pos, len(d.got))
	}
	for i, p := range parts[1:] {
		d.seq = uint64(11 + i)
		if err := d.take(&fakeMsg{subject: msg.Subject, h: p.Header, data: p.Data, seq: d.seq}); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.got[0]) != 1 || len(d.chunks) != 0 {
		t.Errorf("every chunk read: %d answers of batch 0, %d held in chunks", len(d.got[0]), len(d.chunks))
	}
}
