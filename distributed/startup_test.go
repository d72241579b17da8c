//go:build nats

package distributed

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/nmfstream/nmfstream/distributed/natsembed"
)

// TestWorkersStartWithTheCluster starts three nodes and, without waiting
// for their JetStream meta leader, three instances at once on a new
// namespace, as `scripts/nats-cluster.sh` followed at once by three `worker`
// processes does: each reads the namespace's settings (StoredConfig, as
// the command line's adoption does) and sets it up (NewChainWorker). All three
// must come up: a fresh cluster answers JetStream requests only once it
// has elected a meta leader, and before the retries of AdoptConfig and
// checkSettings every instance failed with "context deadline exceeded".
func TestWorkersStartWithTheCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster takes several seconds to elect its leaders")
	}
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	routes := make([]string, 3)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	servers := make([]*server.Server, 3)
	t.Cleanup(func() { natsembed.Shutdown(servers) })
	dir := t.TempDir()
	for i := range servers {
		s, err := natsembed.StartNode(natsembed.Node{Name: fmt.Sprintf("nmf-%d", i), Host: "127.0.0.1", ClusterPort: ports[i],
			Routes: routes, Dir: filepath.Join(dir, fmt.Sprintf("node-%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = s
	}
	urls := servers[0].ClientURL() + "," + servers[1].ClientURL() + "," + servers[2].ClientURL()
	cfg := Config{Namespace: "together", Partitions: 1, Rank: 3, Replicas: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			nc := connect(t, urls)
			c, _, err := StoredConfig(ctx, nc, cfg)
			if err == nil {
				_, err = NewChainWorker(ctx, nc, c, testLearner)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
}
