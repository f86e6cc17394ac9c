#include "textflag.h"

// func stringBlocks(b []byte) int
//
// NEON: per 16-byte block, a byte is a stop when it equals '"', '\\' or
// 0xE2, or when max(byte, 0x1F) is 0x1F (a control byte); the block has
// one when either half of the OR of those masks is not zero.
TEXT ·stringBlocks(SB), NOSPLIT, $0-32
	MOVD	b_base+0(FP), R0
	MOVD	b_len+8(FP), R1
	MOVD	$0, R2
	MOVD	$0x22, R3
	VMOV	R3, V1.B16
	MOVD	$0x5c, R3
	VMOV	R3, V2.B16
	MOVD	$0xe2, R3
	VMOV	R3, V3.B16
	MOVD	$0x1f, R3
	VMOV	R3, V4.B16

loop:
	ADD	$16, R2, R4
	CMP	R1, R4
	BHI	done
	ADD	R0, R2, R5
	VLD1	(R5), [V0.B16]
	VCMEQ	V0.B16, V1.B16, V5.B16
	VCMEQ	V0.B16, V2.B16, V6.B16
	VCMEQ	V0.B16, V3.B16, V7.B16
	VUMAX	V0.B16, V4.B16, V8.B16
	VCMEQ	V8.B16, V4.B16, V8.B16
	VORR	V5.B16, V6.B16, V5.B16
	VORR	V7.B16, V8.B16, V7.B16
	VORR	V5.B16, V7.B16, V5.B16
	VMOV	V5.D[0], R6
	VMOV	V5.D[1], R7
	ORR	R6, R7, R6
	CBNZ	R6, done
	MOVD	R4, R2
	B	loop

done:
	MOVD	R2, ret+24(FP)
	RET
