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
	nc, _ := startServer(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
