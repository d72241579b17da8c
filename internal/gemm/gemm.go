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
// BenchmarkMulXTA). On amd64 with AVX2 and FMA but no AVX-512, kernels
// of half the width give the same bits. Elsewhere (or with build tag
// purego) the same functions run in plain Go, correct but slow, and Fast
// is false: callers should then use BLAS.
//
// MulPacked32 and Packed32 do x·Bᵀ in float32 for the k-NN search's
// inner products between rows.
//
// RowNZ (nz.go) computes a row of x·B, or of xᵀ·A, from the nonzeros of
// a row, or a column, of x: the same chains of fused multiply-adds as
// MulPacked and MulXTA less the terms of zero entries, so the same bits.
//
// Results are deterministic: every entry is summed over the shared
// dimension in increasing order, whatever the number of rows a call is
// given, so that splitting the rows of X across goroutines does not change
// a bit of any row's result. The kernels sum by fused multiply-add, so on
// any machine with kernels an entry is the same chain of FMAs, bit for
// bit; the plain-Go forms round each product (unless the compiler fuses
// them, as it may for GOAMD64=v3) and agree with the kernels to rounding.
package gemm

import (
	"fmt"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// Fast reports whether assembly kernels (AVX-512, or AVX2 with FMA) run
// on this machine.
var Fast = hasKernels

// Serves64 and Serves32 report whether the kernels serve a product better
// than blas64 or blas32: the one rule by which every product of the module
// picks its implementation (MulTo, MulTransTo, ABT and ABT32 apply it;
// callers with packed operands of their own ask it). A product run in
// parts, one beside the other on every core (inParts), takes the kernels
// whenever Fast: a BLAS would start threads of its own against the parts.
// A product run serially takes them when Fast and the BLAS is gonum's
// own, which they outrun fourfold and more on every shape benchmarked here
// with AVX-512; with AVX2 alone (BenchmarkMulPacked*, BenchmarkMulXTA*,
// BenchmarkMulABT32Rows512x784) by 4–10× from three rows against many on,
// and about even on one row against many, where both wait on memory.
// OpenBLAS keeps such products, since its threads use all cores. Which
// BLAS is registered is read once, at the first call, after every
// package's init (internal/openblas registers OpenBLAS in its own).
func Serves64(inParts bool) bool {
	n64, _ := nativeBLAS()
	return Fast && (inParts || n64)
}

func Serves32(inParts bool) bool {
	_, n32 := nativeBLAS()
	return Fast && (inParts || n32)
}

// nativeBLAS reports whether gonum's own BLAS runs float64 and float32
// products, decided at the first call.
var nativeBLAS = sync.OnceValues(func() (n64, n32 bool) {
	_, n64 = blas64.Implementation().(gonum.Implementation)
	_, n32 = blas32.Implementation().(gonum.Implementation)
	return n64, n32
})

// Panels: each is at most 4 vectors wide (32 float64, 64 float32), so
// that a tile of six rows fits in the 32 vector registers with the
// operands it reads. Six rows of four vectors read one vector of the
// packed operand per six FMAs; three rows of seven vectors (K up to 56 in
// one panel) read one per three, and ran x·U at 32–37 GFLOP/s against
// 42–44 in a C prototype of both on K = 50.
const panelVectors = 4

// float is an element type of the kernels.
type float interface{ float32 | float64 }

// lanes returns the number of T in a 512-bit vector.
func lanes[T float]() int {
	var z T
	return 64 / int(unsafe.Sizeof(z))
}

// panelOf returns the width, vector count and first column of panel q of
// k columns of T.
func panelOf[T float](q, k int) (w, nv, k0 int) {
	l := lanes[T]()
	k0 = q * panelVectors * l
	w = min(panelVectors*l, k-k0)
	return w, (w + l - 1) / l, k0
}

// panels returns the number of panels of k columns of T.
func panels[T float](k int) int {
	pc := panelVectors * lanes[T]()
	return (k + pc - 1) / pc
}

// lastMask is the mask of the entries of a w-wide panel of T in its last
// of nv vectors.
func lastMask[T float](w, nv int) uint16 {
	return uint16(uint32(1)<<(w-lanes[T]()*(nv-1)) - 1)
}

// rowsKernel is a mulRows kernel: c_r[0:w] = Σ_t a_r[t]·b[t·ldb : …] for
// the rows r of a tile, the last vector of each c_r stored under mask.
type rowsKernel[T float] func(nv, n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16)

// matrix is a row-major matrix of T: the fields of blas64.General or
// blas32.General.
type matrix[T float] struct {
	rows, cols, stride int
	data               []T
}

func of64(m blas64.General) matrix[float64] { return matrix[float64]{m.Rows, m.Cols, m.Stride, m.Data} }
func of32(m blas32.General) matrix[float32] { return matrix[float32]{m.Rows, m.Cols, m.Stride, m.Data} }

// check panics unless every row of m lies within its data.
func (m matrix[T]) check(name string) {
	if m.rows > 0 && m.cols > 0 && (m.stride < m.cols || len(m.data) < (m.rows-1)*m.stride+m.cols) {
		panic(fmt.Sprintf("gemm: %s: %d×%d with stride %d needs more than its %d entries", name, m.rows, m.cols, m.stride, len(m.data)))
	}
}

// rowKernels returns the mulRows kernels of T for six rows and for one.
func rowKernels[T float]() (six, one rowsKernel[T]) {
	var s, o any
	switch any(*new(T)).(type) {
	case float64:
		s, o = mulRows6, mulRows1
	case float32:
		s, o = mulRows32x6, mulRows32x1
	}
	return s.(rowsKernel[T]), o.(rowsKernel[T])
}

// plainRows returns the plain-Go form of the mulRows kernels for the
// given number of rows.
func plainRows[T float](rows int) rowsKernel[T] {
	return func(nv, n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16) {
		mulRowsGeneric(rows, nv, n, a, b, ldb, c, mask)
	}
}

// colsKernel is a mulCols kernel (see mulColsGeneric).
type colsKernel func(n int, x *float64, ldx int, a *float64, lda int, c *float64, ldc int, pf uintptr, pfn int)

// plainCols returns the plain-Go form of the mulCols kernel for the given
// rows and vectors.
func plainCols(rows, nv int) colsKernel {
	return func(n int, x *float64, ldx int, a *float64, lda int, c *float64, ldc int, _ uintptr, _ int) {
		mulColsGeneric(rows, nv, n, x, ldx, a, lda, c, ldc)
	}
}

// mulPacked is MulPacked and MulPacked32 (name, for errors): c = x·B,
// six rows at a time and the rest one by one.
func mulPacked[T float](name string, c, x matrix[T], b *packed[T]) {
	if x.cols != b.d || c.rows != x.rows || c.cols != b.k {
		panic(fmt.Sprintf("gemm: %s: x is %d×%d, B %d×%d, c %d×%d", name, x.rows, x.cols, b.d, b.k, c.rows, c.cols))
	}
	if x.rows == 0 || b.k == 0 {
		return
	}
	c.check("c")
	x.check("x")
	if b.d == 0 {
		// Nothing to read from x: c is zero.
		for i := range x.rows {
			clear(c.data[i*c.stride : i*c.stride+b.k])
		}
		return
	}
	six, one := rowKernels[T]()
	// Each group of six rows goes through every panel while its rows of x
	// are in cache.
	var a, cc [tileRows]*T
	i := 0
	for ; i+tileRows <= x.rows; i += tileRows {
		for q := range panels[T](b.k) {
			w, nv, k0 := panelOf[T](q, b.k)
			for t := range tileRows {
				a[t] = &x.data[(i+t)*x.stride]
				cc[t] = &c.data[(i+t)*c.stride+k0]
			}
			six(nv, b.d, &a, &b.data[b.off[q]], lanes[T]()*nv, &cc, lastMask[T](w, nv))
		}
	}
	for ; i < x.rows; i++ {
		for q := range panels[T](b.k) {
			w, nv, k0 := panelOf[T](q, b.k)
			a[0], cc[0] = &x.data[i*x.stride], &c.data[i*c.stride+k0]
			one(nv, b.d, &a, &b.data[b.off[q]], lanes[T]()*nv, &cc, lastMask[T](w, nv))
		}
	}
}

// tileRows is the number of rows of x a kernel call takes at once.
const tileRows = 6

// MulXTA's blocks: rows of x (and a) per block, and how many lines of
// the next block each kernel call asks for (see mulCols in gen.go).
// Measured on four 2-goroutine runs of the product at 20000×784, K = 50,
// against the addOuter kernels that MulXTA had before (GFLOP/s, both
// cores): 24 rows 56–64, 36 rows 53–64, 48 rows 53–70, 60 rows 52–62, all
// with 12 lines a call; 48 rows with 6 lines 50–59, with 24 lines 61–66;
// addOuter 27–52. Without the prefetch, 24 rows ran at 33–50; with more
// rows per block, the lines of x a call reads lie on more pages than the
// TLB holds (96 rows: 25–36).
const (
	xtaRows     = 48
	xtaPrefetch = 24
)

// packed is a D×K matrix of T packed for the mulRows kernels: in column
// panels of at most 4 vectors, each row of a panel padded with zeros to a
// whole number of vectors.
type packed[T float] struct {
	d, k int
	data []T
	off  []int // start of each panel in data
}

// Dims returns the dimensions of the packed matrix.
func (p *packed[T]) Dims() (d, k int) { return p.d, p.k }

// Packed is a D×K matrix B packed for MulPacked: panels of at most 32
// columns of 8-entry vectors.
type Packed struct{ packed[float64] }

// layout sizes p's storage for a d×k matrix and stores the start of
// each panel, reusing both.
func (p *packed[T]) layout(d, k int) {
	p.d, p.k = d, k
	p.off = p.off[:0]
	size := 0
	for q := range panels[T](k) {
		_, nv, _ := panelOf[T](q, k)
		p.off = append(p.off, size)
		size += d * lanes[T]() * nv
	}
	p.data = alignedResize(p.data, size)
}

// Pack stores b into p, reusing p's storage.
func (p *Packed) Pack(b blas64.General) {
	d, k := b.Rows, b.Cols
	p.layout(d, k)
	for q := range panels[float64](k) {
		w, nv, k0 := panelOf[float64](q, k)
		dst := p.data[p.off[q]:]
		for t := range d {
			row := dst[t*8*nv : (t+1)*8*nv]
			copy(row, b.Data[t*b.Stride+k0:t*b.Stride+k0+w])
			clear(row[w:])
		}
	}
}

// PackT stores bᵀ into p, for b of K×D: the product x·bᵀ of two sets of
// rows (inner products between rows) is then MulPacked(c, x, p).
func (p *Packed) PackT(b blas64.General) { p.packT(of64(b)) }

// packT packs the transpose of b (K×D) into panels (transposeTo).
func (p *packed[T]) packT(b matrix[T]) {
	k, d := b.rows, b.cols
	p.layout(d, k)
	for q := range panels[T](k) {
		w, nv, k0 := panelOf[T](q, k)
		vw := lanes[T]() * nv
		dst := p.data[p.off[q] : p.off[q]+d*vw]
		if w < vw {
			clear(dst)
		}
		transposeTo(dst, vw, b.data[k0*b.stride:], b.stride, w, d)
	}
}

// transposeTo sets dst[j·ldd + i] = src[i·lds + j] for i < rows and
// j < cols. It takes eight rows of src at a time, so that each of their
// columns is one run of eight entries of dst (one bounds check, and a
// store of eight where one entry at a time wrote a line each), in blocks
// of columns so that the lines of dst being written stay in L1 until the
// next eight rows fill them. BenchmarkPackT32Rows100x784 and
// BenchmarkTranspose32Rows512x100 time it.
func transposeTo[T float](dst []T, ldd int, src []T, lds, rows, cols int) {
	const jb = 32 // columns per block
	for j0 := 0; j0 < cols; j0 += jb {
		j1 := min(j0+jb, cols)
		n := j1 - j0
		i := 0
		for ; i+8 <= rows; i += 8 {
			s0 := src[i*lds+j0 : i*lds+j1]
			s1 := src[(i+1)*lds+j0:][:n]
			s2 := src[(i+2)*lds+j0:][:n]
			s3 := src[(i+3)*lds+j0:][:n]
			s4 := src[(i+4)*lds+j0:][:n]
			s5 := src[(i+5)*lds+j0:][:n]
			s6 := src[(i+6)*lds+j0:][:n]
			s7 := src[(i+7)*lds+j0:][:n]
			for j := range s0 {
				o := (j0+j)*ldd + i
				d := dst[o : o+8 : o+8]
				d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
				d[4], d[5], d[6], d[7] = s4[j], s5[j], s6[j], s7[j]
			}
		}
		for ; i < rows; i++ {
			for j, v := range src[i*lds+j0 : i*lds+j1] {
				dst[(j0+j)*ldd+i] = v
			}
		}
	}
}

// MulPacked sets c = x·B, for x of r×D and c of r×K. Each row of c
// depends only on the same row of x.
func MulPacked(c, x blas64.General, b *Packed) { mulPacked("MulPacked", of64(c), of64(x), &b.packed) }

// Workspace holds MulXTA's scratch between calls.
type Workspace struct {
	acc, a []float64
}

// MulXTA sets c = xᵀ·a, for x of N×D, a of N×K and c of D×K. Each entry
// of c is summed over the N rows in increasing order.
//
// It goes through x a block of rows at a time: the block's rows of a are
// packed, and each tile of six columns of x by one panel of a sums over
// the block's rows in registers, reading x down its columns (mulCols);
// meanwhile the kernels ask for the next block's lines, which the
// hardware would not fetch ahead on such a walk.
func MulXTA(c, x, a blas64.General, ws *Workspace) {
	n, k, d := a.Rows, a.Cols, x.Cols
	if x.Rows != n || c.Rows != d || c.Cols != k {
		panic(fmt.Sprintf("gemm: MulXTA: x is %d×%d, a %d×%d, c %d×%d", x.Rows, x.Cols, a.Rows, a.Cols, c.Rows, c.Cols))
	}
	if k == 0 || d == 0 {
		return
	}
	if n > 0 {
		of64(a).check("a")
		of64(x).check("x")
	}
	of64(c).check("c")
	// acc holds c's panels one after the other, each d rows padded to
	// whole vectors (vw entries); ws.a holds a block of a's rows packed the
	// same way. Panel q starts at d·off and xtaRows·off of them.
	vws := make([]int, 0, 8)
	total := 0
	for q := range panels[float64](k) {
		_, nv, _ := panelOf[float64](q, k)
		vws = append(vws, 8*nv)
		total += 8 * nv
	}
	ws.acc = alignedResize(ws.acc, d*total)
	acc := ws.acc
	clear(acc)
	ws.a = alignedResize(ws.a, xtaRows*total)
	ap := ws.a
	for i0 := 0; i0 < n; i0 += xtaRows {
		i1 := min(i0+xtaRows, n)
		off := 0
		for q, vw := range vws {
			w, _, k0 := panelOf[float64](q, k)
			for i := i0; i < i1; i++ {
				row := ap[xtaRows*off+(i-i0)*vw : xtaRows*off+(i-i0+1)*vw]
				copy(row, a.Data[i*a.Stride+k0:i*a.Stride+k0+w])
				clear(row[w:])
			}
			off += vw
		}
		// The next block's lines, when x's rows follow one another.
		var pf, pfEnd uintptr
		if x.Stride == d && i1 < n {
			pf = uintptr(unsafe.Pointer(&x.Data[i1*x.Stride]))
			pfEnd = pf + uintptr((min(i1+xtaRows, n)-i1)*d*8)
		}
		off = 0
		for _, vw := range vws {
			nv := vw / 8
			six, one := mulCols6(nv), mulCols1(nv)
			aq, cq := &ap[xtaRows*off], acc[d*off:]
			p := 0
			for ; p+tileRows <= d; p += tileRows {
				pfn := 0
				if pf < pfEnd {
					pfn = min(xtaPrefetch, int((pfEnd-pf+63)/64))
				}
				six(i1-i0, &x.Data[i0*x.Stride+p], x.Stride, aq, vw, &cq[p*vw], vw, pf, pfn)
				pf += uintptr(64 * pfn)
			}
			for ; p < d; p++ {
				one(i1-i0, &x.Data[i0*x.Stride+p], x.Stride, aq, vw, &cq[p*vw], vw, 0, 0)
			}
			off += vw
		}
	}
	off := 0
	for q, vw := range vws {
		w, _, k0 := panelOf[float64](q, k)
		aq := acc[d*off:]
		for p := range d {
			copy(c.Data[p*c.Stride+k0:p*c.Stride+k0+w], aq[p*vw:])
		}
		off += vw
	}
}

// alignedResize returns a slice of n entries whose first entry lies on a
// 64-byte boundary (a cache line, and the width of a vector), reusing s if
// it is one already and large enough.
func alignedResize[T float](s []T, n int) []T {
	if cap(s) >= n && (cap(s) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64 == 0) {
		return s[:n]
	}
	l := lanes[T]()
	buf := make([]T, n+l)
	off := 0
	if r := uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % 64; r != 0 {
		off = int(64-r) / (64 / l)
	}
	return buf[off : off+n : off+n]
}

// mulRowsGeneric is the plain-Go form of the mulRows kernels: for
// r < rows, c_r[0:w] = Σ_t a_r[t]·b[t·ldb : t·ldb+w], where w is the width
// the mask leaves in the last of nv vectors.
func mulRowsGeneric[T float](rows, nv, n int, a *[tileRows]*T, b *T, ldb int, c *[tileRows]*T, mask uint16) {
	l := lanes[T]()
	w := l*(nv-1) + bitsLen(mask)
	bs := unsafe.Slice(b, max((n-1)*ldb+l*nv, 0))
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

// mulColsGeneric is the plain-Go form of the mulCols kernels: for
// r < rows, c[r·ldc : r·ldc+8nv] += Σ_i x[i·ldx + r]·a[i·lda : i·lda+8nv]
// over i < n, in increasing i.
func mulColsGeneric(rows, nv, n int, x *float64, ldx int, a *float64, lda int, c *float64, ldc int) {
	if n == 0 {
		return
	}
	vw := 8 * nv
	xs := unsafe.Slice(x, (n-1)*ldx+rows)
	as := unsafe.Slice(a, (n-1)*lda+vw)
	cs := unsafe.Slice(c, (rows-1)*ldc+vw)
	for r := range rows {
		row := cs[r*ldc : r*ldc+vw]
		for i := range n {
			xi := xs[i*ldx+r]
			for j := range row {
				row[j] += xi * as[i*lda+j]
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
