#include "textflag.h"

// STOPS sets each byte of m to 0xFF where x holds a stop, else 0; t is
// scratch. X1-X4 hold '"', '\\', 0xE2 and 0x1F in every byte.
#define STOPS(x, m, t) \
	MOVO	x, m; PCMPEQB	X1, m; \
	MOVO	x, t; PCMPEQB	X2, t; POR	t, m; \
	MOVO	x, t; PCMPEQB	X3, t; POR	t, m; \
	MOVO	x, t; PMINUB	X4, t; PCMPEQB	x, t; POR	t, m

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
	STOPS(X0, X5, X6)
	STOPS(X8, X9, X10)
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
	STOPS(X0, X5, X6)
	PMOVMSKB	X5, DX
	TESTL	DX, DX
	JNZ	done
	MOVQ	CX, AX
	JMP	single

done:
	MOVQ	AX, ret+24(FP)
	RET
