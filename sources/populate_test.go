package sources

import (
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestPopulate checks that populate changes no byte of a buffer, written
// or fresh, aligned to a page or not, and that the populating allocator
// hands out buffers of the asked length, zeroed, which go back to its
// allocator (a checked allocator's count returns to zero).
func TestPopulate(t *testing.T) {
	buf := make([]byte, 3<<20+4096)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	for _, off := range []int{0, 1, 17, 4095} {
		b := buf[off : off+3<<20]
		populate(b)
		for i, c := range b {
			if c != byte((i+off)*7+1) {
				t.Fatalf("offset %d: byte %d is %d after populate, was %d", off, i, c, byte((i+off)*7+1))
			}
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	p := populating{mem}
	for _, n := range []int{10, populateMin, 5<<20 + 3} {
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
	if got := mem.CurrentAlloc(); got != 0 {
		t.Errorf("%d bytes still allocated", got)
	}
}
