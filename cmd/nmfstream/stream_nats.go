package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed"
)

// natsArgs reports whether stream's arguments ask for the distributed
// learner (--nats), and returns them with a bare --nats (followed by
// another flag or nothing) given the value "embedded".
func natsArgs(args []string) ([]string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "nats" {
			continue
		}
		if !strings.Contains(a, "=") && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			return append(append(args[:i:i], "--nats=embedded"), args[i+1:]...), true
		}
		return args, true
	}
	return args, false
}

// natsOptions returns the options of a command's connections to the NATS
// server at url (distributed.ClientOptions), which report the server's
// loss and return with log, once for all the connections that share
// them (distributed.ConnectionLog).
func natsOptions(url string, log func(line string)) []nats.Option {
	return append(distributed.ClientOptions(), distributed.NewConnectionLog(url, log).Options()...)
}

// ownerReport is the interval of the messages of a driver waiting for a
// live owner.
const ownerReport = 3 * time.Second

// adoptNamespace replaces the settings of cfg that the command line did
// not give (given: flag name → set) by those cfg's namespace holds, and
// says so on stderr when that changes any; a namespace that holds none
// takes cfg's from its first instance.
func adoptNamespace(ctx context.Context, nc *nats.Conn, cfg *distributed.Config, given map[string]bool, cmd string, stderr io.Writer) error {
	got, ok, err := distributed.AdoptConfig(ctx, nc, *cfg, func(name string) bool { return given[name] })
	if err != nil || !ok {
		return err
	}
	if got.Partitions != cfg.Partitions {
		fmt.Fprintf(stderr, "nmfstream %s: namespace %q has %d partitions (--partitions not given)\n", cmd, got.Namespace, got.Partitions)
	}
	*cfg = got
	return nil
}

// givenFlags returns the names of the flags that fs's command line set.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return given
}
