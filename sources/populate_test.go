package sources

import (
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/internal/mem"
)

// TestPopulating checks that the populating allocator hands out buffers of
// the asked length, zeroed, which go back to its allocator (a checked
// allocator's count returns to zero).
func TestPopulating(t *testing.T) {
	m := memory.NewCheckedAllocator(memory.NewGoAllocator())
	p := populating{m}
	for _, n := range []int{10, mem.MinBytes, 5<<20 + 3} {
		b := p.Allocate(n)
		if len(b) != n {
			t.Fatalf("Allocate(%d) gave %d bytes", n, len(b))
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("Allocate(%d): byte %d is %d", n, i, c)
			}
		}
		p.Free(b)
	}
	if got := m.CurrentAlloc(); got != 0 {
		t.Errorf("%d bytes still allocated", got)
	}
}
