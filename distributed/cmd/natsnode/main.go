//go:build nats

// Command natsnode runs one JetStream node of a NATS cluster named "nmf"
// (package natsembed), for scripts/nats-cluster.sh and for trying the
// distributed learner without installing nats-server. It stops on
// SIGINT or SIGTERM.
//
// Usage:
//
//	natsnode -name n1 -port 4222 -cluster-port 6222 -routes nats://127.0.0.1:6223,nats://127.0.0.1:6224 -dir /tmp/n1
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
	flag.Parse()
	if n.Dir == "" {
		fmt.Fprintln(os.Stderr, "natsnode: -dir is required")
		os.Exit(2)
	}
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
