// Package gemm computes the two products with the data that every
// multiplicative update of a Frobenius factorization needs, for a narrow
// factor of K columns: x·B (N×D by D×K) and xᵀ·A (D×N by N×K), with X
// dense, tall and read once per product. In the factorization's terms
// (X of D×N, samples as columns) these are XᵀU and XV; here x holds the
// samples as rows (N×D), so they are x·U and xᵀ·V.
//
// BLAS routines are tuned for square-ish shapes: on K = 50 OpenBLAS runs
// them at under half its peak, and gonum's pure-Go BLAS at a fifth of
// OpenBLAS. The kernels here keep the narrow operand packed in cache and
// stream X as it lies in memory, with no copy of it: on amd64 with
// AVX-512 they beat OpenBLAS on these shapes (BenchmarkMulPacked,
// BenchmarkMulXTA). Elsewhere (or with build tag purego) the same
// functions run in plain Go, correct but slow, and Fast is false: callers
// should then use BLAS.
//
// Results are deterministic: every entry is summed over the shared
// dimension in increasing order, whatever the number of rows a call is
// given, so that splitting the rows of X across goroutines does not change
// a bit of any row's result.
package gemm

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
)

// Fast reports whether the AVX-512 kernels run on this machine.
var Fast = hasAVX512

// panelCols is the widest column panel: 7 vectors of 8 entries, the most
// a three-row tile keeps in registers.
const panelCols = 56

// MulXTA's tiles: rows of x per block (a multiple of 3) and columns of x
// per pass, so that a block's packed rows of a, the pass's slice of c and
// the lines of x in use stay within L1. Measured on
// BenchmarkMulXTA20000x784x50 (GFLOP/s, two runs each): rows 30, 60, 120
// with 48 columns 25–26, 26–28, 19–20; with 96 columns 21–22, 16–18,
// 12–16; rows 45, 60, 90 with 32 columns 27–30, 27–29, 23.
const (
	xtaRows = 60
	xtaCols = 32
)

// Packed is a D×K matrix B packed for MulPacked: in column panels of at
// most 56, each row of a panel padded to a whole number of 8-entry
// vectors.
type Packed struct {
	d, k int
	data []float64
	off  []int // start of each panel in data
}

// Dims returns the dimensions of the packed matrix.
func (p *Packed) Dims() (d, k int) { return p.d, p.k }

// vectors returns the width, vector count and first column of panel q of
// k columns.
func panelOf(q, k int) (w, nv, k0 int) {
	k0 = q * panelCols
	w = min(panelCols, k-k0)
	return w, (w + 7) / 8, k0
}

func panels(k int) int { return (k + panelCols - 1) / panelCols }

// Pack stores b into p, reusing p's storage.
func (p *Packed) Pack(b blas64.General) {
	d, k := b.Rows, b.Cols
	p.d, p.k = d, k
	p.off = p.off[:0]
	size := 0
	for q := range panels(k) {
		_, nv, _ := panelOf(q, k)
		p.off = append(p.off, size)
		size += d * 8 * nv
	}
	p.data = alignedResize(p.data, size)
	for q := range panels(k) {
		w, nv, k0 := panelOf(q, k)
		dst := p.data[p.off[q]:]
		for t := range d {
			row := dst[t*8*nv : (t+1)*8*nv]
			copy(row, b.Data[t*b.Stride+k0:t*b.Stride+k0+w])
			clear(row[w:])
		}
	}
}

// MulPacked sets c = x·B, for x of r×D and c of r×K. Each row of c
// depends only on the same row of x.
func MulPacked(c, x blas64.General, b *Packed) {
	if x.Cols != b.d || c.Rows != x.Rows || c.Cols != b.k {
		panic(fmt.Sprintf("gemm: MulPacked: x is %d×%d, B %d×%d, c %d×%d", x.Rows, x.Cols, b.d, b.k, c.Rows, c.Cols))
	}
	if x.Rows == 0 || b.k == 0 {
		return
	}
	checkRows(c, "c")
	checkRows(x, "x")
	for q := range panels(b.k) {
		w, nv, k0 := panelOf(q, b.k)
		mask := uint16(1)<<(w-8*(nv-1)) - 1
		i := 0
		if b.d == 0 {
			// Nothing to read from x: the kernels only store zeros.
			for ; i < x.Rows; i++ {
				clear(c.Data[i*c.Stride+k0 : i*c.Stride+k0+w])
			}
			continue
		}
		bp := &b.data[b.off[q]]
		for ; i+3 <= x.Rows; i += 3 {
			a := [3]*float64{&x.Data[i*x.Stride], &x.Data[(i+1)*x.Stride], &x.Data[(i+2)*x.Stride]}
			cc := [3]*float64{&c.Data[i*c.Stride+k0], &c.Data[(i+1)*c.Stride+k0], &c.Data[(i+2)*c.Stride+k0]}
			mulRows3(nv, b.d, &a, bp, 8*nv, &cc, mask)
		}
		for ; i < x.Rows; i++ {
			a := [3]*float64{&x.Data[i*x.Stride]}
			cc := [3]*float64{&c.Data[i*c.Stride+k0]}
			mulRows1(nv, b.d, &a, bp, 8*nv, &cc, mask)
		}
	}
}

// Workspace holds MulXTA's scratch between calls.
type Workspace struct {
	acc, a []float64
}

// MulXTA sets c = xᵀ·a, for x of N×D, a of N×K and c of D×K. Each entry
// of c is summed over the N rows in increasing order.
func MulXTA(c, x, a blas64.General, ws *Workspace) {
	n, k, d := a.Rows, a.Cols, x.Cols
	if x.Rows != n || c.Rows != d || c.Cols != k {
		panic(fmt.Sprintf("gemm: MulXTA: x is %d×%d, a %d×%d, c %d×%d", x.Rows, x.Cols, a.Rows, a.Cols, c.Rows, c.Cols))
	}
	if k == 0 || d == 0 {
		return
	}
	if n > 0 {
		checkRows(a, "a")
		checkRows(x, "x")
	}
	checkRows(c, "c")
	for q := range panels(k) {
		w, nv, k0 := panelOf(q, k)
		vw := 8 * nv
		// acc is c's panel, rows padded to whole vectors; ap holds a block
		// of a's rows packed the same way.
		ws.acc = alignedResize(ws.acc, d*vw)
		acc := ws.acc
		clear(acc)
		ws.a = alignedResize(ws.a, xtaRows*vw)
		ap := ws.a
		for i0 := 0; i0 < n; i0 += xtaRows {
			i1 := min(i0+xtaRows, n)
			for i := i0; i < i1; i++ {
				row := ap[(i-i0)*vw : (i-i0+1)*vw]
				copy(row, a.Data[i*a.Stride+k0:i*a.Stride+k0+w])
				clear(row[w:])
			}
			for p0 := 0; p0 < d; p0 += xtaCols {
				np := min(xtaCols, d-p0)
				i := i0
				for ; i+3 <= i1; i += 3 {
					xs := [3]*float64{&x.Data[i*x.Stride+p0], &x.Data[(i+1)*x.Stride+p0], &x.Data[(i+2)*x.Stride+p0]}
					addOuter3(nv, np, &xs, &ap[(i-i0)*vw], &acc[p0*vw], vw)
				}
				for ; i < i1; i++ {
					xs := [3]*float64{&x.Data[i*x.Stride+p0]}
					addOuter1(nv, np, &xs, &ap[(i-i0)*vw], &acc[p0*vw], vw)
				}
			}
		}
		for p := range d {
			copy(c.Data[p*c.Stride+k0:p*c.Stride+k0+w], acc[p*vw:])
		}
	}
}

// checkRows panics unless every row of m lies within m.Data.
func checkRows(m blas64.General, name string) {
	if m.Rows > 0 && m.Cols > 0 && (m.Stride < m.Cols || len(m.Data) < (m.Rows-1)*m.Stride+m.Cols) {
		panic(fmt.Sprintf("gemm: %s: %d×%d with stride %d needs more than its %d entries", name, m.Rows, m.Cols, m.Stride, len(m.Data)))
	}
}

// alignedResize returns a slice of n entries whose first entry lies on a
// 64-byte boundary (a cache line, and the width of a vector), reusing s if
// it is one already and large enough.
func alignedResize(s []float64, n int) []float64 {
	if cap(s) >= n && (len(s) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64 == 0) {
		return s[:n]
	}
	buf := make([]float64, n+8)
	off := 0
	if r := uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % 64; r != 0 {
		off = int(64-r) / 8
	}
	return buf[off : off+n : off+n]
}

// mulRowsGeneric is the kernels' plain-Go form: for r < rows,
// c_r[0:w] = Σ_t a_r[t]·b[t·ldb : t·ldb+w], where w is the width the mask
// leaves in the last of nv vectors.
func mulRowsGeneric(rows, nv, n int, a *[3]*float64, b *float64, ldb int, c *[3]*float64, mask uint16) {
	w := 8*(nv-1) + bitsLen(mask)
	bs := unsafe.Slice(b, max((n-1)*ldb+8*nv, 0))
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

// addOuterGeneric is the plain-Go form of the addOuter kernels: for i < n,
// c[i·ldc : i·ldc+8nv] += x_0[i]·v_0 + … + x_{rows−1}[i]·v_{rows−1}.
func addOuterGeneric(rows, nv, n int, x *[3]*float64, v *float64, c *float64, ldc int) {
	vw := 8 * nv
	vs := unsafe.Slice(v, rows*vw)
	cs := unsafe.Slice(c, max((n-1)*ldc+vw, 0))
	for i := range n {
		row := cs[i*ldc : i*ldc+vw]
		for r := range rows {
			xi := unsafe.Slice(x[r], n)[i]
			for j := range row {
				row[j] += xi * vs[r*vw+j]
			}
		}
	}
}

func bitsLen(m uint16) int {
	n := 0
	for ; m != 0; m >>= 1 {
		n++
	}
	return n
}
