package stages

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTermTable checks termTable against a Go map on random terms of 1 to
// 40 bytes (inline and long ones, with shared prefixes and zero bytes),
// through growth and overwrites, for hits and misses.
func TestTermTable(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	word := func() string {
		var sb strings.Builder
		n := 1 + rnd.IntN(40)
		if rnd.IntN(2) == 0 {
			n = 1 + rnd.IntN(16) // mostly around the inline limit
		}
		for range n {
			sb.WriteByte("ab\x00\xffz"[rnd.IntN(5)])
		}
		return sb.String()
	}
	var tt termTable
	want := map[string]int32{}
	for i := range 20000 {
		w := word()
		v := int32(i)
		if i%2 == 0 {
			put(&tt, w, v)
		} else {
			put(&tt, []byte(w), v)
		}
		want[w] = v
	}
	if tt.len() != len(want) {
		t.Errorf("len = %d, want %d", tt.len(), len(want))
	}
	for w, v := range want {
		if got, ok := get(&tt, []byte(w)); !ok || got != v {
			t.Fatalf("get(%q) = %d, %v; want %d, true", w, got, ok, v)
		}
	}
	for range 20000 {
		w := word()
		got, ok := get(&tt, w)
		if v, in := want[w]; ok != in || got != v {
			t.Fatalf("get(%q) = %d, %v; want %d, %v", w, got, ok, v, in)
		}
	}
	var empty termTable
	if _, ok := get(&empty, "ab"); ok {
		t.Error("the zero termTable has a term")
	}
}
