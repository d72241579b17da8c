// Command netlab is the Go side of scripts/netlab.sh, the laboratory of
// simulated machines in network namespaces: it is the machines' network (a
// switch with a delay, and cuts), waits for the NATS cluster, and reads the
// counters of a namespace of the distributed learner and the input's
// expected ones, so that the script can check that a run lost and repeated
// nothing.
//
// Usage:
//
//	netlab state --nats URLS [--namespace NS]   # the basis's counters, one JSON object
//	netlab expect --in F                        # the samples of F and the sum of their bus IDs, one JSON object
//	netlab ready --nats URLS [--timeout 60s]    # waits until every node of URLS answers JetStream requests
//	netlab switch --delay D --control SOCK NAME=/var/run/netns/NS ...   # the lab's network (Linux; switch_linux.go)
//	netlab control --control SOCK cut|heal NAME # cuts a machine off the switch, or heals it
//
// state prints {"version", "samples", "deltas", "id_sum", "left",
// "ingested"} of the namespace's latest basis (distributed.ReadState);
// expect prints {"samples", "id_sum"}: the count of F's usable samples and
// the sum modulo 2⁶⁴ of their IDs on the bus, a sample's record offset + 1
// (the ID that stream --nats publishes it with), so that a run in which
// every sample was applied exactly once has state's samples and id_sum
// equal to expect's. ready returns once a JetStream request (account
// information) through each of the comma-separated URLs succeeds, that is
// once the cluster has a meta leader that every node reaches, or fails
// after --timeout naming the nodes that did not answer.
package main

import (
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

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/sources"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: netlab state|expect [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "state":
		err = runState(ctx, os.Args[2:])
	case "expect":
		err = runExpect(os.Args[2:])
	case "ready":
		err = runReady(ctx, os.Args[2:])
	case "switch":
		err = runSwitch(ctx, os.Args[2:])
	case "control":
		err = runControl(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want state, expect, ready, switch or control", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netlab:", err)
		os.Exit(1)
	}
}

// counters is what both commands print; state fills every field.
type counters struct {
	Version  uint64 `json:"version,omitempty"`
	Samples  uint64 `json:"samples"`
	Deltas   uint64 `json:"deltas,omitempty"`
	IDSum    uint64 `json:"id_sum"`
	Left     uint64 `json:"left,omitempty"`
	Ingested uint64 `json:"ingested,omitempty"`
}

func runState(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	url := fs.String("nats", "", "NATS server URLs, comma-separated (required)")
	ns := fs.String("namespace", "nmf", "namespace of the learner")
	timeout := fs.Duration("timeout", 20*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return errors.New("state: --nats is required")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	nc, err := nats.Connect(*url, nats.Timeout(*timeout))
	if err != nil {
		return fmt.Errorf("state: --nats %s: %w", *url, err)
	}
	defer nc.Close()
	st, err := distributed.ReadState(ctx, nc, distributed.Config{Namespace: *ns})
	if err != nil {
		return fmt.Errorf("state: namespace %q: %w", *ns, err)
	}
	return json.NewEncoder(os.Stdout).Encode(counters{Version: st.Version, Samples: st.Samples, Deltas: st.Deltas,
		IDSum: st.IDSum, Left: st.Left, Ingested: st.Ingested})
}

func runExpect(args []string) error {
	fs := flag.NewFlagSet("expect", flag.ContinueOnError)
	in := fs.String("in", "", "the stream file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return errors.New("expect: --in is required")
	}
	src, err := sources.Open(*in)
	if err != nil {
		return err
	}
	defer src.Close()
	var c counters
	for src.Next() {
		b := src.Batch()
		for _, off := range b.Offsets {
			c.Samples++
			c.IDSum += uint64(off) + 1
		}
	}
	if err := src.Err(); err != nil {
		return fmt.Errorf("expect: %s: %w", *in, err)
	}
	return json.NewEncoder(os.Stdout).Encode(c)
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
