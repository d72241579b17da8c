package main

import (
	"flag"
	"time"
)

// Flags of the bounds that serve and serve --nats share (README.md,
// "Limits: what a client can make serve hold"), with the same defaults
// and meanings in both.

// bodyBoundFlags registers the bounds on a request and its body into o:
// --max-body, --max-inflight, --read-timeout, --min-body-rate,
// --body-grace, --write-timeout and --max-dim (the JSON records'
// features, sources.JSONLimits.MaxDim).
func bodyBoundFlags(fs *flag.FlagSet, o *serveOptions) {
	fs.Int64Var(&o.maxBody, "max-body", 64<<20, "largest request body in `bytes`")
	fs.IntVar(&o.maxInFlight, "max-inflight", 16, "POSTs handled at once, each from the first byte of its body; more are answered 429 (0: no cap). Bodies take at most this × --max-body")
	fs.DurationVar(&o.readTimeout, "read-timeout", time.Minute, "longest time to read a request, body included")
	fs.Int64Var(&o.minBodyRate, "min-body-rate", 16<<10, "slowest body accepted, in `bytes` per second after --body-grace: a slower body is cut off with 408 and frees its --max-inflight slot (0: no minimum)")
	fs.DurationVar(&o.bodyGrace, "body-grace", 5*time.Second, "time a body may take before --min-body-rate applies")
	fs.DurationVar(&o.writeTimeout, "write-timeout", 5*time.Minute, "longest time from the end of a request's headers to the end of its answer (learning included)")
	maxDimFlag(fs, &o.maxDim)
}

// learnerBoundFlags registers the bounds that stages.Featurize applies to
// the learner: --max-classes (Featurize.MaxClasses) and --max-window-bytes
// (Featurize.MaxWindowBytes). serve applies them to its learner;
// stream --nats and serve --nats carry them to the owners in the
// namespace's learner settings (onlineConfig), with the same defaults, so
// that both store the same settings.
func learnerBoundFlags(fs *flag.FlagSet, maxClasses *int, maxWindowBytes *int64) {
	fs.IntVar(maxClasses, "max-classes", 1000, "distinct labels the stream learns; a label that would add one more is rejected (each class takes 8 bytes per window slot)")
	fs.Int64Var(maxWindowBytes, "max-window-bytes", 1<<30, "bound on 8·D·window, the `bytes` of a window of dense records of D features, and on a window of text rows (12 bytes per distinct term): records beyond it are rejected")
}
