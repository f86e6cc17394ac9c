#include "textflag.h"

// func stringBlocks(b []byte) int
//
// SSE2 (every amd64): per 16-byte block, a byte is a stop when it equals
// '"', '\\' or 0xE2, or when min(byte, 0x1F) equals it (a control byte).
// Two blocks per turn while 32 bytes are left; a turn that finds a stop,
// and the last block, are taken one block at a time.
TEXT ·stringBlocks(SB), NOSPLIT, $0-32
	MOVQ	b_base+0(FP), SI
	MOVQ	b_len+8(FP), BX
	XORQ	AX, AX
	MOVQ	$0x2222222222222222, DX
	MOVQ	DX, X1
	PUNPCKLQDQ	X1, X1
	MOVQ	$0x5c5c5c5c5c5c5c5c, DX
	MOVQ	DX, X2
	PUNPCKLQDQ	X2, X2
	MOVQ	$0xe2e2e2e2e2e2e2e2, DX
	MOVQ	DX, X3
	PUNPCKLQDQ	X3, X3
	MOVQ	$0x1f1f1f1f1f1f1f1f, DX
	MOVQ	DX, X4
	PUNPCKLQDQ	X4, X4

pair:
	LEAQ	32(AX), CX
	CMPQ	CX, BX
	JA	single
	MOVOU	(SI)(AX*1), X0
	MOVOU	16(SI)(AX*1), X8
	MOVO	X0, X5
	PCMPEQB	X1, X5
	MOVO	X0, X6
	PCMPEQB	X2, X6
	MOVO	X0, X7
	PCMPEQB	X3, X7
	POR	X6, X5
	MOVO	X0, X6
	PMINUB	X4, X6
	PCMPEQB	X0, X6
	POR	X7, X5
	POR	X6, X5
	MOVO	X8, X9
	PCMPEQB	X1, X9
	MOVO	X8, X10
	PCMPEQB	X2, X10
	MOVO	X8, X11
	PCMPEQB	X3, X11
	POR	X10, X9
	MOVO	X8, X10
	PMINUB	X4, X10
	PCMPEQB	X8, X10
	POR	X11, X9
	POR	X10, X9
	POR	X9, X5
	PMOVMSKB	X5, DX
	TESTL	DX, DX
	JNZ	single
	MOVQ	CX, AX
	JMP	pair

single:
	LEAQ	16(AX), CX
	CMPQ	CX, BX
	JA	done
	MOVOU	(SI)(AX*1), X0
	MOVO	X0, X5
	PCMPEQB	X1, X5
	MOVO	X0, X6
	PCMPEQB	X2, X6
	MOVO	X0, X7
	PCMPEQB	X3, X7
	POR	X6, X5
	MOVO	X0, X6
	PMINUB	X4, X6
	PCMPEQB	X0, X6
	POR	X7, X5
	POR	X6, X5
	PMOVMSKB	X5, DX
	TESTL	DX, DX
	JNZ	done
	MOVQ	CX, AX
	JMP	single

done:
	MOVQ	AX, ret+24(FP)
	RET
