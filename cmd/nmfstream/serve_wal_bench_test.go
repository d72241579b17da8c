package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/wal"
)

// BenchmarkServeDurable posts the digits to serve from 8 clients, 20
// records a request, without a write-ahead log and with one under each
// --fsync policy, and reports records/s: what durable acknowledgements
// cost beside the learning.
func BenchmarkServeDurable(b *testing.B) {
	x, _ := datasets.Digits()
	const clients, per = 8, 20
	for _, c := range []struct {
		name   string
		policy wal.Policy
		log    bool
	}{{"none", 0, false}, {"always", wal.SyncAlways, true}, {"interval", wal.SyncInterval, true}, {"never", wal.SyncNever, true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := onlineConfig{Rank: 10, Neighbors: 5, Window: 1000, Batch: 20, Seed: 1}
			s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 1 << 20, fsync: c.policy, fsyncEvery: defaultFsyncEvery}
			if c.log {
				s.ckpt = filepath.Join(b.TempDir(), "s.ckpt")
				if _, err := s.openWAL(s.ckpt+".wal", false); err != nil {
					b.Fatal(err)
				}
			}
			url, stop := startServer(b, s)
			bodies := make([][]byte, 0, 1797/per)
			for r := 0; r+per <= 1797; r += per {
				var body bytes.Buffer
				for i := r; i < r+per; i++ {
					json.NewEncoder(&body).Encode(map[string]any{"x": x.RawRowView(i)})
				}
				bodies = append(bodies, body.Bytes())
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			var next sync.Mutex
			q := 0
			for range clients {
				wg.Go(func() {
					for {
						next.Lock()
						i := q
						q++
						next.Unlock()
						if i >= b.N {
							return
						}
						resp, err := http.Post(url+"/v1/records", mediaJSONL, bytes.NewReader(bodies[i%len(bodies)]))
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Error(fmt.Errorf("status %d", resp.StatusCode))
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "records/s")
			if err := stop(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
