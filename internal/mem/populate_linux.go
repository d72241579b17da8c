package mem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Populate asks the kernel to map in, at once, the pages that lie wholly
// inside s's capacity, when it spans at least MinBytes (Linux 5.14's
// MADV_POPULATE_WRITE; on an older kernel, or if it fails, nothing
// happens and the pages fault in on first write as before). It changes no
// element of s. On a virtual machine a page fault costs microseconds, and
// one call that maps a large buffer's pages costs less than faulting them
// in one by one (BENCHMARKS.md, "Fourteenth pass").
func Populate[T any](s []T) {
	s = s[:cap(s)]
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	page := uintptr(unix.Getpagesize())
	lo := (p + page - 1) &^ (page - 1)
	hi := (p + n) &^ (page - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n)
	_ = unix.Madvise(b[lo-p:hi-p], unix.MADV_POPULATE_WRITE)
}
