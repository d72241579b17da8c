//go:build nats

// Command natsnode runs one JetStream node of a NATS cluster named "nmf"
// (package natsembed), for scripts/nats-cluster.sh and for trying the
// distributed learner without installing nats-server. It stops on
// SIGINT or SIGTERM.
//
// Usage:
//
//	natsnode -name n1 -port 4222 -cluster-port 6222 -routes nats://127.0.0.1:6223,nats://127.0.0.1:6224 -dir /tmp/n1
//	natsnode -port 4222 -cluster-port 0 -max-payload 1048576 -dir /tmp/n1   # one server, a stock one's messages
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

func main() {
	var n natsembed.Node
	var routes string
	flag.StringVar(&n.Name, "name", "nmf-0", "node name, unique in the cluster")
	flag.StringVar(&n.Host, "host", "127.0.0.1", "host of the client and route listeners")
	flag.IntVar(&n.Port, "port", 4222, "client port")
	flag.IntVar(&n.ClusterPort, "cluster-port", 6222, "route port")
	flag.StringVar(&routes, "routes", "", "comma-separated route URLs of the other nodes")
	flag.StringVar(&n.Dir, "dir", "", "JetStream storage directory (required)")
	maxPayload := flag.Int("max-payload", 8<<20, "largest message in bytes (a stock nats-server takes 1048576)")
	flag.Parse()
	if n.Dir == "" {
		fmt.Fprintln(os.Stderr, "natsnode: -dir is required")
		os.Exit(2)
	}
	if *maxPayload < 1 || *maxPayload > 64<<20 {
		fmt.Fprintln(os.Stderr, "natsnode: -max-payload must be between 1 and 67108864")
		os.Exit(2)
	}
	n.MaxPayload = int32(*maxPayload)
	if routes != "" {
		n.Routes = strings.Split(routes, ",")
	}
	s, err := natsembed.StartNode(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsnode:", err)
		os.Exit(1)
	}
	fmt.Printf("natsnode %s: clients on %s\n", n.Name, s.ClientURL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Shutdown()
	s.WaitForShutdown()
}
