//go:build nats

package distributed

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestEnsureStream: ensureStream makes a stream, takes an existing one
// with the same configuration as it is, and updates one whose subjects or
// age limit differ.
func TestEnsureStream(t *testing.T) {
	js, ctx := testJetStream(t)
	sc := jetstream.StreamConfig{Name: "ENS", Subjects: []string{"ens.a"}, MaxAge: time.Minute, Duplicates: time.Minute}
	for _, c := range []struct {
		subjects []string
		age      time.Duration
	}{{[]string{"ens.a"}, time.Minute}, {[]string{"ens.a"}, time.Minute}, {[]string{"ens.a", "ens.b"}, time.Minute}, {[]string{"ens.a", "ens.b"}, time.Hour}} {
		sc.Subjects, sc.MaxAge = c.subjects, c.age
		s, err := ensureStream(ctx, js, sc)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Config; !slices.Equal(got.Subjects, c.subjects) || got.MaxAge != c.age || got.Duplicates != time.Minute {
			t.Errorf("stream with subjects %v, age %v, duplicates %v; want %v, %v, 1m", got.Subjects, got.MaxAge, got.Duplicates, c.subjects, c.age)
		}
	}
}

// TestRoleConsumerRetries: a request that times out while a new cluster
// elects leaders does not stop the worker: the role consumer is made on a
// later attempt.
func TestRoleConsumerRetries(t *testing.T) {
	js, ctx := testJetStream(t)
	st, err := setup(ctx, js, Config{Namespace: "rc"})
	if err != nil {
		t.Fatal(err)
	}
	slow := &timingOut{JetStream: js, fails: 2}
	st.js = slow
	cons, err := st.roleConsumer(ctx, "rc-owner-0", time.Second)
	if err != nil || cons == nil {
		t.Fatalf("role consumer after two timeouts: %v", err)
	}
	if slow.calls != 3 {
		t.Errorf("%d attempts, want 3 (two timeouts, then the consumer)", slow.calls)
	}
}

// timingOut is a JetStream whose first fails consumer requests time out.
type timingOut struct {
	jetstream.JetStream
	fails, calls int
}

func (j *timingOut) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	j.calls++
	if j.calls <= j.fails {
		return nil, context.DeadlineExceeded
	}
	return j.JetStream.CreateOrUpdateConsumer(ctx, stream, cfg)
}

// testJetStream returns the JetStream of a server of the test's own, and
// a context that ends with the test (or after a minute).
func testJetStream(t *testing.T) (jetstream.JetStream, context.Context) {
	t.Helper()
	nc, _ := startServer(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return js, ctx
}
