//go:build nats

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServeNATS starts serve --nats with args (after serve --nats URL
// --addr 127.0.0.1:0) and returns its base URL, a cancel (SIGTERM) and
// the channel of its exit code.
func startServeNATS(t *testing.T, url string, args ...string) (base string, cancel context.CancelFunc, done <-chan int, stderr *syncBuffer) {
	t.Helper()
	return startListening(t, append([]string{"serve", "--nats", url, "--addr", "127.0.0.1:0", "--pinned-ttl", "500ms"}, args...)...)
}

// startListening runs the command args (a serve, listening on a free
// port) and returns, once it says where it listens, its base URL, a
// cancel (SIGTERM), the channel of its exit code and its stderr.
func startListening(t *testing.T, args ...string) (base string, cancel context.CancelFunc, done <-chan int, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var out syncBuffer
	stderr = &syncBuffer{}
	d := make(chan int, 1)
	go func() { d <- run(ctx, args, &out, stderr) }()
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], cancel, d, stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen: %s", strings.Join(args[:min(len(args), 2)], " "), stderr.String())
		}
	}
}

// postStatus posts body to base+path and returns the status and the body
// of the answer (status 0 and the error's text if there was none).
func postStatus(base, path, body string) (int, string) {
	resp, err := http.Post(base+path, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeNATSMaxDim posts a record over --max-dim to serve --nats: it is
// rejected, by its offset, with a reason naming it and the bound, before
// the owner sees it, and the service goes on.
func TestServeNATSMaxDim(t *testing.T) {
	srv := testNATS(t)
	post, stats, stop := serveNATSOn(t, srv.ClientURL(), "--max-dim", "8")
	var r natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"wide","x":[1,1,1,1,1,1,1,1,1],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
`, &r)
	if len(r.Predictions) != 2 || len(r.Rejected) != 1 {
		t.Fatalf("predictions %+v, rejected %+v: want 2 predictions and the wide record rejected", r.Predictions, r.Rejected)
	}
	if rj := r.Rejected[0]; rj.Offset != 1 || rj.ID != "wide" || !strings.Contains(rj.Reason, `record 1 (id "wide")`) ||
		!strings.Contains(rj.Reason, "9 features, over the limit of 8 (--max-dim)") {
		t.Errorf("reject %+v: want offset 1, id wide, and a reason naming the record and --max-dim 8", rj)
	}
	var r2 natsRecordsResponse
	post("/v1/records", `{"id":"q1","x":[5,1,0,0]}`+"\n", &r2)
	if len(r2.Predictions) != 1 || r2.Predictions[0].Pred == nil || *r2.Predictions[0].Pred != "a" {
		t.Errorf("after the reject: %+v, want q1 predicted a", r2.Predictions)
	}
	if sum := stats(); sum.Records != 4 || sum.Samples != 3 || sum.Rejected != 1 {
		t.Errorf("counters: %d records, %d samples, %d rejected; want 4, 3, 1", sum.Records, sum.Samples, sum.Rejected)
	}
	stop()
}

// TestServeNATSMaxClasses runs serve --nats --max-classes 2: the owner's
// learner, built from the namespace's settings, rejects a record and a
// late label that would add a third class, naming the bound, as serve's
// does, and learns the others.
func TestServeNATSMaxClasses(t *testing.T) {
	srv := testNATS(t)
	post, stats, stop := serveNATSOn(t, srv.ClientURL(), "--max-classes", "2")
	var r natsRecordsResponse
	post("/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}
{"id":"b1","x":[0,0,5,1],"label":"b"}
{"id":"c1","x":[0,5,0,1],"label":"c"}
{"id":"u1","x":[1,5,0,1]}
`, &r)
	if len(r.Rejected) != 1 || r.Rejected[0].Offset != 2 || !strings.Contains(r.Rejected[0].Reason, "--max-classes") {
		t.Fatalf("rejected %+v: want the record of class c (offset 2) rejected for --max-classes", r.Rejected)
	}
	var lab labelsResponse
	post("/v1/labels", `{"id":"u1","label":"b"}
{"id":"u1","label":"d"}
`, &lab)
	if lab.Applied != 1 || lab.Pending != 0 || len(lab.Rejected) != 1 || lab.Rejected[0].Offset != 1 || lab.Rejected[0].ID != "u1" ||
		!strings.Contains(lab.Rejected[0].Reason, `label "d"`) || !strings.Contains(lab.Rejected[0].Reason, "--max-classes") ||
		!strings.Contains(lab.Rejected[0].Reason, "record 1 ") {
		t.Errorf("labels: %+v, want 1 applied and the label d (line 1) rejected for --max-classes", lab)
	}
	if sum := stats(); sum.Records != 6 || sum.Samples != 3 || sum.Rejected != 2 {
		t.Errorf("counters: %d records, %d samples, %d rejected; want 6, 3, 2", sum.Records, sum.Samples, sum.Rejected)
	}
	stop()
}

// TestServeNATSMaxInflight holds serve --nats's two --max-inflight slots
// with bodies that have begun and do not end: a third POST is answered 429
// with Retry-After, and once the two are gone a POST is learned again.
func TestServeNATSMaxInflight(t *testing.T) {
	srv := testNATS(t)
	base, cancel, done, stderr := startServeNATS(t, srv.ClientURL(), "--max-inflight", "2", "--min-body-rate", "0")
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n{")
	}
	body := `{"id":"a1","x":[5,0,0,1],"label":"a"}` + "\n"
	// Post only once both slow bodies hold their slot: a POST that held a
	// slot when a slow body came would have sent that one away with 429.
	for deadline := time.Now().Add(20 * time.Second); natsMetrics(t, base)["nmfstream_posts_in_flight"] < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two slow bodies did not both take a slot")
		}
	}
	got, ans := 0, ""
	for deadline := time.Now().Add(20 * time.Second); got != http.StatusTooManyRequests && time.Now().Before(deadline); {
		resp, err := http.Post(base+"/v1/records", "application/x-ndjson", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got, ans = resp.StatusCode, string(b)
		if got == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("429 with Retry-After %q, want 1", resp.Header.Get("Retry-After"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != http.StatusTooManyRequests || !strings.Contains(ans, "--max-inflight") {
		t.Fatalf("a POST beside 2 bodies in flight at --max-inflight 2: %d %s, want 429", got, ans)
	}
	for _, c := range conns {
		c.Close()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, ans := postStatus(base, "/v1/records", body)
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the slow bodies left: %d %s, want 200 (their slots free)", st, ans)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// TestServeNATSSlowBody trickles a body into serve --nats at 50 bytes a
// second, under --min-body-rate 1000 after --body-grace 200ms: it is cut
// off with 408 long before --read-timeout (30 s).
func TestServeNATSSlowBody(t *testing.T) {
	srv := testNATS(t)
	base, cancel, done, stderr := startServeNATS(t, srv.ClientURL(), "--min-body-rate", "1000", "--body-grace", "200ms", "--read-timeout", "30s")
	if got := slowPost(t, base, 100000, 20*time.Millisecond, 15*time.Second); got != http.StatusRequestTimeout {
		t.Errorf("a trickled body: status %d, want 408", got)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// TestServeNATSShutdown cancels serve --nats (SIGTERM) once 40 clients'
// requests have reached it and wait for the chain, which learns them one
// at a time: every
// client gets an answer, 200 for the requests in the chain and 503 for
// those not yet handed over (which are not learned), and serve returns 0
// within its drain bound with no goroutine left.
func TestServeNATSShutdown(t *testing.T) {
	srv := testNATS(t)
	before, _ := ownGoroutines()
	base, cancel, done, stderr := startServeNATS(t, srv.ClientURL(), "--read-timeout", "5s", "--write-timeout", "30s", "--max-inflight", "0")
	var sb strings.Builder
	for i := range 600 {
		fmt.Fprintf(&sb, `{"id":"r%d","x":[%d,%d,%d,1,2,3,4,5],"label":"%c"}`+"\n", i, i%7, i%5, i%3, 'a'+i%3)
	}
	body := sb.String()
	const clients = 40
	status := make([]int, clients)
	answered := make(chan struct{}, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			st, ans := postStatus(base, "/v1/records", strings.ReplaceAll(body, `"r`, fmt.Sprintf(`"c%d-`, i)))
			status[i] = st
			if st != http.StatusOK && (st != http.StatusServiceUnavailable || !strings.Contains(ans, "shutting down")) {
				t.Errorf("client %d: %d %s, want 200, or 503 saying the service is shutting down", i, st, ans)
			}
			answered <- struct{}{}
		})
	}
	// Every request has reached its handler (a connection still in the
	// listener's backlog would be reset by the shutdown, unanswered), one
	// is answered, and most wait for the chain.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if n := natsMetrics(t, base)["nmfstream_posts_in_flight"]; int(n)+len(answered) == clients && len(answered) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d requests did not all reach serve --nats", clients)
		}
	}
	start := time.Now()
	cancel()
	// drainTimeout at --read-timeout 5s, --write-timeout 30s (long enough
	// for the requests to reach their handlers under -race: it counts from
	// their headers), and the answers' grace.
	bound := 10*time.Second + 30*time.Second + 5*time.Second + drainAnswerGrace
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("serve --nats still runs %v after its cancel (drain bound %v)", time.Since(start), bound)
	}
	wg.Wait()
	n200, n503 := 0, 0
	for _, st := range status {
		switch st {
		case http.StatusOK:
			n200++
		case http.StatusServiceUnavailable:
			n503++
		}
	}
	if n200 == 0 || n503 == 0 {
		t.Errorf("%d answered 200 and %d 503 of %d: want the requests in the chain learned and those waiting refused", n200, n503, clients)
	}
	if st, _ := postStatus(base, "/v1/records", body); st == http.StatusOK {
		t.Errorf("a request after the shutdown was answered 200")
	}
	http.DefaultClient.CloseIdleConnections()
	var now int
	var stacks string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if now, stacks = ownGoroutines(); now <= before || time.Now().After(deadline) {
			break
		}
	}
	if now > before {
		t.Errorf("%d goroutines (but the NATS server's) after serve --nats returned, %d before:\n%s", now, before, stacks)
	}
	t.Logf("%d of %d requests answered 200, %d 503", n200, clients, n503)
}

// ownGoroutines returns the goroutines of this process but the embedded
// NATS server's (which outlive a serve --nats, whose test stops the
// server at its end), and their stacks.
func ownGoroutines() (int, string) {
	buf := make([]byte, 8<<20)
	var own []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "nats-server/v2/") {
			own = append(own, g)
		}
	}
	return len(own), strings.Join(own, "\n\n")
}

// TestServeNATSDrainBound cancels serve --nats while a request is in the
// chain and the namespace's only owner (a worker command) has gone: the
// drain gives up at its bound, the client is answered (503) or cut off
// rather than left waiting, and serve returns, saying so.
func TestServeNATSDrainBound(t *testing.T) {
	srv := testNATS(t)
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	var wout, werr syncBuffer
	wdone := make(chan int, 1)
	go func() {
		wdone <- run(wctx, []string{"worker", "--nats", srv.ClientURL(), "--namespace", "drain", "--pinned-ttl", "500ms"}, &wout, &werr)
	}()
	base, cancel, done, stderr := startServeNATS(t, srv.ClientURL(), "--namespace", "drain", "--workers", "0", "--read-timeout", "2s", "--write-timeout", "2s")
	if st, ans := postStatus(base, "/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}`+"\n"); st != http.StatusOK {
		t.Fatalf("with the worker: %d %s", st, ans)
	}
	wcancel()
	<-wdone
	answer := make(chan int, 1)
	go func() {
		st, _ := postStatus(base, "/v1/records", `{"id":"a2","x":[6,0,0,1],"label":"a"}`+"\n")
		answer <- st
	}()
	time.Sleep(500 * time.Millisecond) // the request is in the chain, which no owner answers
	cancel()
	bound := 10*time.Second + 2*time.Second + 5*time.Second
	select {
	case code := <-done:
		if code == 0 || !strings.Contains(stderr.String(), "outlasted its bound") {
			t.Errorf("exit %d, want an error saying the drain outlasted its bound: %s", code, stderr.String())
		}
	case <-time.After(bound + 15*time.Second):
		t.Fatalf("serve --nats still runs past its drain bound %v with no owner", bound)
	}
	select {
	case st := <-answer:
		if st == http.StatusOK {
			t.Errorf("a request no owner learned was answered 200")
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the client is left waiting after serve --nats returned")
	}
}

// TestStreamAndServeNATSSettings runs stream --nats on the namespace of a
// serve --nats, both with their default bounds: their learner settings
// (--max-classes and --max-window-bytes among them) are the same, so the
// stream is not refused, and the owner learns its records.
func TestStreamAndServeNATSSettings(t *testing.T) {
	srv := testNATS(t)
	_, _, stop := serveNATSOn(t, srv.ClientURL(), "--namespace", "mixed", "--window", "300", "--rank", "10", "--batch", "20")
	in := filepath.Join(t.TempDir(), "digits.arrow")
	records, _ := writeDigitsStream(t, in, 0.2, 30)
	code, out, errs := runCmd(t, "stream", "--nats", srv.ClientURL(), "--namespace", "mixed", "--workers", "0", "--in", in,
		"--window", "300", "--rank", "10", "--batch", "20", "--json")
	if code != 0 {
		t.Fatalf("stream --nats on serve --nats's namespace: exit %d: %s", code, errs)
	}
	var sum streamSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Records != int64(records) {
		t.Errorf("stream --nats --json: %q (%v), want the stream's %d records", out, err, records)
	}
	stop()
}

// TestServeNATSTokenFile serves with --token-file: a request without the
// token is answered 401, one with it 200, /healthz needs none; --token
// and --token-file together are a usage error.
func TestServeNATSTokenFile(t *testing.T) {
	srv := testNATS(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(" s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, cancel, done, _ := startServeNATS(t, srv.ClientURL(), "--workers", "1", "--token-file", file)
	body := `{"id":"a","x":[1,2,3],"label":"a"}` + "\n"
	if st, _ := postStatus(base, "/v1/records", body); st != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", st)
	}
	req, _ := http.NewRequest("POST", base+"/v1/records", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the file's token: %d, want 200", resp.StatusCode)
	}
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz without the token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	<-done
	if code, _, stderr := runCmd(t, "serve", "--nats", srv.ClientURL(), "--token", "x", "--token-file", file); code == 0 || !strings.Contains(stderr, "--token-file") {
		t.Errorf("--token with --token-file: exit %d, %s", code, stderr)
	}
}

// TestServeNATSNoOwner posts to serve --nats while its only owner, a
// worker, is stopped: each request is answered within --write-timeout
// (504: handed to the chain, learned once an owner answers; or 503: not
// taken, not learned), so that the clients' --max-inflight slots are
// freed (no 429 for the later ones); once a worker returns the requests
// answered 504 are learned, and a new one is answered 200.
func TestServeNATSNoOwner(t *testing.T) {
	srv := testNATS(t)
	worker := func() (context.CancelFunc, chan int) {
		ctx, cancel := context.WithCancel(context.Background())
		var wout, werr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"worker", "--nats", srv.ClientURL(), "--namespace", "noowner", "--pinned-ttl", "500ms"}, &wout, &werr)
		}()
		return cancel, done
	}
	wcancel, wdone := worker()
	base, cancel, done, _ := startServeNATS(t, srv.ClientURL(), "--namespace", "noowner", "--workers", "0", "--write-timeout", "3s", "--max-inflight", "1")
	if st, ans := postStatus(base, "/v1/records", `{"id":"a1","x":[5,0,0,1],"label":"a"}`+"\n"); st != http.StatusOK {
		t.Fatalf("with the worker: %d %s", st, ans)
	}
	wcancel()
	<-wdone
	handed := 0
	for i := range 3 {
		start := time.Now()
		st, ans := 0, ""
		client := &http.Client{Timeout: 15 * time.Second} // past it the request was never answered
		if resp, err := client.Post(base+"/v1/records", "application/x-ndjson", strings.NewReader(fmt.Sprintf(`{"id":"q%d","x":[6,0,%d,1]}`+"\n", i, i))); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			st, ans = resp.StatusCode, string(b)
		} else {
			ans = err.Error()
		}
		switch {
		case st == http.StatusGatewayTimeout && strings.Contains(ans, "will be learned"):
			handed++
		case st == http.StatusServiceUnavailable && strings.Contains(ans, "not learned"):
		default:
			t.Fatalf("request %d without an owner: %d %s; want 504 or 503 saying whether it is learned", i, st, ans)
		}
		if took := time.Since(start); took > 3*time.Second+2*time.Second {
			t.Errorf("request %d answered after %v, past --write-timeout 3s", i, took)
		}
	}
	wcancel, wdone = worker()
	defer func() { wcancel(); <-wdone }()
	if st, ans := postStatus(base, "/v1/records", `{"id":"b1","x":[0,5,0,1],"label":"b"}`+"\n"); st != http.StatusOK {
		t.Fatalf("with a worker again: %d %s", st, ans)
	}
	var sum natsStats
	resp, err := http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&sum)
	resp.Body.Close()
	t.Logf("%d of 3 requests handed to the chain without an owner (504), the others not taken (503)", handed)
	if want := int64(2 + handed); sum.Records != want {
		t.Errorf("%d records learned, want %d (a1, b1 and the %d requests answered 504)", sum.Records, want, handed)
	}
	cancel()
	<-done
}
