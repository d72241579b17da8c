//go:build ignore

// gen writes kernels_amd64.s, the AVX-512 and AVX2 kernels of package
// gemm, one function per row count and vector count, and
// kernels_decl_amd64.go, their Go declarations. Run it with go generate.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

var out, decls bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }
func label(l string)               { fmt.Fprintf(&out, "%s:\n", l) }

// Registers: Z15 is left alone (ABI0 wrappers restore it, but nothing here
// needs it). Row r of a six-row tile keeps its (up to) four vectors in
// tileRegs[r]; the kernels also use the general registers R8–R13 for the
// rows' pointers.
var tileRegs = [6][4]string{
	{"Z0", "Z1", "Z2", "Z3"},
	{"Z4", "Z5", "Z6", "Z7"},
	{"Z8", "Z9", "Z10", "Z11"},
	{"Z12", "Z13", "Z14", "Z16"},
	{"Z17", "Z18", "Z19", "Z20"},
	{"Z21", "Z22", "Z23", "Z24"},
}
var rowPtrs = [6]string{"R8", "R9", "R10", "R11", "R12", "R13"}

// text starts a kernel: its comment, its Go declaration (sig with [6]
// written as [tileRows]) and its TEXT line.
func text(name, sig string, argSize int) {
	fmt.Fprintf(&out, "// func %s%s\n", name, sig)
	fmt.Fprintf(&decls, "\n//go:noescape\nfunc %s%s\n", name, strings.ReplaceAll(sig, "[6]", "[tileRows]"))
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", name, argSize)
}

// header starts a kernel (text), then loads the row count n into CX and
// the rows' pointers (the array argument at 8(FP)) into rowPtrs.
func header(name, sig string, argSize, rows int, arg string) {
	text(name, sig, argSize)
	p("MOVQ n+0(FP), CX")
	p("MOVQ %s+8(FP), AX", arg)
	for r := 0; r < rows; r++ {
		p("MOVQ %d(AX), %s", 8*r, rowPtrs[r])
	}
}

// mulRows writes mulRows{R}x{V} (float64, 8 entries a vector) or, with
// f32, mulRows32_{R}x{V} (float32, 16): c_r[0:w] = Σ_t a_r[t]·b[t·ldb :
// t·ldb+V vectors] for r < R, the last of the V vectors of each c_r
// stored under mask. The
// accumulators live in tileRegs, b's vectors in Z25–Z28, the broadcast
// a_r[t] in Z29/Z30.
func mulRows(rows, nv int, f32 bool) {
	name := fmt.Sprintf("mulRows%dx%d", rows, nv)
	elem, shift, mov, bcast, fma := "float64", 3, "VMOVUPD", "VBROADCASTSD", "VFMADD231PD"
	if f32 {
		name = fmt.Sprintf("mulRows32_%dx%d", rows, nv)
		elem, shift, mov, bcast, fma = "float32", 2, "VMOVUPS", "VBROADCASTSS", "VFMADD231PS"
	}
	header(name, fmt.Sprintf("(n int, a *[6]*%s, b *%s, ldb int, c *[6]*%s, mask uint16)", elem, elem, elem), 42, rows, "a")
	p("MOVQ b+16(FP), SI")
	p("MOVQ ldb+24(FP), DX")
	p("SHLQ $%d, DX", shift)
	p("MOVWLZX mask+40(FP), BX")
	p("KMOVW BX, K1")
	for r := 0; r < rows; r++ {
		for v := 0; v < nv; v++ {
			p("VPXORQ %[1]s, %[1]s, %[1]s", tileRegs[r][v])
		}
	}
	bRegs := []string{"Z25", "Z26", "Z27", "Z28"}
	loop, done := name+"_loop", name+"_done"
	p("TESTQ CX, CX")
	p("JEQ %s", done)
	label(loop)
	for v := 0; v < nv; v++ {
		p("%s %d(SI), %s", mov, 64*v, bRegs[v])
	}
	for r := 0; r < rows; r++ {
		bc := "Z29"
		if r%2 == 1 {
			bc = "Z30"
		}
		p("%s (%s), %s", bcast, rowPtrs[r], bc)
		for v := 0; v < nv; v++ {
			p("%s %s, %s, %s", fma, bRegs[v], bc, tileRegs[r][v])
		}
		p("ADDQ $%d, %s", 1<<shift, rowPtrs[r])
	}
	p("ADDQ DX, SI")
	p("DECQ CX")
	p("JNE %s", loop)
	label(done)
	p("MOVQ c+32(FP), AX")
	for r := 0; r < rows; r++ {
		p("MOVQ %d(AX), DI", 8*r)
		for v := 0; v < nv-1; v++ {
			p("%s %s, %d(DI)", mov, tileRegs[r][v], 64*v)
		}
		p("%s %s, K1, %d(DI)", mov, tileRegs[r][nv-1], 64*(nv-1))
	}
	p("VZEROUPPER")
	p("RET")
	out.WriteString("\n")
}

// mulCols writes mulCols{R}x{V}: for r < R,
// c_r[0:8V] += Σ_i x[i·ldx + r]·a[i·lda : i·lda+8V] over i < n, summed in
// increasing i by FMA, where c_r starts at c + r·ldc. Row r of c is column
// r of a block of x's rows, times a: the tile of xᵀa stays in tileRegs
// for the whole run of rows, as in mulRows. a's vectors live in Z25–Z28,
// the broadcast x[i·ldx + r] in Z29/Z30. The first pfn steps each ask for
// one line from pf on into L2 (PREFETCHT1): the caller's way of bringing
// the next block of x's rows in while this one is summed.
func mulCols(rows, nv int) {
	name := fmt.Sprintf("mulCols%dx%d", rows, nv)
	text(name, "(n int, x *float64, ldx int, a *float64, lda int, c *float64, ldc int, pf uintptr, pfn int)", 72)
	p("MOVQ n+0(FP), CX")
	p("MOVQ x+8(FP), AX")
	p("MOVQ ldx+16(FP), BX")
	p("SHLQ $3, BX")
	p("MOVQ a+24(FP), SI")
	p("MOVQ lda+32(FP), DX")
	p("SHLQ $3, DX")
	p("MOVQ c+40(FP), DI")
	p("MOVQ ldc+48(FP), R8")
	p("SHLQ $3, R8")
	p("MOVQ DI, R9")
	for r := 0; r < rows; r++ {
		if r > 0 {
			p("ADDQ R8, R9")
		}
		for v := 0; v < nv; v++ {
			p("VMOVUPD %d(R9), %s", 64*v, tileRegs[r][v])
		}
	}
	aRegs := []string{"Z25", "Z26", "Z27", "Z28"}
	loop, done, nopf := name+"_loop", name+"_done", name+"_nopf"
	p("MOVQ pf+56(FP), R10")
	p("MOVQ pfn+64(FP), R11")
	p("TESTQ CX, CX")
	p("JEQ %s", done)
	label(loop)
	p("TESTQ R11, R11")
	p("JEQ %s", nopf)
	p("PREFETCHT1 (R10)")
	p("ADDQ $64, R10")
	p("DECQ R11")
	label(nopf)
	for v := 0; v < nv; v++ {
		p("VMOVUPD %d(SI), %s", 64*v, aRegs[v])
	}
	for r := 0; r < rows; r++ {
		bc := "Z29"
		if r%2 == 1 {
			bc = "Z30"
		}
		p("VBROADCASTSD %d(AX), %s", 8*r, bc)
		for v := 0; v < nv; v++ {
			p("VFMADD231PD %s, %s, %s", aRegs[v], bc, tileRegs[r][v])
		}
	}
	p("ADDQ BX, AX")
	p("ADDQ DX, SI")
	p("DECQ CX")
	p("JNE %s", loop)
	label(done)
	p("MOVQ DI, R9")
	for r := 0; r < rows; r++ {
		if r > 0 {
			p("ADDQ R8, R9")
		}
		for v := 0; v < nv; v++ {
			p("VMOVUPD %s, %d(R9)", tileRegs[r][v], 64*v)
		}
	}
	p("VZEROUPPER")
	p("RET")
	out.WriteString("\n")
}

// The AVX2 kernels (suffix AVX2) take the same arguments as the AVX-512
// ones and give the same bits: each entry is the same chain of FMAs, in
// increasing order. With 16 YMM registers the tiles are narrower: each
// 512-bit vector of a panel is two YMM halves, and the six-row kernels go
// through the panel's vectors one after the other, six rows by one vector
// (twelve accumulators, ymmTile; the vector's halves in Y12/Y13, the
// broadcast in Y14/Y15), reading the rows of a (or x) again for each
// vector, from L1. The one-row kernels keep the whole panel (up to eight
// halves) and let the FMAs read b; a six-row kernel whose last vector is
// half empty sums its lower half only. The last vector is stored under the
// mask, made a vector mask for VMASKMOVPS/VMASKMOVPD by shifting bit i of
// it to the sign bit of lane i (shifts32, shifts64); a full mask takes
// plain stores.
var ymmTile = [6][2]string{
	{"Y0", "Y1"}, {"Y2", "Y3"}, {"Y4", "Y5"}, {"Y6", "Y7"}, {"Y8", "Y9"}, {"Y10", "Y11"},
}

// elemOps are the element type, the log2 of its size, its lanes in 512
// bits and the AVX2 instructions for it.
type elemOps struct {
	elem                                                   string
	shift, lanes                                           int
	mov, bcast, fma, xor, maskmov, pbcast, shlv, shiftsSym string
}

func opsOf(f32 bool) elemOps {
	if f32 {
		return elemOps{"float32", 2, 16, "VMOVUPS", "VBROADCASTSS", "VFMADD231PS", "VXORPS", "VMASKMOVPS", "VPBROADCASTD", "VPSLLVD", "shifts32<>"}
	}
	return elemOps{"float64", 3, 8, "VMOVUPD", "VBROADCASTSD", "VFMADD231PD", "VXORPD", "VMASKMOVPD", "VPBROADCASTQ", "VPSLLVQ", "shifts64<>"}
}

// shiftTables writes shifts32 and shifts64: lane i of each holds the
// shift that brings bit i of a mask to the lane's sign bit.
func shiftTables() {
	out.WriteString("// Lane i: the shift that brings bit i of a mask to the lane's sign bit.\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&out, "DATA shifts32<>+%d(SB)/4, $%d\n", 4*i, 31-i)
	}
	out.WriteString("GLOBL shifts32<>(SB), RODATA|NOPTR, $64\n\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&out, "DATA shifts64<>+%d(SB)/8, $%d\n", 8*i, 63-i)
	}
	out.WriteString("GLOBL shifts64<>(SB), RODATA|NOPTR, $64\n\n")
}

// storeLast writes the stores of the last vector, at byte offset off in
// each row, of the accumulator pairs accs: under the mask at mask+40(FP),
// unless it is full. row(r) writes what brings row r's pointer into a
// register and returns that register. It uses BX, Y12 and Y13.
func storeLast(name string, o elemOps, accs [][2]string, row func(r int) string, off int) {
	full, done := name+"_full", name+"_stored"
	p("MOVWLZX mask+40(FP), BX")
	p("CMPQ BX, $%d", 1<<(o.lanes)-1)
	p("JEQ %s", full)
	p("MOVQ BX, X12")
	p("%s X12, Y12", o.pbcast)
	p("%s %s+32(SB), Y12, Y13", o.shlv, o.shiftsSym)
	p("%s %s+0(SB), Y12, Y12", o.shlv, o.shiftsSym)
	for r, acc := range accs {
		reg := row(r)
		p("%s %s, Y12, %d(%s)", o.maskmov, acc[0], off, reg)
		p("%s %s, Y13, %d(%s)", o.maskmov, acc[1], off+32, reg)
	}
	p("JMP %s", done)
	label(full)
	for r, acc := range accs {
		reg := row(r)
		p("%s %s, %d(%s)", o.mov, acc[0], off, reg)
		p("%s %s, %d(%s)", o.mov, acc[1], off+32, reg)
	}
	label(done)
}

// mulRowsAVX2 writes mulRows{R}x{V}AVX2 or, with f32,
// mulRows32_{R}x{V}AVX2: mulRows's product, for R = 6 or 1.
func mulRowsAVX2(rows, nv int, f32 bool) {
	o := opsOf(f32)
	name := fmt.Sprintf("mulRows%dx%dAVX2", rows, nv)
	if f32 {
		name = fmt.Sprintf("mulRows32_%dx%dAVX2", rows, nv)
	}
	header(name, fmt.Sprintf("(n int, a *[6]*%s, b *%s, ldb int, c *[6]*%s, mask uint16)", o.elem, o.elem, o.elem), 42, rows, "a")
	p("MOVQ ldb+24(FP), DX")
	p("SHLQ $%d, DX", o.shift)
	p("MOVQ c+32(FP), AX")
	cRow := func(r int) string {
		p("MOVQ %d(AX), DI", 8*r)
		return "DI"
	}
	if rows == 1 {
		// One row: 2V accumulators; BX steps along the row of a.
		for h := 0; h < 2*nv; h++ {
			p("%[1]s Y%[2]d, Y%[2]d, Y%[2]d", o.xor, h)
		}
		loop, done := name+"_loop", name+"_done"
		p("MOVQ b+16(FP), SI")
		p("XORQ BX, BX")
		p("TESTQ CX, CX")
		p("JEQ %s", done)
		label(loop)
		p("%s (R8)(BX*1), Y14", o.bcast)
		for h := 0; h < 2*nv; h++ {
			p("%s %d(SI), Y14, Y%d", o.fma, 32*h, h)
		}
		p("ADDQ $%d, BX", 1<<o.shift)
		p("ADDQ DX, SI")
		p("DECQ CX")
		p("JNE %s", loop)
		label(done)
		p("MOVQ 0(AX), DI")
		for v := 0; v < nv-1; v++ {
			p("%s Y%d, %d(DI)", o.mov, 2*v, 64*v)
			p("%s Y%d, %d(DI)", o.mov, 2*v+1, 64*v+32)
		}
		last := [][2]string{{fmt.Sprintf("Y%d", 2*nv-2), fmt.Sprintf("Y%d", 2*nv-1)}}
		storeLast(name, o, last, func(int) string { return "DI" }, 64*(nv-1))
		p("VZEROUPPER")
		p("RET")
		out.WriteString("\n")
		return
	}
	// Six rows, one vector at a time; BX steps along the rows of a.
	// pass(v, h) sums vector v, or its first h halves.
	// Steps go two at a time (fewer instructions per FMA), the second
	// reading b one row on (DX) and a one entry on, and an odd last step
	// alone.
	step := func(v, h int, second bool) {
		bAt, aOff := "(SI)", 0
		if second {
			bAt, aOff = "(SI)(DX*1)", 1<<o.shift
		}
		for i := range h {
			p("%s %d%s, Y%d", o.mov, 64*v+32*i, bAt, 12+i)
		}
		for r := 0; r < rows; r++ {
			bc := "Y14"
			if r%2 == 1 {
				bc = "Y15"
			}
			p("%s %d(%s)(BX*1), %s", o.bcast, aOff, rowPtrs[r], bc)
			for i, acc := range ymmTile[r][:h] {
				p("%s Y%d, %s, %s", o.fma, 12+i, bc, acc)
			}
		}
	}
	pass := func(v, h int, tag string) {
		loop, odd, done := name+"_loop"+tag, name+"_odd"+tag, name+"_done"+tag
		for r := 0; r < rows; r++ {
			for _, acc := range ymmTile[r][:h] {
				p("%[1]s %[2]s, %[2]s, %[2]s", o.xor, acc)
			}
		}
		p("MOVQ n+0(FP), CX")
		p("MOVQ b+16(FP), SI")
		p("XORQ BX, BX")
		p("CMPQ CX, $2")
		p("JLT %s", odd)
		label(loop)
		step(v, h, false)
		step(v, h, true)
		p("ADDQ $%d, BX", 2<<o.shift)
		p("LEAQ (SI)(DX*2), SI")
		p("SUBQ $2, CX")
		p("CMPQ CX, $2")
		p("JGE %s", loop)
		label(odd)
		p("TESTQ CX, CX")
		p("JEQ %s", done)
		step(v, h, false)
		label(done)
	}
	// The last vector, when the mask leaves its upper half empty (a
	// panel's last columns: K ≤ 8 float32 or 4 float64 of a product with
	// few rows packed, or the rest of a wider one), sums its lower half
	// only.
	half := name + "_half"
	for v := 0; v < nv; v++ {
		if v == nv-1 {
			p("MOVWLZX mask+40(FP), BX")
			p("CMPQ BX, $%d", 1<<(o.lanes/2)-1)
			p("JLS %s", half)
		}
		pass(v, 2, fmt.Sprint(v))
		if v < nv-1 {
			for r := 0; r < rows; r++ {
				reg := cRow(r)
				p("%s %s, %d(%s)", o.mov, ymmTile[r][0], 64*v, reg)
				p("%s %s, %d(%s)", o.mov, ymmTile[r][1], 64*v+32, reg)
			}
		}
	}
	storeLast(name, o, ymmTile[:rows], cRow, 64*(nv-1))
	p("VZEROUPPER")
	p("RET")
	label(half)
	pass(nv-1, 1, "_half")
	p("MOVWLZX mask+40(FP), BX")
	p("MOVQ BX, X12")
	p("%s X12, Y12", o.pbcast)
	p("%s %s+0(SB), Y12, Y12", o.shlv, o.shiftsSym)
	for r := 0; r < rows; r++ {
		reg := cRow(r)
		p("%s %s, Y12, %d(%s)", o.maskmov, ymmTile[r][0], 64*(nv-1), reg)
	}
	p("VZEROUPPER")
	p("RET")
	out.WriteString("\n")
}

// mulColsAVX2 writes mulCols{R}x{V}AVX2, mulCols's product for R = 6 or
// 1: for six rows, one vector of the rows of c at a time, x's entries
// read again for each; for one, all 2V halves at once.
func mulColsAVX2(rows, nv int) {
	name := fmt.Sprintf("mulCols%dx%dAVX2", rows, nv)
	text(name, "(n int, x *float64, ldx int, a *float64, lda int, c *float64, ldc int, pf uintptr, pfn int)", 72)
	p("MOVQ ldx+16(FP), BX")
	p("SHLQ $3, BX")
	p("MOVQ lda+32(FP), DX")
	p("SHLQ $3, DX")
	p("MOVQ c+40(FP), DI")
	p("MOVQ ldc+48(FP), R8")
	p("SHLQ $3, R8")
	p("MOVQ pf+56(FP), R10")
	p("MOVQ pfn+64(FP), R11")
	// pass writes one run over the n rows of x, with the accumulators
	// accs[r] of row r of c (at byte offset off) loaded before and stored
	// after, and body(x, a) the FMAs of one step, x and a the addressing
	// of the step's row of x and of a (with an offset before them). Steps
	// go two at a time, as in mulRowsAVX2, each with its prefetch.
	pass := func(tag string, accs [][]string, off int, body func(x, a string)) {
		loop, odd, done := name+"_loop"+tag, name+"_odd"+tag, name+"_done"+tag
		prefetch := func(l string) {
			p("TESTQ R11, R11")
			p("JEQ %s", l)
			p("PREFETCHT1 (R10)")
			p("ADDQ $64, R10")
			p("DECQ R11")
			label(l)
		}
		p("MOVQ DI, R9")
		for r, acc := range accs {
			if r > 0 {
				p("ADDQ R8, R9")
			}
			for h, reg := range acc {
				p("VMOVUPD %d(R9), %s", off+32*h, reg)
			}
		}
		p("MOVQ n+0(FP), CX")
		p("MOVQ x+8(FP), AX")
		p("MOVQ a+24(FP), SI")
		p("CMPQ CX, $2")
		p("JLT %s", odd)
		label(loop)
		prefetch(name + "_nopf" + tag + "a")
		body("(AX)", "(SI)")
		prefetch(name + "_nopf" + tag + "b")
		body("(AX)(BX*1)", "(SI)(DX*1)")
		p("LEAQ (AX)(BX*2), AX")
		p("LEAQ (SI)(DX*2), SI")
		p("SUBQ $2, CX")
		p("CMPQ CX, $2")
		p("JGE %s", loop)
		label(odd)
		p("TESTQ CX, CX")
		p("JEQ %s", done)
		prefetch(name + "_nopf" + tag + "c")
		body("(AX)", "(SI)")
		label(done)
		p("MOVQ DI, R9")
		for r, acc := range accs {
			if r > 0 {
				p("ADDQ R8, R9")
			}
			for h, reg := range acc {
				p("VMOVUPD %s, %d(R9)", reg, off+32*h)
			}
		}
	}
	if rows == 1 {
		acc := make([]string, 2*nv)
		for h := range acc {
			acc[h] = fmt.Sprintf("Y%d", h)
		}
		pass("", [][]string{acc}, 0, func(x, a string) {
			p("VBROADCASTSD %s, Y14", x)
			for h, reg := range acc {
				p("VFMADD231PD %d%s, Y14, %s", 32*h, a, reg)
			}
		})
	} else {
		accs := make([][]string, rows)
		for r := range accs {
			accs[r] = ymmTile[r][:]
		}
		for v := 0; v < nv; v++ {
			pass(fmt.Sprint(v), accs, 64*v, func(x, a string) {
				p("VMOVUPD %d%s, Y12", 64*v, a)
				p("VMOVUPD %d%s, Y13", 64*v+32, a)
				for r := 0; r < rows; r++ {
					bc := "Y14"
					if r%2 == 1 {
						bc = "Y15"
					}
					p("VBROADCASTSD %d%s, %s", 8*r, x, bc)
					p("VFMADD231PD Y12, %s, %s", bc, accs[r][0])
					p("VFMADD231PD Y13, %s, %s", bc, accs[r][1])
				}
			})
		}
	}
	p("VZEROUPPER")
	p("RET")
	out.WriteString("\n")
}

func main() {
	out.WriteString("// Code generated by gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	for _, f32 := range []bool{false, true} {
		for _, rows := range []int{6, 1} {
			for nv := 1; nv <= 4; nv++ {
				mulRows(rows, nv, f32)
			}
		}
	}
	for _, rows := range []int{6, 1} {
		for nv := 1; nv <= 4; nv++ {
			mulCols(rows, nv)
		}
	}
	shiftTables()
	for _, f32 := range []bool{false, true} {
		for _, rows := range []int{6, 1} {
			for nv := 1; nv <= 4; nv++ {
				mulRowsAVX2(rows, nv, f32)
			}
		}
	}
	for _, rows := range []int{6, 1} {
		for nv := 1; nv <= 4; nv++ {
			mulColsAVX2(rows, nv)
		}
	}
	if err := os.WriteFile("kernels_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	goFile := "// Code generated by gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\npackage gemm\n\n// The assembly kernels of kernels_amd64.s.\n" + decls.String()
	if err := os.WriteFile("kernels_decl_amd64.go", []byte(goFile), 0o644); err != nil {
		log.Fatal(err)
	}
}
