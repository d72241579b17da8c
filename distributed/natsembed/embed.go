//go:build nats

// Package natsembed runs NATS servers with JetStream inside the process:
// one node for a self-contained worker and for tests, or a cluster of
// nodes routed on loopback. It is apart from package distributed so that
// programs that connect to an existing server do not link the server.
package natsembed

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start runs a single JetStream node storing under dir, listening on
// host:port (port 0: a free port), and returns it once it accepts
// connections; Shutdown stops it. Its client URL is s.ClientURL().
func Start(dir, host string, port int) (*server.Server, error) {
	return StartPayload(dir, host, port, 8<<20)
}

// StartPayload is Start with the server's max_payload, the largest
// message it accepts, set to maxPayload bytes (nats-server's default is
// 1 MiB; Start uses 8 MiB).
func StartPayload(dir, host string, port int, maxPayload int32) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return start(&server.Options{
		ServerName: "nmf-0", Host: host, Port: port, JetStream: true, StoreDir: dir,
		MaxPayload: maxPayload, NoSigs: true,
	})
}

// readyWithin bounds the wait for a server to accept connections.
const readyWithin = 30 * time.Second

func start(o *server.Options) (*server.Server, error) {
	s, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("natsembed: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(readyWithin) {
		s.Shutdown()
		return nil, fmt.Errorf("natsembed: server %s not ready within %v", o.ServerName, readyWithin)
	}
	return s, nil
}

// Node configures one node of a cluster.
type Node struct {
	// Name names the node; it must be unique in the cluster.
	Name string
	// Host and Port are the client listener (Port 0: a free port).
	Host string
	Port int
	// ClusterPort is the route listener on Host.
	ClusterPort int
	// Routes are the other nodes' route URLs, nats://host:port.
	Routes []string
	// Dir is the JetStream storage directory.
	Dir string
	// MaxPayload is the largest message the node accepts, in bytes (0:
	// 8 MiB; a stock nats-server's default is 1 MiB).
	MaxPayload int32
}

// StartNode runs one JetStream node of the cluster "nmf" and returns it
// once it accepts client connections (its routes may still be forming);
// without a ClusterPort and Routes, a server of its own.
func StartNode(n Node) (*server.Server, error) {
	port := n.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	var routes []*url.URL
	for _, r := range n.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("natsembed: route %q: %w", r, err)
		}
		routes = append(routes, u)
	}
	o := &server.Options{
		ServerName: n.Name, Host: n.Host, Port: port, JetStream: true, StoreDir: n.Dir,
		MaxPayload: cmp.Or(n.MaxPayload, 8<<20), NoSigs: true,
	}
	if n.ClusterPort != 0 || len(routes) > 0 {
		o.Cluster = server.ClusterOpts{Name: "nmf", Host: n.Host, Port: n.ClusterPort}
		o.Routes = routes
	}
	return start(o)
}

// Cluster runs n JetStream nodes on loopback routed to one another, node i
// storing under dir/node-i, and returns them once each accepts
// connections and the JetStream meta leader sees all of them.
//
// The route ports are found free before the nodes bind them, so another
// process may take one in between; Cluster then tries again with other
// ports, up to three times.
func Cluster(dir string, n int) ([]*server.Server, error) {
	var err error
	for attempt := range 3 {
		var servers []*server.Server
		if servers, err = cluster(filepath.Join(dir, fmt.Sprintf("try-%d", attempt)), n); err == nil {
			return servers, nil
		}
	}
	return nil, err
}

func cluster(dir string, n int) ([]*server.Server, error) {
	ports := make([]int, n)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	servers := make([]*server.Server, n)
	for i := range n {
		s, err := StartNode(Node{Name: fmt.Sprintf("nmf-%d", i), Host: "127.0.0.1", ClusterPort: ports[i],
			Routes: routes, Dir: filepath.Join(dir, fmt.Sprintf("node-%d", i))})
		if err != nil {
			Shutdown(servers)
			return nil, fmt.Errorf("natsembed: node %d: %w", i, err)
		}
		servers[i] = s
	}
	deadline := time.Now().Add(30 * time.Second)
	// Ready once the meta leader sees every node as a current JetStream
	// peer: before that, streams with n replicas find no placement.
	for time.Now().Before(deadline) {
		for _, s := range servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return servers, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	Shutdown(servers)
	return nil, fmt.Errorf("natsembed: the JetStream meta leader did not see all %d nodes within 30 s", n)
}

// Shutdown stops the servers that are not nil.
func Shutdown(servers []*server.Server) {
	for _, s := range servers {
		if s != nil {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("natsembed: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
