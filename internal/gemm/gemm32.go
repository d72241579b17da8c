package gemm

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
)

// panelCols32 is the widest column panel in float32: 4 vectors of 16.
const panelCols32 = 64

func panelOf32(q, k int) (w, nv, k0 int) {
	k0 = q * panelCols32
	w = min(panelCols32, k-k0)
	return w, (w + 15) / 16, k0
}

func panels32(k int) int { return (k + panelCols32 - 1) / panelCols32 }

// Packed32 is a D×K float32 matrix packed for MulPacked32: in column
// panels of at most 64, each row of a panel padded to a whole number of
// 16-entry vectors.
type Packed32 struct {
	d, k int
	data []float32
	off  []int
}

// PackT stores bᵀ into p, for b of K×D: the product x·bᵀ of two sets of
// rows (inner products between rows) is then MulPacked32(c, x, p).
func (p *Packed32) PackT(b blas32.General) {
	k, d := b.Rows, b.Cols
	p.d, p.k = d, k
	p.off = p.off[:0]
	size := 0
	for q := range panels32(k) {
		_, nv, _ := panelOf32(q, k)
		p.off = append(p.off, size)
		size += d * 16 * nv
	}
	p.data = alignedResize32(p.data, size)
	for q := range panels32(k) {
		w, nv, k0 := panelOf32(q, k)
		vw := 16 * nv
		dst := p.data[p.off[q] : p.off[q]+d*vw]
		if w < vw {
			clear(dst)
		}
		for j := range w {
			row := b.Data[(k0+j)*b.Stride : (k0+j)*b.Stride+d]
			for t, v := range row {
				dst[t*vw+j] = v
			}
		}
	}
}

// MulPacked32 sets c = x·B in float32, for x of r×D and c of r×K. Each row
// of c depends only on the same row of x.
func MulPacked32(c, x blas32.General, b *Packed32) {
	if x.Cols != b.d || c.Rows != x.Rows || c.Cols != b.k {
		panic(fmt.Sprintf("gemm: MulPacked32: x is %d×%d, B %d×%d, c %d×%d", x.Rows, x.Cols, b.d, b.k, c.Rows, c.Cols))
	}
	if x.Rows == 0 || b.k == 0 {
		return
	}
	checkRows32(c, "c")
	checkRows32(x, "x")
	if b.d == 0 {
		for i := range x.Rows {
			clear(c.Data[i*c.Stride : i*c.Stride+b.k])
		}
		return
	}
	var a, cc [tileRows]*float32
	i := 0
	for ; i+tileRows <= x.Rows; i += tileRows {
		for q := range panels32(b.k) {
			w, nv, k0 := panelOf32(q, b.k)
			for r := range tileRows {
				a[r] = &x.Data[(i+r)*x.Stride]
				cc[r] = &c.Data[(i+r)*c.Stride+k0]
			}
			mulRows32x6(nv, b.d, &a, &b.data[b.off[q]], 16*nv, &cc, lastMask32(w, nv))
		}
	}
	for ; i < x.Rows; i++ {
		for q := range panels32(b.k) {
			w, nv, k0 := panelOf32(q, b.k)
			a[0], cc[0] = &x.Data[i*x.Stride], &c.Data[i*c.Stride+k0]
			mulRows32x1(nv, b.d, &a, &b.data[b.off[q]], 16*nv, &cc, lastMask32(w, nv))
		}
	}
}

func lastMask32(w, nv int) uint16 { return uint16(uint32(1)<<(w-16*(nv-1)) - 1) }

func checkRows32(m blas32.General, name string) {
	if m.Rows > 0 && m.Cols > 0 && (m.Stride < m.Cols || len(m.Data) < (m.Rows-1)*m.Stride+m.Cols) {
		panic(fmt.Sprintf("gemm: %s: %d×%d with stride %d needs more than its %d entries", name, m.Rows, m.Cols, m.Stride, len(m.Data)))
	}
}

func alignedResize32(s []float32, n int) []float32 {
	if cap(s) >= n && (cap(s) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64 == 0) {
		return s[:n]
	}
	buf := make([]float32, n+16)
	off := 0
	if r := uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % 64; r != 0 {
		off = int(64-r) / 4
	}
	return buf[off : off+n : off+n]
}

// mulRows32Generic is the float32 kernels' plain-Go form.
func mulRows32Generic(rows, nv, n int, a *[6]*float32, b *float32, ldb int, c *[6]*float32, mask uint16) {
	w := 16*(nv-1) + bitsLen(mask)
	bs := unsafe.Slice(b, max((n-1)*ldb+16*nv, 0))
	for r := range rows {
		as := unsafe.Slice(a[r], n)
		cs := unsafe.Slice(c[r], w)
		clear(cs)
		for t, at := range as {
			for j := range cs {
				cs[j] += at * bs[t*ldb+j]
			}
		}
	}
}
