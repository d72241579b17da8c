package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeToken checks that with a token every route but /healthz and
// /openapi.json answers 401 without it, and works with it.
func TestServeToken(t *testing.T) {
	cfg := onlineConfig{Rank: 2, Neighbors: 3, Window: 100, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, token: "s3cret"}
	url, stop := startServer(t, s)
	defer stop()
	do := func(method, path, token string) int {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(`{"id":"a","x":[1,2,3]}`+"\n"))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"POST", "/v1/records", "", 401},
		{"POST", "/v1/records", "wrong", 401},
		{"GET", "/metrics", "", 401},
		{"GET", "/healthz", "", 200},
		{"GET", "/openapi.json", "", 200},
		{"POST", "/v1/records", "s3cret", 200},
		{"GET", "/metrics", "s3cret", 200},
	} {
		if got := do(c.method, c.path, c.token); got != c.want {
			t.Errorf("%s %s with token %q: %d, want %d", c.method, c.path, c.token, got, c.want)
		}
	}
}

// TestServeInFlightCap holds one request in flight (its body not yet
// sent) under a cap of one: a second request gets 429 at once; once the
// first completes, requests go through again. The client's write of the
// first body returns once the transport has it, not once the handler holds
// its slot, so a probe may reach the server first and take the slot; the
// first request is then the one answered 429, and the attempt starts
// again.
func TestServeInFlightCap(t *testing.T) {
	cfg := onlineConfig{Rank: 2, Neighbors: 3, Window: 100, Batch: 10, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, maxInFlight: 1}
	url, stop := startServer(t, s)
	defer stop()
	for attempt := range 5 {
		first, second := inFlightAttempt(t, url, fmt.Sprintf("a%d", attempt))
		if first == http.StatusTooManyRequests && second != http.StatusTooManyRequests {
			continue // a probe took the slot first
		}
		if second != http.StatusTooManyRequests {
			t.Errorf("a second request with one in flight: %d, want 429", second)
		}
		if first != 200 {
			t.Errorf("the request in flight: %d, want 200", first)
		}
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("after the first completed: %d, want 200", resp.StatusCode)
		}
		return
	}
	t.Fatal("in 5 attempts a probe always reached the server before the request held in flight")
}

// inFlightAttempt posts a record with id under a body held open, probes
// with empty POSTs (GETs take no slot) until one is answered 429 (checking its Retry-After), the
// post is answered, or 5 s pass, then completes the post. It returns the
// post's status and the last probe's.
func inFlightAttempt(t *testing.T, url, id string) (first, second int) {
	t.Helper()
	pr, pw := io.Pipe()
	firstc := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/records", mediaJSONL, pr)
		if err != nil {
			t.Error(err)
			firstc <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		firstc <- resp.StatusCode
	}()
	if _, err := pw.Write([]byte(`{"id":"` + id + `","x":[1,2,3]}` + "\n")); err != nil {
		t.Fatal(err)
	}
	first = -1
probe:
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case first = <-firstc:
			break probe // answered before any probe was refused
		default:
		}
		resp, err := http.Post(url+"/v1/records", mediaJSONL, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if second = resp.StatusCode; second == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			break
		}
	}
	pw.Close()
	if first == -1 {
		first = <-firstc
	}
	return first, second
}

// TestServeSIGTERMDrains starts serve as a process, holds a request in
// flight, sends SIGTERM, then completes the request: it is answered 200,
// and serve exits 0 having saved its checkpoint.
func TestServeSIGTERMDrains(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "nmfstream")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ckpt := filepath.Join(dir, "serve.ckpt")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--checkpoint", ckpt, "--rank", "2", "--window", "100")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "nmfstream serve: listening on "); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatal("serve printed no address")
	}
	go io.Copy(io.Discard, stderr)
	pr, pw := io.Pipe()
	status := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/records", mediaJSONL, pr)
		if err != nil {
			status <- -1
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	if _, err := pw.Write([]byte(`{"id":"a","x":[1,2,3]}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// SIGTERM once serve's handler holds the request.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "\nnmfstream_posts_in_flight 1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never reached serve's handler")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // serve is shutting down, the request still in flight
	pw.Write([]byte(`{"id":"b","x":[3,2,1]}` + "\n"))
	pw.Close()
	if got := <-status; got != 200 {
		t.Errorf("the request in flight at SIGTERM: %d, want 200", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v, want exit 0", err)
	}
	if cp, err := loadCheckpoint(ckpt); err != nil || cp.State.Counters.Samples != 2 {
		t.Errorf("checkpoint after SIGTERM: %v, %+v; want 2 samples", err, cp)
	}
}
