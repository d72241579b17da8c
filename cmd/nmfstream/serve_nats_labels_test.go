//go:build nats

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// startServeCmd starts serve (one machine) with args on a free port and
// returns its base URL; it is stopped, and must exit 0, when the test
// ends.
func startServeCmd(t *testing.T, args ...string) string {
	t.Helper()
	base, cancel, done, errb := startListening(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("serve: exit %d: %s", code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return base
}

// labelsClient bounds every request of these tests, so that a service
// that does not answer fails the test rather than hanging it.
var labelsClient = &http.Client{Timeout: 3 * time.Minute}

// postAnswer posts body to base+path and returns the JSON answer as a map
// (so that a key's absence shows), failing t unless the status is 200.
func postAnswer(t *testing.T, base, path, body string) map[string]any {
	t.Helper()
	resp, err := labelsClient.Post(base+path, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s%s: %v", base, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s%s: %s, %v (%v)", base, path, resp.Status, m, err)
	}
	return m
}

// ghostLabels returns n label lines for the ids prefix0, prefix1, …, which
// no record has, all of label a.
func ghostLabels(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"id\":\"%s%d\",\"label\":\"a\"}\n", prefix, i)
	}
	return b.String()
}

// labelCountsOf returns an answer of POST /v1/labels as its counts,
// "forgotten" −1 when the answer has no such key.
func labelCountsOf(m map[string]any) (applied, pending, forgotten, rejected int) {
	num := func(k string) int {
		v, ok := m[k].(float64)
		if !ok {
			return -1
		}
		return int(v)
	}
	rej, _ := m["rejected"].([]any)
	return num("applied"), num("pending"), num("forgotten"), len(rej)
}

// TestServeNATSLabelsAsServe posts the same records and labels to serve
// and to serve --nats (one owner): labels for ids never seen, more than the
// bound on the labels that wait for their record (max(10 · --window,
// 100,000), the learner's horizon; no flag sets it), so that first the
// waiting labels of earlier requests and then of the request itself are
// forgotten. Every answer of serve --nats has serve's applied, pending
// and forgotten (absent where serve's is), each the expected count; then
// records whose waiting label survived are learned with it (labeled and
// scored) and those whose label was forgotten without, and the counters
// of /metrics agree with serve's.
func TestServeNATSLabelsAsServe(t *testing.T) {
	if testing.Short() {
		t.Skip("posts 230,000 labels to two services")
	}
	flags := []string{"--window", "1000", "--rank", "2"}
	one := startServeCmd(t, flags...)
	srv := testNATS(t)
	nats, _, _, stop := serveNATSAt(t, srv.ClientURL(), append([]string{"--namespace", "labels"}, flags...)...)
	defer stop()
	both := func(path, body string) (single, chain map[string]any) {
		t.Helper()
		return postAnswer(t, one, path, body), postAnswer(t, nats, path, body)
	}
	both("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"a2","x":[6,1,0,0],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"b2","x":[1,0,6,0],"label":"b"}
`)
	for k, c := range []struct {
		body                        string
		applied, pending, forgotten int // forgotten −1: absent
	}{
		// Two labels reach their records; 60,000 wait.
		{`{"id":"a1","label":"a"}` + "\n" + ghostLabels("g", 60000) + `{"id":"b1","label":"b"}` + "\n", 2, 60000, -1},
		// 120,000 would wait: the oldest 20,000 (of the request before)
		// are forgotten.
		{ghostLabels("h", 60000), 0, 60000, 20000},
		// 110,000 more: the 100,000 waiting, then 10,000 of these.
		{ghostLabels("k", 110000), 0, 100000, 110000},
	} {
		single, chain := both("/v1/labels", c.body)
		sa, sp, sf, sr := labelCountsOf(single)
		ca, cp, cf, cr := labelCountsOf(chain)
		if sa != c.applied || sp != c.pending || sf != c.forgotten || sr != 0 {
			t.Fatalf("labels %d: serve answered applied %d, pending %d, forgotten %d, %d rejected; want %d, %d, %d, 0",
				k, sa, sp, sf, sr, c.applied, c.pending, c.forgotten)
		}
		if ca != sa || cp != sp || cf != sf || cr != sr {
			t.Fatalf("labels %d: serve --nats answered applied %d, pending %d, forgotten %d, %d rejected; serve %d, %d, %d, %d",
				k, ca, cp, cf, cr, sa, sp, sf, sr)
		}
	}
	checkWaitingLearned(t, one, nats)
}

// checkWaitingLearned posts to serve (one) and serve --nats (nats), after
// TestServeNATSLabelsAsServe's labels, records of two ids whose label
// waits (k109999, k50000) and of two whose label was forgotten (k0, g7):
// both learn the first two labeled, each a scored prediction, and the two
// others unlabeled, and their counters agree.
func checkWaitingLearned(t *testing.T, one, nats string) {
	t.Helper()
	before := map[string]map[string]float64{"serve": natsMetrics(t, one), "serve --nats": natsMetrics(t, nats)}
	body := `{"id":"k109999","x":[5,1,0,0]}
{"id":"k0","x":[4,1,0,1]}
{"id":"k50000","x":[6,0,1,0]}
{"id":"g7","x":[5,0,1,1]}
`
	postAnswer(t, one, "/v1/records", body)
	postAnswer(t, nats, "/v1/records", body)
	after := map[string]map[string]float64{"serve": natsMetrics(t, one), "serve --nats": natsMetrics(t, nats)}
	for name, m := range after {
		b := before[name]
		if got := m["nmfstream_labeled_total"] - b["nmfstream_labeled_total"]; got != 2 {
			t.Errorf("%s: %v predictions scored by the 4 records, want the 2 whose label waited", name, got)
		}
		if m["nmfstream_pending_labels"] != 100000-2 || m["nmfstream_forgotten_labels_total"] != 130000 {
			t.Errorf("%s: %v labels waiting, %v forgotten; want 99,998 and 130,000", name, m["nmfstream_pending_labels"], m["nmfstream_forgotten_labels_total"])
		}
		if m["nmfstream_samples_total"] != 8 || m["nmfstream_late_labels_total"] != 230002 {
			t.Errorf("%s: %v samples, %v late labels; want 8 and 230,002", name, m["nmfstream_samples_total"], m["nmfstream_late_labels_total"])
		}
	}
	for _, k := range []string{"nmfstream_labeled_total", "nmfstream_correct_total", "nmfstream_early_total", "nmfstream_pending_labels", "nmfstream_forgotten_labels_total"} {
		if s, n := after["serve"][k], after["serve --nats"][k]; s != n {
			t.Errorf("%s: serve %v, serve --nats %v", k, s, n)
		}
	}
}

// TestServeNATSReplacedLabels: a request whose labels of one id wait for
// its record one after the other is answered by serve --nats as by serve:
// each label that a later one replaced is a reject naming the later one's
// line, the last one waits (pending counts the id once), and a label that
// reaches its record is applied.
func TestServeNATSReplacedLabels(t *testing.T) {
	flags := []string{"--window", "100", "--rank", "2"}
	one := startServeCmd(t, flags...)
	srv := testNATS(t)
	nats, _, _, stop := serveNATSAt(t, srv.ClientURL(), append([]string{"--namespace", "replaced"}, flags...)...)
	defer stop()
	records := `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
`
	labels := `{"id":"z","label":"a"}
{"id":"z","label":"b"}
{"id":"a1","label":"a"}
{"id":"z","label":"a"}
{"id":"y","label":"b"}
`
	var answers []map[string]any
	for _, base := range []string{one, nats} {
		postAnswer(t, base, "/v1/records", records)
		answers = append(answers, postAnswer(t, base, "/v1/labels", labels))
	}
	single, chain := answers[0], answers[1]
	if a, p, f, r := labelCountsOf(single); a != 1 || p != 2 || f != -1 || r != 2 {
		t.Fatalf("serve answered %v; want applied 1, pending 2, 2 rejected", single)
	}
	if !reflect.DeepEqual(single, chain) {
		t.Fatalf("serve --nats answered\n%v\nserve\n%v", chain, single)
	}
	rej := single["rejected"].([]any)
	if first := rej[0].(map[string]any); first["offset"] != 0.0 || !strings.Contains(first["reason"].(string), "at offset 1") {
		t.Errorf("the first reject %v, want line 0 replaced by line 1", first)
	}
}
