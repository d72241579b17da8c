//go:build amd64 && !purego

#include "textflag.h"

// func screen32AVX2(dots *float32, sq, rthr *float64, from, n int, base, thr, dq float64, rev bool) int
// For b in [from, n) by 8 (n − from a multiple of 8): key = (base + sq[b])
// − (dots[b] + dots[b]) in float64 (2·d is exact), kept when key is not
// greater than thr (predicate NGT_UQ: a NaN keeps it) or, with rev, not
// greater than rthr[b] + dq. Returns the first kept b, or n.
TEXT ·screen32AVX2(SB), NOSPLIT, $0-80
	MOVQ         dots+0(FP), SI
	MOVQ         sq+8(FP), DI
	MOVQ         rthr+16(FP), R8
	MOVQ         from+24(FP), AX
	MOVQ         n+32(FP), CX
	VBROADCASTSD base+40(FP), Y0
	VBROADCASTSD thr+48(FP), Y1
	VBROADCASTSD dq+56(FP), Y2
	MOVBLZX      rev+64(FP), DX
	TESTQ        DX, DX
	JNZ          revloop

loop:
	CMPQ      AX, CX
	JGE       none
	VCVTPS2PD (SI)(AX*4), Y3
	VCVTPS2PD 16(SI)(AX*4), Y4
	VADDPD    Y3, Y3, Y3
	VADDPD    Y4, Y4, Y4
	VADDPD    (DI)(AX*8), Y0, Y5
	VADDPD    32(DI)(AX*8), Y0, Y6
	VSUBPD    Y3, Y5, Y5
	VSUBPD    Y4, Y6, Y6
	VCMPPD    $0x1a, Y1, Y5, Y5 // key NGT_UQ thr
	VCMPPD    $0x1a, Y1, Y6, Y6
	VORPD     Y5, Y6, Y7
	VMOVMSKPD Y7, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $8, AX
	JMP       loop

revloop:
	CMPQ      AX, CX
	JGE       none
	VCVTPS2PD (SI)(AX*4), Y3
	VCVTPS2PD 16(SI)(AX*4), Y4
	VADDPD    Y3, Y3, Y3
	VADDPD    Y4, Y4, Y4
	VADDPD    (DI)(AX*8), Y0, Y5
	VADDPD    32(DI)(AX*8), Y0, Y6
	VSUBPD    Y3, Y5, Y5
	VSUBPD    Y4, Y6, Y6
	VADDPD    (R8)(AX*8), Y2, Y8 // rthr[b] + dq
	VADDPD    32(R8)(AX*8), Y2, Y9
	VCMPPD    $0x1a, Y8, Y5, Y8 // key NGT_UQ rthr[b]+dq
	VCMPPD    $0x1a, Y9, Y6, Y9
	VCMPPD    $0x1a, Y1, Y5, Y5 // key NGT_UQ thr
	VCMPPD    $0x1a, Y1, Y6, Y6
	VORPD     Y8, Y5, Y5
	VORPD     Y9, Y6, Y6
	VORPD     Y5, Y6, Y7
	VMOVMSKPD Y7, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $8, AX
	JMP       revloop

found:
	VMOVMSKPD Y5, DX
	TESTL     DX, DX
	JNZ       first
	VMOVMSKPD Y6, DX
	ADDQ      $4, AX

first:
	BSFL      DX, DX
	ADDQ      DX, AX
	MOVQ      AX, ret+72(FP)
	VZEROUPPER
	RET

none:
	MOVQ      CX, ret+72(FP)
	VZEROUPPER
	RET
