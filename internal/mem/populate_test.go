package mem

import "testing"

// TestPopulate checks that Populate changes no element of a buffer,
// written or fresh, aligned to a page or not, up to its capacity.
func TestPopulate(t *testing.T) {
	buf := make([]byte, 3<<20+4096)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	for _, off := range []int{0, 1, 17, 4095} {
		b := buf[off : off+1 : off+3<<20] // length 1: Populate covers the capacity
		Populate(b)
		b = b[:cap(b)]
		for i, c := range b {
			if c != byte((i+off)*7+1) {
				t.Fatalf("offset %d: byte %d is %d after Populate, was %d", off, i, c, byte((i+off)*7+1))
			}
		}
	}
	f := make([]float64, 0, 1<<18) // 2 MiB
	Populate(f)
	for i, v := range f[:cap(f)] {
		if v != 0 {
			t.Fatalf("fresh float64 %d is %v after Populate", i, v)
		}
	}
}
