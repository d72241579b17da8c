package main

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/model/graph"
)

// TestSameConfigNormRatio checks a resumed stream's --max-norm-ratio
// against its checkpoint's: a checkpoint written before the flag existed
// (0) holds the default, so naming the default agrees with it and another
// bound is refused, naming the flag.
func TestSameConfigNormRatio(t *testing.T) {
	for _, tc := range []struct {
		arg   string
		saved float64
		fails bool
	}{
		{"1e6", 0, false},
		{"10", 0, true},
		{"10", 10, false},
		{"-1", 1e6, true},
	} {
		var cfg onlineConfig
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
		addOnlineFlags(fs, &cfg)
		if err := fs.Parse([]string{"--max-norm-ratio", tc.arg}); err != nil {
			t.Fatal(err)
		}
		saved := cfg
		saved.MaxNormRatio = tc.saved
		err := sameConfig(fs, cfg, saved)
		if (err != nil) != tc.fails || err != nil && !strings.Contains(err.Error(), "-max-norm-ratio") {
			t.Errorf("--max-norm-ratio %s against a checkpoint's %g: %v; want an error: %v", tc.arg, tc.saved, err, tc.fails)
		}
	}
}

// TestSameConfigNATSBounds checks a resumed stream --nats's --max-classes
// and --max-window-bytes against its checkpoint's settings: another bound
// is refused, naming the flag, and the checkpoint's own is accepted.
func TestSameConfigNATSBounds(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		fails bool
	}{
		{[]string{"--max-classes", "1000"}, false},
		{[]string{"--max-classes", "5"}, true},
		{[]string{"--max-window-bytes", "1024"}, true},
	} {
		var cfg onlineConfig
		var nf chainNATS
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
		addOnlineFlags(fs, &cfg)
		nf.add(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o := &streamOptions{fs: fs, cfg: cfg}
		if err := nf.check(o); err != nil {
			t.Fatal(err)
		}
		saved := o.cfg
		saved.MaxClasses, saved.MaxWindowBytes = 1000, 1<<30
		err := sameConfig(fs, o.cfg, saved)
		if (err != nil) != tc.fails || err != nil && !strings.Contains(err.Error(), tc.args[0][1:]) {
			t.Errorf("%v against a checkpoint's defaults: %v; want an error: %v", tc.args, err, tc.fails)
		}
	}
}

// TestGraphMetricFlag checks --graph-metric: each value sets the online
// model's graph metric and whether the labels may move it (auto, and a
// checkpoint written before the flag, 0), a resume naming another value
// than its checkpoint's is refused naming the flag, and an unknown value
// is refused.
func TestGraphMetricFlag(t *testing.T) {
	for _, tc := range []struct {
		arg    string
		metric graph.Metric
		choose bool
	}{
		{"auto", graph.Euclidean, true},
		{"euclidean", graph.Euclidean, false},
		{"cosine", graph.Cosine, false},
	} {
		var cfg onlineConfig
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
		addOnlineFlags(fs, &cfg)
		if err := fs.Parse([]string{"--graph-metric", tc.arg}); err != nil {
			t.Fatal(err)
		}
		o := cfg.learner().Model
		if o.Graph.Metric != tc.metric || o.ChooseMetric != tc.choose {
			t.Errorf("--graph-metric %s: metric %v, ChooseMetric %v; want %v, %v", tc.arg, o.Graph.Metric, o.ChooseMetric, tc.metric, tc.choose)
		}
		saved := cfg
		saved.GraphMetric = 0 // a checkpoint of auto
		if err := sameConfig(fs, cfg, saved); (err != nil) == tc.choose || err != nil && !strings.Contains(err.Error(), "-graph-metric") {
			t.Errorf("--graph-metric %s against a checkpoint of auto: %v", tc.arg, err)
		}
	}
	fs := flag.NewFlagSet("stream", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addOnlineFlags(fs, new(onlineConfig))
	if err := fs.Parse([]string{"--graph-metric", "manhattan"}); err == nil || !strings.Contains(err.Error(), "want auto, euclidean or cosine") {
		t.Errorf("--graph-metric manhattan: %v", err)
	}
}

// TestCodeExpertFlag checks --code-expert: false sets the learner's
// NoCodeExpert, true and the default leave the expert in, a resume naming
// another value than its checkpoint's is refused naming the flag (a
// checkpoint written before the flag reads as the expert in), and a value
// that is no boolean is refused.
func TestCodeExpertFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		off  bool
	}{
		{nil, false},
		{[]string{"--code-expert"}, false},
		{[]string{"--code-expert=true"}, false},
		{[]string{"--code-expert=false"}, true},
	} {
		var cfg onlineConfig
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
		addOnlineFlags(fs, &cfg)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := cfg.learner().NoCodeExpert; got != tc.off {
			t.Errorf("%v: NoCodeExpert %v, want %v", tc.args, got, tc.off)
		}
		saved := cfg
		saved.NoCodeExpert = false // a checkpoint with the expert, or from before the flag
		if err := sameConfig(fs, cfg, saved); (err != nil) != tc.off || err != nil && !strings.Contains(err.Error(), "-code-expert") {
			t.Errorf("%v against a checkpoint with the expert: %v", tc.args, err)
		}
	}
	fs := flag.NewFlagSet("stream", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addOnlineFlags(fs, new(onlineConfig))
	if err := fs.Parse([]string{"--code-expert=sometimes"}); err == nil || !strings.Contains(err.Error(), "code-expert") {
		t.Errorf("--code-expert=sometimes: %v", err)
	}
}

// TestPriorPowerFlag checks --prior-power: its value reaches the learner's
// PriorPower (0, the default, when not named), and a resume naming another
// value than its checkpoint's is refused naming the flag (a checkpoint
// written before the flag reads as 0).
func TestPriorPowerFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{nil, 0},
		{[]string{"--prior-power", "0.3"}, 0.3},
		{[]string{"--prior-power", "-1"}, -1},
	} {
		var cfg onlineConfig
		fs := flag.NewFlagSet("stream", flag.ContinueOnError)
		addOnlineFlags(fs, &cfg)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := cfg.learner().PriorPower; got != tc.want {
			t.Errorf("%v: PriorPower %v, want %v", tc.args, got, tc.want)
		}
		saved := cfg
		saved.PriorPower = 0 // a checkpoint at the default, or from before the flag
		if err := sameConfig(fs, cfg, saved); (err != nil) != (tc.want != 0) || err != nil && !strings.Contains(err.Error(), "-prior-power") {
			t.Errorf("%v against a checkpoint at the default: %v", tc.args, err)
		}
	}
}

// TestLearnerOfCarriesMixture checks that the owners of stream --nats and
// serve --nats build their learners with the driver's mixture settings:
// --prior-power and --code-expert travel in the settings' JSON, and a
// driver that names neither sends neither (the settings' bytes of a build
// without the flags).
func TestLearnerOfCarriesMixture(t *testing.T) {
	cfg := onlineConfig{Rank: 10, Neighbors: 5, Window: 1000, Batch: 10, Method: "gnmf", PriorPower: 0.3, NoCodeExpert: true}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := learnerOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if l.PriorPower != 0.3 || !l.NoCodeExpert {
		t.Errorf("owner's learner: PriorPower %v, NoCodeExpert %v; want 0.3, true", l.PriorPower, l.NoCodeExpert)
	}
	cfg.PriorPower, cfg.NoCodeExpert = 0, false
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "PriorPower") || strings.Contains(s, "NoCodeExpert") {
		t.Errorf("default settings carry the mixture's fields: %s", s)
	}
}
