// SPDX-License-Identifier: GPL-2.0
/*
 * insnmark: run the marker instruction the insns QEMU plugin reports the
 * guest's instruction count at (tests/bench/insns.c). A NOP anywhere else.
 */
int main(void)
{
	/* nopw 0x72746544(%rax,%rax,1) */
	__asm__ volatile(".byte 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x44, 0x65, 0x74, 0x72");
	return 0;
}
