//go:build nats

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/nmfstream/nmfstream/distributed"
	"github.com/nmfstream/nmfstream/sources"
)

// TestShortStreamWarm: stream --nats reads ahead twice its common start;
// a stream that ends within it (digits' training file, 1,198 samples) has
// its common start cut to half its samples, and one that does not keeps
// it (distributed.ChainDriver.ShortStream).
func TestShortStreamWarm(t *testing.T) {
	train, _, _ := digitsFiles(t, t.TempDir(), 0)
	nc, err := nats.Connect(testNATS(t).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, c := range []struct{ warm, want int }{{2000, 599}, {500, 500}} {
		drv, err := distributed.NewChainDriver(context.Background(), nc, distributed.Config{Namespace: fmt.Sprintf("short%d", c.warm), Partitions: 3, Warm: c.warm}, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		src, err := csvFlags{}.openStream(train, 100)
		if err != nil {
			t.Fatal(err)
		}
		read, err := anchoredRead(context.Background(), sources.NewReader(src), drv, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			s, err := read(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.feat != nil {
				n += len(s.feat.Offsets)
			} else {
				n += s.batch.Records()
			}
		}
		if drv.Warm() != c.want || c.warm == 2000 && n/2 != c.want {
			t.Errorf("Warm %d on a stream of %d samples: %d, want %d", c.warm, n, drv.Warm(), c.want)
		}
		src.Close()
		drv.Close()
	}
}
