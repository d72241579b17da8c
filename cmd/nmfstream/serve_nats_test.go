//go:build nats

package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// serveNATS starts serve --nats against a server of the test's own and
// returns a function that posts a body to a route and decodes the JSON
// answer, one that reads /v1/stats, and one that cancels serve and checks
// that it exits 0 within 30 s.
func serveNATS(t *testing.T) (post func(path, body string, into any), stats func() natsStats, stop func()) {
	t.Helper()
	s := testNATS(t)
	return serveNATSOn(t, s.ClientURL())
}

// testNATS starts an embedded NATS server with JetStream on a free
// loopback port, stopped when the test ends.
func testNATS(t *testing.T) *natsserver.Server {
	t.Helper()
	s, err := natsembed.Start(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// serveNATSOn is serveNATS on the server at url, with more flags.
func serveNATSOn(t *testing.T, url string, flags ...string) (post func(path, body string, into any), stats func() natsStats, stop func()) {
	t.Helper()
	_, post, stats, stop = serveNATSAt(t, url, flags...)
	return post, stats, stop
}

// serveNATSAt is serveNATSOn that also returns the service's base URL.
func serveNATSAt(t *testing.T, url string, flags ...string) (base string, post func(path, body string, into any), stats func() natsStats, stop func()) {
	t.Helper()
	base, cancel, done, errb := startServeNATS(t, url, flags...)
	post = func(path, body string, into any) {
		t.Helper()
		resp, err := http.Post(base+path, "application/x-ndjson", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
	stats = func() natsStats {
		t.Helper()
		resp, err := http.Get(base + "/v1/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sum natsStats
		if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	stop = func() {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d: %s", code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve --nats did not stop")
		}
	}
	return base, post, stats, stop
}

// TestServeNATS runs serve --nats against a server of the test's own:
// records are predicted on arrival by the owner's learner (none before
// the first label, then from the labels), a bad record is rejected by
// offset and the others go on, late labels reach their sample or wait for
// it (pending), the counters are exact, and a cancel stops it cleanly.
func TestServeNATS(t *testing.T) {
	post, stats, stop := serveNATS(t)
	var r1, r2 natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"a2","x":[6,1,0,0],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"b2","x":[1,0,6,0],"label":"b"}
`, &r1)
	if len(r1.Predictions) != 4 || r1.Predictions[0].Pred != nil {
		t.Fatalf("first records: %+v, want 4 predictions, the first without one", r1.Predictions)
	}
	post("/v1/records", `{"id":"q1","x":[5,1,0,0]}
{"id":"bad","x":[1,-1,0,0]}
{"id":"q2","x":[0,1,5,0]}
`, &r2)
	if len(r2.Predictions) != 2 || len(r2.Rejected) != 1 || r2.Rejected[0].Offset != 5 {
		t.Fatalf("second records: %+v, rejected %+v; want 2 predictions and offset 5 rejected", r2.Predictions, r2.Rejected)
	}
	for i, want := range []string{"a", "b"} {
		p := r2.Predictions[i]
		if p.Pred == nil || *p.Pred != want || !(p.Score > 0 && p.Score <= 1) {
			t.Errorf("record %s: prediction %v (score %v), want %s", p.ID, p.Pred, p.Score, want)
		}
	}
	var lab labelsResponse
	post("/v1/labels", `{"id":"q1","label":"a"}
{"id":"nobody","label":"b"}
`, &lab)
	if lab.Applied != 1 || lab.Pending != 1 {
		t.Errorf("labels: %+v, want 1 applied and 1 pending", lab)
	}
	sum := stats()
	// q1 was predicted a, and its late label says a; a1 came before any
	// label (early); a2, b1, b2 were labeled on arrival, after a1's label.
	if sum.Records != 9 || sum.Samples != 6 || sum.Rejected != 1 || sum.LateLabels != 2 || sum.Pending != 1 ||
		sum.Early != 1 || sum.Labeled != 4 || sum.Partitions != 1 {
		t.Errorf("counters %+v", sum)
	}
	stop()
}

// TestServeNATSDocuments posts documents to serve --nats: the owner's
// learner makes them TF-IDF rows, as serve's does, and predicts them; a
// document of white space only is rejected by offset and answered from
// the class shares, and the counters are exact.
func TestServeNATSDocuments(t *testing.T) {
	post, stats, stop := serveNATS(t)
	var r1, r2 natsRecordsResponse
	post("/v1/records", `{"id":"s1","text":"the striker scored a late goal and the team won the football match","label":"sport"}
{"id":"s2","text":"the goalkeeper saved a penalty in the football match and the team won","label":"sport"}
{"id":"c1","text":"simmer the onions in butter then add garlic and fresh basil to the sauce","label":"cooking"}
{"id":"c2","text":"bake the bread dough with butter and garlic then serve with the tomato sauce","label":"cooking"}
`, &r1)
	if len(r1.Predictions) != 4 || len(r1.Rejected) != 0 {
		t.Fatalf("first documents: %+v, rejected %+v; want 4 predictions", r1.Predictions, r1.Rejected)
	}
	post("/v1/records", `{"id":"q1","text":"a penalty goal won the match for the team"}
{"id":"empty","text":"  \t  "}
{"id":"q2","text":"garlic butter sauce with basil and onions"}
`, &r2)
	// The empty document is rejected and still answered, from the class
	// shares of the labels before it (stages.Step.Featureless).
	if len(r2.Predictions) != 3 || len(r2.Rejected) != 1 || r2.Rejected[0].Offset != 5 || r2.Predictions[1].Offset != 5 {
		t.Fatalf("second documents: %+v, rejected %+v; want 3 predictions and offset 5 rejected", r2.Predictions, r2.Rejected)
	}
	for i, want := range []string{"sport", "", "cooking"} {
		p := r2.Predictions[i]
		if p.Pred == nil || want != "" && *p.Pred != want {
			t.Errorf("document %s: prediction %v, want %q (\"\": a class)", p.ID, p.Pred, want)
		}
	}
	if sum := stats(); sum.Records != 7 || sum.Samples != 6 || sum.Rejected != 1 {
		t.Errorf("counters %+v, want 7 records, 6 samples, 1 rejected", sum)
	}
	stop()
}

// TestServeNATSSharedOwner runs two serve --nats instances on one
// namespace, the second without owners of its own: both drive the one
// owner's learner, so the second predicts, by name, the documents posted
// to it from the documents and labels posted to the first (the owner's
// vectorizer and classes), and its counters are the owner's, over both.
func TestServeNATSSharedOwner(t *testing.T) {
	srv := testNATS(t)
	postA, _, stopA := serveNATSOn(t, srv.ClientURL())
	postB, statsB, stopB := serveNATSOn(t, srv.ClientURL(), "--workers", "0")
	var r1, r2 natsRecordsResponse
	postA("/v1/records", `{"id":"s1","text":"the striker scored a late goal and the team won the football match","label":"sport"}
{"id":"s2","text":"the goalkeeper saved a penalty in the football match and the team won","label":"sport"}
{"id":"c1","text":"simmer the onions in butter then add garlic and fresh basil to the sauce","label":"cooking"}
{"id":"c2","text":"bake the bread dough with butter and garlic then serve with the tomato sauce","label":"cooking"}
`, &r1)
	postB("/v1/records", `{"id":"q1","text":"a penalty goal won the match for the team"}
{"id":"q2","text":"garlic butter sauce with basil and onions"}
{"id":"q3","text":"roast the garlic then stir it into the tomato sauce"}
`, &r2)
	if len(r1.Predictions) != 4 || len(r2.Predictions) != 3 {
		t.Fatalf("%d and %d predictions, want 4 and 3", len(r1.Predictions), len(r2.Predictions))
	}
	for i, want := range []string{"sport", "cooking", "cooking"} {
		p := r2.Predictions[i]
		if p.Pred == nil || *p.Pred != want {
			t.Errorf("document %s posted to the second instance: prediction %v, want %s", p.ID, p.Pred, want)
		}
	}
	if sum := statsB(); sum.Records != 7 || sum.Samples != 7 {
		t.Errorf("the second instance's counters: %d records, %d samples; want the owner's 7 and 7", sum.Records, sum.Samples)
	}
	stopB()
	stopA()
}

// TestServeNATSStatsSettings checks that /v1/stats reports the learner's
// --window and --rank, as single-machine serve's does (they read 0).
func TestServeNATSStatsSettings(t *testing.T) {
	s := testNATS(t)
	_, stats, stop := serveNATSOn(t, s.ClientURL(), "--namespace", "statsettings", "--window", "500", "--rank", "10")
	if st := stats(); st.Window != 500 || st.Rank != 10 {
		t.Errorf("stats window %d, rank %d; want 500, 10", st.Window, st.Rank)
	}
	stop()
}

// TestServeNATSBatchOffsets posts requests of several batches (--batch 2)
// to serve --nats: every record's offset is its place in the stream, as
// serve's (a request's batches count from its first record), its reject
// too, and the counters count each record once.
func TestServeNATSBatchOffsets(t *testing.T) {
	s := testNATS(t)
	post, stats, stop := serveNATSOn(t, s.ClientURL(), "--batch", "2")
	var r1, r2 natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"q1","x":[5,1,0,0]}
{"id":"q2","x":[0,1,5,0]}
{"id":"q3","x":[4,1,0,0]}
`, &r1)
	post("/v1/records", `{"id":"q4","x":[5,1,1,0]}
{"id":"q5","x":[0,1,6,0]}
{"id":"bad","x":[1,-1,0,0]}
`, &r2)
	var got []int64
	for _, r := range []natsRecordsResponse{r1, r2} {
		for _, p := range r.Predictions {
			got = append(got, p.Offset)
		}
	}
	if want := []int64{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("offsets %v, want %v", got, want)
	}
	if len(r2.Rejected) != 1 || r2.Rejected[0].Offset != 7 {
		t.Errorf("rejected %+v, want offset 7", r2.Rejected)
	}
	if sum := stats(); sum.Records != 8 || sum.Samples != 7 || sum.Rejected != 1 {
		t.Errorf("counters %+v", sum)
	}
	stop()
}
