package distributed

import (
	"time"

	"github.com/nats-io/nats.go"
)

// ClientPingInterval and ClientMaxPingsOut bound how long a client takes to
// notice that its server is cut off: the client pings every
// ClientPingInterval and drops the connection, then reconnects to another
// node of the cluster, after ClientMaxPingsOut pings without an answer,
// about 6 s in all. nats.go's defaults (2 minutes, 2 pings) let a worker
// or a driver whose node lost the network stall the stream for minutes
// (BENCHMARKS.md, "Machines in network namespaces").
const (
	ClientPingInterval = 2 * time.Second
	ClientMaxPingsOut  = 3
)

// ClientOptions are the connection options of nmfstream's NATS clients
// (workers, stream --nats and serve --nats): reconnect forever, 100 ms
// apart, and detect a dead connection within about 6 s.
func ClientOptions() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.PingInterval(ClientPingInterval),
		nats.MaxPingsOutstanding(ClientMaxPingsOut),
	}
}
