package main

import (
	"flag"
	"strings"
	"testing"
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
