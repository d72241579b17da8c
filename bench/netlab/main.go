// Command netlab is the Go side of scripts/netlab.sh, the laboratory of
// simulated machines in network namespaces: it is the machines' network (a
// switch with a delay, and cuts), waits for the NATS cluster, and checks a
// run's predictions against its input, so that the script can check that
// a run of the chain on the owners lost and repeated nothing.
//
// Usage:
//
//	netlab preds --in F --pred P.jsonl          # the predictions against F's samples, one JSON object
//	netlab ready --nats URLS [--timeout 60s]    # waits until every node of URLS answers JetStream requests
//	netlab switch --delay D --control SOCK NAME=/var/run/netns/NS ...   # the lab's network (Linux; switch_linux.go)
//	netlab control --control SOCK cut|heal NAME # cuts a machine off the switch, or heals it
//
// preds prints {"samples", "predicted", "duplicates", "missing",
// "unknown"}: the count of F's usable samples (those with an id: a
// prediction line names its sample by id), the prediction lines of P
// (JSON lines with an "id", as stream --out writes them), the lines that
// repeat an id, the samples with no line and the lines whose id is no
// sample of F; a run in which every sample was predicted exactly once has
// predicted = samples and the other three zero. ready returns once a
// JetStream request (account information) through each of the
// comma-separated URLs succeeds, that is once the cluster has a meta
// leader that every node reaches, or fails after --timeout naming the
// nodes that did not answer.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nmfstream/nmfstream/sources"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: netlab preds|ready|switch|control [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "preds":
		err = runPreds(os.Args[2:])
	case "ready":
		err = runReady(ctx, os.Args[2:])
	case "switch":
		err = runSwitch(ctx, os.Args[2:])
	case "control":
		err = runControl(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want preds, ready, switch or control", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netlab:", err)
		os.Exit(1)
	}
}

// predCheck is what preds prints.
type predCheck struct {
	Samples    int `json:"samples"`
	Predicted  int `json:"predicted"`
	Duplicates int `json:"duplicates"`
	Missing    int `json:"missing"`
	Unknown    int `json:"unknown"`
}

func runPreds(args []string) error {
	fs := flag.NewFlagSet("preds", flag.ContinueOnError)
	in := fs.String("in", "", "the stream file (required)")
	pred := fs.String("pred", "", "the predictions, JSON lines with an id (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *pred == "" {
		return errors.New("preds: --in and --pred are required")
	}
	want, err := sampleIDs(*in)
	if err != nil {
		return fmt.Errorf("preds: %s: %w", *in, err)
	}
	c, err := checkPreds(want, *pred)
	if err != nil {
		return fmt.Errorf("preds: %s: %w", *pred, err)
	}
	return json.NewEncoder(os.Stdout).Encode(c)
}

// sampleIDs returns the ids of the samples of the stream file in (records
// with features and an id).
func sampleIDs(in string) (map[string]bool, error) {
	src, err := sources.Open(in)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	ids := map[string]bool{}
	for src.Next() {
		for _, id := range src.Batch().IDs {
			if id == "" {
				return nil, errors.New("a sample without an id: its prediction could not be matched")
			}
			if ids[id] {
				return nil, fmt.Errorf("sample id %q twice", id)
			}
			ids[id] = true
		}
	}
	return ids, src.Err()
}

// checkPreds counts the prediction lines of the file at path against the
// samples' ids want.
func checkPreds(want map[string]bool, path string) (predCheck, error) {
	c := predCheck{Samples: len(want)}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var l struct {
			ID *string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.ID == nil {
			return c, fmt.Errorf("line %d: not a prediction with an id: %q", n, sc.Text())
		}
		c.Predicted++
		switch id := *l.ID; {
		case seen[id]:
			c.Duplicates++
		case !want[id]:
			c.Unknown++
		}
		seen[*l.ID] = true
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	for id := range want {
		if !seen[id] {
			c.Missing++
		}
	}
	return c, nil
}

func runReady(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ready", flag.ContinueOnError)
	urls := fs.String("nats", "", "NATS server URLs, comma-separated (required)")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *urls == "" {
		return errors.New("ready: --nats is required")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	for _, u := range strings.Split(*urls, ",") {
		var last error
		for {
			if last = jetStreamAnswers(ctx, u); last == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("ready: %s: no JetStream answer within %v: %w", u, *timeout, last)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// jetStreamAnswers connects to the one server at url alone and asks
// JetStream for the account's information.
func jetStreamAnswers(ctx context.Context, url string) error {
	nc, err := nats.Connect(url, nats.DontRandomize(), nats.NoReconnect(), nats.Timeout(2*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(rctx)
	return err
}
