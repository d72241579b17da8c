package model

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/internal/gemm"
)

// chunk32Rows bounds the rows of V packed at once for xᵀ·V in float32: a
// chunk's packed rows (chunk32Rows × 64 float32 for K ≤ 64, 512 KiB) stay
// in a core's L2 while the D rows of xᵀ stream past them.
const chunk32Rows = 2048

// frob32 holds the float32 form of the Frobenius loss's two products with
// dense X (Frobenius.Float32): X's rows and their transpose in float32,
// made once from the X they were made of, and the products' scratch.
type frob32 struct {
	src   *mat.Dense // the rows x and xt were made from
	x, xt []float32  // X's rows (N×D) and their transpose (D×N)
	ut    []float32  // Uᵀ (K×D)
	upk   gemm.Packed32
	xu    []float32 // x·U (N×K)
	vt    [][]float32
	vpk   []gemm.Packed32
	xv    [][]float32 // per chunk of rows of V: its xᵀ·V (D×K)
	parts []mat.Dense // the same in float64, summed in order
	ran   bool        // a product ran in float32 (Result.Float32)
	big   bool        // src has an entry above max32Value: the products stay in float64
}

// max32Value is the largest entry of X whose products run in float32. A
// code scales with its row, so xᵀ·V holds sums of up to N products of
// about the square of X's largest entry: below 10¹⁵ that stays under
// float32's 3.4·10³⁸ for up to 10⁸ rows. A larger entry (sources accept up
// to record.MaxValue) leaves the products in float64, whatever Float32
// says, and Result.Float32 reports it.
const max32Value = 1e15

// fast32 returns the rows of X when the float32 products serve them:
// Float32 set, X dense, no entry above max32Value and the float32
// kernels serving (gemm.Serves32, in parts under Split). It makes the float32 copies on first use and
// whenever X's rows are another matrix.
func (l *Frobenius) fast32() (*mat.Dense, bool) {
	if !l.Float32 || !gemm.Serves32(l.split != nil) {
		return nil, false
	}
	x, ok := Rows(l.X).(*mat.Dense)
	if !ok {
		return nil, false
	}
	if l.f32.src != x {
		n, d := x.Dims()
		raw := x.RawMatrix()
		f := &l.f32
		f.src = x
		f.big = false
		for i := 0; i < n && !f.big; i++ {
			for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
				if v > max32Value {
					f.big = true
					break
				}
			}
		}
		if f.big {
			f.x, f.xt = nil, nil
			return nil, false
		}
		f.x = make([]float32, n*d)
		f.xt = make([]float32, d*n)
		inParts(l.split, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+d]
				dst := f.x[i*d : (i+1)*d]
				for j, v := range row {
					dst[j] = float32(v)
				}
			}
		})
		transpose32(f.xt, f.x, n, d)
	}
	if l.f32.big {
		return nil, false
	}
	l.f32.ran = true
	return x, true
}

// ranFloat32 reports whether a product with X has run in float32.
func (l *Frobenius) ranFloat32() bool { return l.f32.ran }

// transpose32 sets dst (c×r) to the transpose of src (r×c), both packed.
func transpose32(dst, src []float32, r, c int) {
	const blk = 32
	for j0 := 0; j0 < c; j0 += blk {
		j1 := min(j0+blk, c)
		for i := 0; i < r; i++ {
			for j, v := range src[i*c+j0 : i*c+j1] {
				dst[(j0+j)*r+i] = v
			}
		}
	}
}

// xtu32To stores x·U (N×K) into l.xtu through the float32 kernels: U
// rounded to float32 and packed once, each row's K inner products summed
// in float32 by FMA, then widened to float64.
func (l *Frobenius) xtu32To(x, u *mat.Dense) {
	n, d := x.Dims()
	_, k := u.Dims()
	f := &l.f32
	f.ut = resize32(f.ut, k*d)
	ur := u.RawMatrix()
	for p := range d {
		for j, v := range ur.Data[p*ur.Stride : p*ur.Stride+k] {
			f.ut[j*d+p] = float32(v)
		}
	}
	f.upk.PackT(blas32.General{Rows: k, Cols: d, Stride: d, Data: f.ut})
	f.xu = resize32(f.xu, n*k)
	xtu := reuse(&l.xtu, n, k)
	if xtu.IsEmpty() {
		xtu.ReuseAs(n, k)
	}
	dst := xtu.RawMatrix()
	inParts(l.split, n, func(lo, hi int) {
		c := blas32.General{Rows: hi - lo, Cols: k, Stride: k, Data: f.xu[lo*k : hi*k]}
		gemm.MulPacked32(c, blas32.General{Rows: hi - lo, Cols: d, Stride: d, Data: f.x[lo*d : hi*d]}, &f.upk)
		for i := lo; i < hi; i++ {
			out := dst.Data[i*dst.Stride : i*dst.Stride+k]
			for j, v := range f.xu[i*k : (i+1)*k] {
				out[j] = float64(v)
			}
		}
	})
	l.xtuT = false
}

// xv32To stores xᵀ·V (D×K) into dst through the float32 kernels: V's rows
// in chunks of at most chunk32Rows, each chunk's Vᵀ rounded to float32 and
// packed, its product with the same columns of xᵀ summed in float32 by
// FMA, and the chunks' products summed in float64 in order. The chunks
// depend on N only, so the result does not depend on Split. Under Split the
// packing runs in parts by chunk, and the products in parts by chunk and by
// blocks of xv32Blocks(nch) rows of xᵀ: each row of a product depends on the
// same row of xᵀ alone (gemm.MulPacked32), so the blocks change no bit,
// and a single chunk (N ≤ chunk32Rows, as the search basis's fits) still
// runs on every core.
func (l *Frobenius) xv32To(dst, x, v *mat.Dense) {
	n, d := x.Dims()
	_, k := v.Dims()
	f := &l.f32
	nch := max(1, (n+chunk32Rows-1)/chunk32Rows)
	if len(f.vt) != nch {
		f.vt = make([][]float32, nch)
		f.vpk = make([]gemm.Packed32, nch)
		f.xv = make([][]float32, nch)
		f.parts = make([]mat.Dense, nch)
	}
	vr := v.RawMatrix()
	inParts(l.split, nch, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			r0, r1 := ch*n/nch, (ch+1)*n/nch
			m := r1 - r0
			vt := resize32(f.vt[ch], k*m)
			f.vt[ch] = vt
			for i := r0; i < r1; i++ {
				for j, w := range vr.Data[i*vr.Stride : i*vr.Stride+k] {
					vt[j*m+i-r0] = float32(w)
				}
			}
			f.vpk[ch].PackT(blas32.General{Rows: k, Cols: m, Stride: m, Data: vt})
			f.xv[ch] = resize32(f.xv[ch], d*k)
			p := reuse(&f.parts[ch], d, k)
			if p.IsEmpty() {
				p.ReuseAs(d, k)
			}
		}
	})
	nb := 1
	if l.split != nil {
		nb = xv32Blocks(nch)
	}
	inParts(l.split, nch*nb, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			ch, b := t/nb, t%nb
			r0, r1 := ch*n/nch, (ch+1)*n/nch
			d0, d1 := b*d/nb, (b+1)*d/nb
			xv := f.xv[ch]
			gemm.MulPacked32(blas32.General{Rows: d1 - d0, Cols: k, Stride: k, Data: xv[d0*k : d1*k]},
				blas32.General{Rows: d1 - d0, Cols: r1 - r0, Stride: n, Data: f.xt[d0*n+r0:]}, &f.vpk[ch])
			pr := f.parts[ch].RawMatrix()
			for r := d0; r < d1; r++ {
				out := pr.Data[r*pr.Stride : r*pr.Stride+k]
				for j, w := range xv[r*k : (r+1)*k] {
					out[j] = float64(w)
				}
			}
		}
	})
	if reuse(dst, d, k).IsEmpty() {
		dst.ReuseAs(d, k)
	}
	sumChunksTo(dst, f.parts)
}

// xv32Parts is the number of parts xv32To's products aim for under Split:
// enough for the cores of the machines this runs on to share a product of
// one chunk, few enough that each block keeps the kernel's tiles full.
const xv32Parts = 8

// xv32Blocks is the number of row blocks of xᵀ per chunk for nch chunks.
func xv32Blocks(nch int) int { return max(1, (xv32Parts+nch-1)/nch) }

// resize32 returns s with length n, reallocated only if it is too short.
func resize32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
