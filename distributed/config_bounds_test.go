package distributed

import (
	"strings"
	"testing"
	"time"
)

// TestConfigBounds checks the bounds Config.check puts on a pinned TTL
// (a worker ticks every TTL/4: 1 ns published in a tight loop) and on the
// namespace's length (its streams' names stay within NATS's 255), each
// naming the flag.
func TestConfigBounds(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		flag string // "" for accepted
	}{
		{Config{PinnedTTL: time.Nanosecond}, "--pinned-ttl"},
		{Config{PinnedTTL: 10 * time.Millisecond}, "--pinned-ttl"},
		{Config{PinnedTTL: minPinnedTTL}, ""},
		{Config{}, ""},
		{Config{Namespace: strings.Repeat("n", maxNamespace+1)}, "--namespace"},
		{Config{Namespace: strings.Repeat("n", maxNamespace)}, ""},
	} {
		err := c.cfg.check()
		if c.flag == "" && err != nil || c.flag != "" && (err == nil || !strings.Contains(err.Error(), c.flag)) {
			t.Errorf("TTL %v, namespace of %d: %v; want an error naming %q", c.cfg.PinnedTTL, len(c.cfg.Namespace), err, c.flag)
		}
	}
}
