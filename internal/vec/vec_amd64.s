//go:build amd64 && !purego

#include "textflag.h"

// func axpyAVX2(a float64, x, y []float64)
// y[i] += a·x[i] for i < len(y): the product rounded, then the sum (no FMA).
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD a+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX             // entries in blocks of 16

loop16:
	CMPQ AX, DX
	JGE  tail4
	VMULPD (SI)(AX*8), Y0, Y1
	VMULPD 32(SI)(AX*8), Y0, Y2
	VMULPD 64(SI)(AX*8), Y0, Y3
	VMULPD 96(SI)(AX*8), Y0, Y4
	VADDPD (DI)(AX*8), Y1, Y1
	VADDPD 32(DI)(AX*8), Y2, Y2
	VADDPD 64(DI)(AX*8), Y3, Y3
	VADDPD 96(DI)(AX*8), Y4, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ $16, AX
	JMP  loop16

tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

loop4:
	CMPQ AX, DX
	JGE  tail1
	VMULPD (SI)(AX*8), Y0, Y1
	VADDPD (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ $4, AX
	JMP  loop4

tail1:
	CMPQ AX, CX
	JGE  done
	VMOVSD (SI)(AX*8), X1
	VMULSD X0, X1, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	JMP  tail1

done:
	VZEROUPPER
	RET

// func axpy4AVX2(y []float64, a *[4]float64, x0, x1, x2, x3 *float64)
// y[i] = (((y[i] + a0·x0[i]) + a1·x1[i]) + a2·x2[i]) + a3·x3[i], each
// product and sum rounded in that order (no FMA).
TEXT ·axpy4AVX2(SB), NOSPLIT, $0-64
	MOVQ y_base+0(FP), DI
	MOVQ y_len+8(FP), CX
	MOVQ a+24(FP), BX
	VBROADCASTSD (BX), Y0
	VBROADCASTSD 8(BX), Y1
	VBROADCASTSD 16(BX), Y2
	VBROADCASTSD 24(BX), Y3
	MOVQ x0+32(FP), R8
	MOVQ x1+40(FP), R9
	MOVQ x2+48(FP), R10
	MOVQ x3+56(FP), R11
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-8, DX              // entries in blocks of 8: two chains

loop8:
	CMPQ AX, DX
	JGE  tail4
	VMOVUPD (DI)(AX*8), Y4
	VMOVUPD 32(DI)(AX*8), Y5
	VMULPD (R8)(AX*8), Y0, Y6
	VMULPD 32(R8)(AX*8), Y0, Y7
	VADDPD Y6, Y4, Y4
	VADDPD Y7, Y5, Y5
	VMULPD (R9)(AX*8), Y1, Y8
	VMULPD 32(R9)(AX*8), Y1, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	VMULPD (R10)(AX*8), Y2, Y6
	VMULPD 32(R10)(AX*8), Y2, Y7
	VADDPD Y6, Y4, Y4
	VADDPD Y7, Y5, Y5
	VMULPD (R11)(AX*8), Y3, Y8
	VMULPD 32(R11)(AX*8), Y3, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD Y5, 32(DI)(AX*8)
	ADDQ $8, AX
	JMP  loop8

tail4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  tail1
	VMOVUPD (DI)(AX*8), Y4
	VMULPD (R8)(AX*8), Y0, Y6
	VADDPD Y6, Y4, Y4
	VMULPD (R9)(AX*8), Y1, Y6
	VADDPD Y6, Y4, Y4
	VMULPD (R10)(AX*8), Y2, Y6
	VADDPD Y6, Y4, Y4
	VMULPD (R11)(AX*8), Y3, Y6
	VADDPD Y6, Y4, Y4
	VMOVUPD Y4, (DI)(AX*8)
	ADDQ $4, AX

tail1:
	CMPQ AX, CX
	JGE  done4
	VMOVSD (DI)(AX*8), X4
	VMULSD (R8)(AX*8), X0, X6
	VADDSD X6, X4, X4
	VMULSD (R9)(AX*8), X1, X6
	VADDSD X6, X4, X4
	VMULSD (R10)(AX*8), X2, X6
	VADDSD X6, X4, X4
	VMULSD (R11)(AX*8), X3, X6
	VADDSD X6, X4, X4
	VMOVSD X4, (DI)(AX*8)
	INCQ AX
	JMP  tail1

done4:
	VZEROUPPER
	RET

// func prefetchAVX2(x *float64, n int)
TEXT ·prefetchAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*8), CX
pf:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	CMPQ SI, CX
	JLT  pf
	RET

// func mulDivAVX2(w, num, den []float64, eps float64)
// w[i] = w[i]·n / max(den[i], eps) for i < len(w), where n is num[i], or 0
// if num[i] < 0: each product and quotient rounded as the scalar code
// rounds them. VMAXPD returns its second source (den) when either is NaN,
// as Go's max does; VCMPPD's LT_OQ is false on NaN, so a NaN num stays.
TEXT ·mulDivAVX2(SB), NOSPLIT, $0-80
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ num_base+24(FP), SI
	MOVQ den_base+48(FP), DX
	VBROADCASTSD eps+72(FP), Y0
	VXORPD Y1, Y1, Y1
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX

md4:
	CMPQ AX, BX
	JGE  md1
	VMOVUPD (SI)(AX*8), Y2
	VCMPPD $0x11, Y1, Y2, Y3       // num < 0 (LT_OQ)
	VANDNPD Y2, Y3, Y2             // those lanes to 0
	VMULPD (DI)(AX*8), Y2, Y2      // w·n
	VMAXPD (DX)(AX*8), Y0, Y4      // max(eps, den), den on NaN
	VDIVPD Y4, Y2, Y2
	VMOVUPD Y2, (DI)(AX*8)
	ADDQ $4, AX
	JMP  md4

md1:
	CMPQ AX, CX
	JGE  mddone
	VMOVSD (SI)(AX*8), X2
	VCMPSD $0x11, X1, X2, X3
	VANDNPD X2, X3, X2
	VMULSD (DI)(AX*8), X2, X2
	VMAXSD (DX)(AX*8), X0, X4
	VDIVSD X4, X2, X2
	VMOVSD X2, (DI)(AX*8)
	INCQ AX
	JMP  md1

mddone:
	VZEROUPPER
	RET

// func mulDivDiagAVX2(w, num, den, ps, qs []float64, t int, eps float64)
// MulDivDiag: for each chunk of w, d = den + ps[r]·x and m = num + qs[r]·x
// for the rows r < t of ps and qs (each n = len(w) entries apart), each
// product rounded, then added, in that order; then mulDivAVX2's rule.
TEXT ·mulDivDiagAVX2(SB), NOSPLIT, $0-136
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ num_base+24(FP), SI
	MOVQ den_base+48(FP), DX
	MOVQ ps_base+72(FP), R8
	MOVQ qs_base+96(FP), R9
	MOVQ t+120(FP), R10
	VBROADCASTSD eps+128(FP), Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, R11
	SHLQ $3, R11                   // a row of ps or qs, in bytes
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX

dd4:
	CMPQ AX, BX
	JGE  dd1
	VMOVUPD (DI)(AX*8), Y2         // x
	VMOVUPD (DX)(AX*8), Y3         // d
	VMOVUPD (SI)(AX*8), Y5         // m
	LEAQ (R8)(AX*8), R12
	LEAQ (R9)(AX*8), R13
	MOVQ R10, R14

dd4t:
	TESTQ R14, R14
	JZ    dd4e
	VMULPD (R12), Y2, Y4
	VADDPD Y4, Y3, Y3              // d += ps[r]·x
	VMULPD (R13), Y2, Y6
	VADDPD Y6, Y5, Y5              // m += qs[r]·x
	ADDQ R11, R12
	ADDQ R11, R13
	DECQ R14
	JMP  dd4t

dd4e:
	VCMPPD $0x11, Y1, Y5, Y6       // m < 0 (LT_OQ)
	VANDNPD Y5, Y6, Y5             // those lanes to 0
	VMULPD Y2, Y5, Y5              // x·m
	VMAXPD Y3, Y0, Y4              // max(eps, d), d on NaN
	VDIVPD Y4, Y5, Y5
	VMOVUPD Y5, (DI)(AX*8)
	ADDQ $4, AX
	JMP  dd4

dd1:
	CMPQ AX, CX
	JGE  dddone
	VMOVSD (DI)(AX*8), X2
	VMOVSD (DX)(AX*8), X3
	VMOVSD (SI)(AX*8), X5
	LEAQ (R8)(AX*8), R12
	LEAQ (R9)(AX*8), R13
	MOVQ R10, R14

dd1t:
	TESTQ R14, R14
	JZ    dd1e
	VMULSD (R12), X2, X4
	VADDSD X4, X3, X3
	VMULSD (R13), X2, X6
	VADDSD X6, X5, X5
	ADDQ R11, R12
	ADDQ R11, R13
	DECQ R14
	JMP  dd1t

dd1e:
	VCMPSD $0x11, X1, X5, X6
	VANDNPD X5, X6, X5
	VMULSD X2, X5, X5
	VMAXSD X3, X0, X4
	VDIVSD X4, X5, X5
	VMOVSD X5, (DI)(AX*8)
	INCQ AX
	JMP  dd1

dddone:
	VZEROUPPER
	RET

// dot32mask<>+32−4r holds r all-ones lanes, then zeros: the mask of a
// chunk's first r entries.
DATA dot32mask<>+0(SB)/4, $0xffffffff
DATA dot32mask<>+4(SB)/4, $0xffffffff
DATA dot32mask<>+8(SB)/4, $0xffffffff
DATA dot32mask<>+12(SB)/4, $0xffffffff
DATA dot32mask<>+16(SB)/4, $0xffffffff
DATA dot32mask<>+20(SB)/4, $0xffffffff
DATA dot32mask<>+24(SB)/4, $0xffffffff
DATA dot32mask<>+28(SB)/4, $0xffffffff
DATA dot32mask<>+32(SB)/4, $0
DATA dot32mask<>+36(SB)/4, $0
DATA dot32mask<>+40(SB)/4, $0
DATA dot32mask<>+44(SB)/4, $0
DATA dot32mask<>+48(SB)/4, $0
DATA dot32mask<>+52(SB)/4, $0
DATA dot32mask<>+56(SB)/4, $0
DATA dot32mask<>+60(SB)/4, $0
GLOBL dot32mask<>(SB), RODATA|NOPTR, $64

// DOT32MASKED adds the products of the DX < 8 entries from AX (the lanes
// past them +0) to ACC; nothing if DX is zero.
#define DOT32MASKED(ACC) \
	TESTQ DX, DX; \
	JEQ d32reduce; \
	LEAQ dot32mask<>+32(SB), R8; \
	SHLQ $2, DX; \
	SUBQ DX, R8; \
	VMOVUPS (R8), Y8; \
	VMASKMOVPS (SI)(AX*4), Y8, Y4; \
	VMASKMOVPS (DI)(AX*4), Y8, Y5; \
	VMULPS Y5, Y4, Y4; \
	VADDPS Y4, ACC, ACC

// func dot32AVX2(x, y *float32, n int) float32
// The inner product of x[:n] and y[:n] in Dot32's order: 32 lane sums (Y0
// lanes 0–7, Y1 8–15, Y2 16–23, Y3 24–31), entry i going to lane i mod 32,
// each product rounded, then added (no FMA); the last n mod 8 entries
// through a masked load (the lanes past n add +0); then lane l += lane
// l+16, l += l+8, l += l+4, l += l+2, l += l+1.
TEXT ·dot32AVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-32, DX

d32loop:
	CMPQ    AX, DX
	JGE     d32rest
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	VMULPS  (DI)(AX*4), Y4, Y4
	VMULPS  32(DI)(AX*4), Y5, Y5
	VMULPS  64(DI)(AX*4), Y6, Y6
	VMULPS  96(DI)(AX*4), Y7, Y7
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	ADDQ    $32, AX
	JMP     d32loop

d32rest:
	// At most three whole chunks of 8 left, into Y0, Y1, Y2 in turn; then
	// the masked last chunk into the next register.
	MOVQ    CX, DX
	SUBQ    AX, DX
	CMPQ    DX, $8
	JLT     d32tail0
	VMOVUPS (SI)(AX*4), Y4
	VMULPS  (DI)(AX*4), Y4, Y4
	VADDPS  Y4, Y0, Y0
	ADDQ    $8, AX
	SUBQ    $8, DX
	CMPQ    DX, $8
	JLT     d32tail1
	VMOVUPS (SI)(AX*4), Y4
	VMULPS  (DI)(AX*4), Y4, Y4
	VADDPS  Y4, Y1, Y1
	ADDQ    $8, AX
	SUBQ    $8, DX
	CMPQ    DX, $8
	JLT     d32tail2
	VMOVUPS (SI)(AX*4), Y4
	VMULPS  (DI)(AX*4), Y4, Y4
	VADDPS  Y4, Y2, Y2
	ADDQ    $8, AX
	SUBQ    $8, DX
	JMP     d32tail3

d32tail0:
	DOT32MASKED(Y0)
	JMP d32reduce

d32tail1:
	DOT32MASKED(Y1)
	JMP d32reduce

d32tail2:
	DOT32MASKED(Y2)
	JMP d32reduce

d32tail3:
	DOT32MASKED(Y3)

d32reduce:
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET
