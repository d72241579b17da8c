//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen.go

var hasAVX512 = cpu.X86.HasAVX512F

var sumRowsKernels = [maxVectors]func(n int, ptr *int32, idx *int32, val *float64, w float64, v *float64, ldv int, dst *float64, ldd int, mask uint16, last int){
	sumRows1, sumRows2, sumRows3, sumRows4, sumRows5, sumRows6, sumRows7, sumRows8,
}

// maxVectors is the number of vectors of a row the kernels hold.
const maxVectors = 8

func sumRows(dst []float64, ldd, m int, w float64, s *Rows, r0, r1 int, v []float64, ldv int) {
	if !hasAVX512 {
		sumRowsGeneric(dst, ldd, m, w, s, r0, r1, v, ldv)
		return
	}
	// Columns in blocks of up to 64, each block a pass over the entries.
	for c0 := 0; c0 < m; c0 += 8 * maxVectors {
		w8 := min(8*maxVectors, m-c0)
		nv := (w8 + 7) / 8
		mask := uint16(1)<<(w8-8*(nv-1)) - 1
		sumRowsKernels[nv-1](r1-r0, &s.ptr[r0], unsafe.SliceData(s.idx), unsafe.SliceData(s.val), w,
			&v[c0], ldv, &dst[c0], ldd, mask, 8*(w8-1))
	}
}

// Fast reports whether SumRows runs the AVX-512 kernels.
var Fast = hasAVX512
