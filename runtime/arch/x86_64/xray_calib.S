/* The probe functions of the XRay mode's calibration (calibration.cpp; docs/runtime.md,
 * "Overhead compensation"): the functions of calibration_probe.cpp and calibration_work.hpp
 * as clang -fxray-instrument compiles them, with their sleds as the runtime patches them
 * (xray_sleds.cpp): an entry sled `mov $id, %r10d; call callmon_xray_entry` and, for the
 * `ret`, an exit sled `mov $id, %r10d; jmp callmon_xray_exit`, which returns to the caller.
 * So each call goes through the real XRay trampolines (xray_trampolines.S) as a program's
 * does, with the registers they keep. Their ids are reserved ones (xray_calib_ids.h);
 * calibration.cpp puts the functions' addresses at them (xray_calibration_ready). Written by
 * hand because the runtime is not built by clang:
 *     callmon_calib_xray_leaf()            empty
 *     callmon_calib_xray_parent()          calls the leaf kCalibrationLeaves (16) times
 *     callmon_calib_xray_chain_leaf(x)     48 dependent multiply-adds (CALLMON_CALIBRATION_CHAIN)
 *     callmon_calib_xray_serial(x)         x = chain_leaf(x), 16 times
 *     callmon_calib_xray_parallel(x)       s ^= chain_leaf(x + i), i < 16
 */
#include "runtime/calibration/xray_calib_ids.h"

.macro	XRAY_ENTRY_SLED n
	movl	$(CALLMON_XRAY_CALIB_ID0 + \n), %r10d
	call	callmon_xray_entry
.endm

.macro	XRAY_EXIT_SLED n
	movl	$(CALLMON_XRAY_CALIB_ID0 + \n), %r10d
	jmp	callmon_xray_exit
.endm

.macro	FUNC name
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
.endm

.macro	ENDFUNC name
	.cfi_endproc
	.size	\name, .-\name
.endm

	.text

FUNC callmon_calib_xray_leaf
	XRAY_ENTRY_SLED 0
	XRAY_EXIT_SLED 0
ENDFUNC callmon_calib_xray_leaf

FUNC callmon_calib_xray_parent
	XRAY_ENTRY_SLED 1
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	movl	$16, %ebx
1:	call	callmon_calib_xray_leaf
	decl	%ebx
	jnz	1b
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	XRAY_EXIT_SLED 1
ENDFUNC callmon_calib_xray_parent

FUNC callmon_calib_xray_chain_leaf
	XRAY_ENTRY_SLED 2
	movq	%rdi, %rax
	movabsq	$6364136223846793005, %rcx
	movabsq	$1442695040888963407, %rdx
	movl	$48, %esi
1:	imulq	%rcx, %rax
	addq	%rdx, %rax
	decl	%esi
	jnz	1b
	XRAY_EXIT_SLED 2
ENDFUNC callmon_calib_xray_chain_leaf

FUNC callmon_calib_xray_serial
	XRAY_ENTRY_SLED 3
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	movl	$16, %ebx
	movq	%rdi, %rax
1:	movq	%rax, %rdi
	call	callmon_calib_xray_chain_leaf
	decl	%ebx
	jnz	1b
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	XRAY_EXIT_SLED 3
ENDFUNC callmon_calib_xray_serial

FUNC callmon_calib_xray_parallel
	XRAY_ENTRY_SLED 4
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r12, -24
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_offset %r13, -32
	movq	%rdi, %r12
	xorl	%ebx, %ebx
	xorl	%r13d, %r13d
1:	leaq	(%r12,%rbx), %rdi
	call	callmon_calib_xray_chain_leaf
	xorq	%rax, %r13
	incl	%ebx
	cmpl	$16, %ebx
	jne	1b
	movq	%r13, %rax
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	XRAY_EXIT_SLED 4
ENDFUNC callmon_calib_xray_parallel

	.section .note.GNU-stack,"",@progbits
