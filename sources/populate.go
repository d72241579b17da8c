package sources

import (
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// populateMin is the smallest allocation whose pages populate maps in at
// once: 1 MiB, a large Arrow buffer (a batch's features), not a column of
// ids.
const populateMin = 1 << 20

// populating is an Allocator whose large allocations have their pages
// mapped in at once (populate), so that the IPC reader's copy of a
// batch's buffers does not fault them in one by one.
type populating struct{ memory.Allocator }

func (p populating) Allocate(n int) []byte {
	b := p.Allocator.Allocate(n)
	populate(b)
	return b
}

// addr is the address of b's first byte.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
