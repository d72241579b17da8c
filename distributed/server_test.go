//go:build nats

package distributed

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// startServer runs a one-node JetStream server for the test and returns
// a connection to it.
func startServer(t testing.TB) (*nats.Conn, string) {
	t.Helper()
	s, err := natsembed.Start(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return connect(t, s.ClientURL()), s.ClientURL()
}
