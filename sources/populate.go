package sources

import (
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/nmfstream/nmfstream/internal/mem"
)

// populating is an Allocator whose large allocations have their pages
// mapped in at once (mem.Populate), so that the IPC reader's copy of a
// batch's buffers does not fault them in one by one.
type populating struct{ memory.Allocator }

func (p populating) Allocate(n int) []byte {
	b := p.Allocator.Allocate(n)
	mem.Populate(b)
	return b
}
