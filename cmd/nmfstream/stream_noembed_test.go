//go:build !nats

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStreamNATSNeedsServer checks that stream --nats and serve --nats
// without a URL, in a binary without the embedded server, exit with an
// error that says to pass a URL or build with -tags nats.
func TestStreamNATSNeedsServer(t *testing.T) {
	in := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(in, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"stream", "--nats", "--in", in}, {"stream", "--in", in, "--nats"}, {"stream", "--nats=embedded", "--in", in},
		{"serve", "--nats"}, {"serve", "--nats", "--addr", "127.0.0.1:0"}} {
		code, _, stderr := runCmd(t, args...)
		if code == 0 || !strings.Contains(stderr, "-tags nats") || !strings.Contains(stderr, "--nats nats://") {
			t.Errorf("%v: exit %d, stderr %q; want an error naming -tags nats and --nats URL", args, code, stderr)
		}
	}
}
