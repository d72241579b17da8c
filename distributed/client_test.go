package distributed

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The clients notice a dead server within seconds, not nats.go's default
// of minutes, and never stop reconnecting.
func TestClientOptions(t *testing.T) {
	o := nats.GetDefaultOptions()
	for _, opt := range ClientOptions() {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if d := o.PingInterval * time.Duration(o.MaxPingsOut); d > 10*time.Second {
		t.Errorf("a dead connection is noticed after %v, want at most 10 s", d)
	}
	if o.MaxReconnect >= 0 {
		t.Errorf("MaxReconnect %d, want unlimited (negative)", o.MaxReconnect)
	}
}
