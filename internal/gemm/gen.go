//go:build ignore

// gen writes kernels_amd64.s, the AVX-512 kernels of package gemm, one
// function per row count and vector count, and kernels_decl_amd64.go,
// their Go declarations. Run it with go generate.
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
	if err := os.WriteFile("kernels_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	goFile := "// Code generated by gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\npackage gemm\n\n// The assembly kernels of kernels_amd64.s.\n" + decls.String()
	if err := os.WriteFile("kernels_decl_amd64.go", []byte(goFile), 0o644); err != nil {
		log.Fatal(err)
	}
}
