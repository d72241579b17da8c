package arch

import (
	"fmt"
	"strings"
)

// Rules say which packages may do what a Finding reports. Packages are
// named by their path from the module root; a key ending in "/" stands
// for every package under it. Each value says why the package needs it:
// ARCHITECTURE.md ("Goroutines and I/O") repeats these tables.
type Rules struct {
	// Goroutines are the packages allowed to start goroutines.
	Goroutines map[string]string
	// IO are the packages allowed to do file, network or process I/O.
	IO map[string]string
	// DecoderFree are the packages (or "/"-ended prefixes) that must not
	// build a record decoder: they leave decoding to sources.
	DecoderFree []string
	// DecoderAllowed are exceptions to DecoderFree, keyed "file:Func"
	// (file from the module root, Func as in Finding.Func). Each entry is
	// a debt with its reason; an entry that matches nothing is reported,
	// so that it is removed once the debt is paid.
	DecoderAllowed map[string]string
}

// Default are the rules of this module, checked by TestRules.
var Default = Rules{
	Goroutines: map[string]string{
		"pipeline":              "the streaming runtime: stages over go-streams, Split and Share",
		"distributed":           "Worker.Run (heartbeat, role watch, one loop per owned partition)",
		"distributed/natsembed": "the embedded NATS server's start-up",
		"cmd/nmfstream":         "serve's HTTP server and WAL sync loop, the NATS drivers and the worker",
		"examples/service":      "the example service's HTTP server beside its pipeline",
		"bench/netlab":          "the lab's switch: one loop per machine's TAP device, the delay line and the control socket",
	},
	IO: map[string]string{
		"sources":               "readers of every input format",
		"sinks":                 "writers of results, models and checkpoints",
		"wal":                   "the write-ahead log of serve",
		"distributed":           "NATS JetStream: streams, key-value buckets, requests",
		"distributed/natsembed": "an embedded NATS server (network listener)",
		"datasets":              "reads the fetched corpora (Brown) from the data directory",
		"internal/report":       "writes a report's directory (HTML, figures)",
		"internal/figure":       "writes PNG files",
		"internal/testenv":      "test helper: reads the cached data sets",
		"internal/cputime":      "getrusage through syscall: the process's CPU time, no file or network",
		"internal/mem":          "madvise through x/sys/unix on its caller's buffers: no file or network",
		"cmd/":                  "programs",
		"examples/":             "programs",
		"bench/":                "programs",
		"distributed/cmd/":      "programs",
	},
	DecoderFree:    []string{"cmd/"},
	DecoderAllowed: map[string]string{},
}

// allowed reports whether the table t admits the package rel.
func allowed(t map[string]string, rel string) bool {
	if _, ok := t[rel]; ok {
		return true
	}
	for p := range t {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

func under(prefixes []string, rel string) bool {
	for _, p := range prefixes {
		if rel == p || strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

// Violations returns the findings of the package rel that r forbids, each
// as an error naming the place, what it does and the rule. used collects
// the DecoderAllowed keys that admitted a finding; it may be nil.
func (r Rules) Violations(rel string, found []Finding, used map[string]bool) []error {
	var errs []error
	for _, f := range found {
		switch f.Kind {
		case Goroutine:
			if !allowed(r.Goroutines, rel) {
				errs = append(errs, fmt.Errorf("%v: package %s may not start goroutines (arch.Default.Goroutines names those that may)", f, rel))
			}
		case IO:
			if !allowed(r.IO, rel) {
				errs = append(errs, fmt.Errorf("%v: package %s may not do I/O (arch.Default.IO names those that may)", f, rel))
			}
		case Decoder:
			if !under(r.DecoderFree, rel) {
				continue
			}
			key := f.File + ":" + f.Func
			if _, ok := r.DecoderAllowed[key]; ok {
				if used != nil {
					used[key] = true
				}
				continue
			}
			errs = append(errs, fmt.Errorf("%v: package %s holds no decoder: put it in sources", f, rel))
		}
	}
	return errs
}

// Unused returns the exact (not "/"-ended) Goroutines and IO entries of r
// for which no package of found has a finding of that kind, and the
// DecoderAllowed keys not in used: entries that no longer say the truth.
// found maps each package path to its findings.
func (r Rules) Unused(found map[string][]Finding, used map[string]bool) []string {
	has := func(rel string, k Kind) bool {
		for _, f := range found[rel] {
			if f.Kind == k {
				return true
			}
		}
		return false
	}
	var out []string
	for _, c := range []struct {
		t map[string]string
		k Kind
	}{{r.Goroutines, Goroutine}, {r.IO, IO}} {
		for p := range c.t {
			if !strings.HasSuffix(p, "/") && !has(p, c.k) {
				out = append(out, fmt.Sprintf("%s is allowed to, but no longer %s: remove its entry", p, c.k))
			}
		}
	}
	for k := range r.DecoderAllowed {
		if !used[k] {
			out = append(out, fmt.Sprintf("DecoderAllowed[%q] matches no decoder: remove it", k))
		}
	}
	return out
}
