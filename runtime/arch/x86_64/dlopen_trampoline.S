/* dlopen and dlmopen interposers for x86-64.
 *
 * glibc's dlopen looks at its return address to find the calling object (for its RUNPATH
 * and $ORIGIN), so a C wrapper that calls the real dlopen would make every dlopen look as
 * if libcallmon.so made it. These trampolines instead ask the runtime for the real
 * function (callmon_before_dlopen also schedules a module rescan, done at the next hook
 * after the library is loaded) and then *jump* to it, leaving the caller's return address
 * in place.
 *
 * Stack layout on entry:  0(%rsp) = return address into the caller; arguments in
 * rdi, rsi, rdx (dlmopen) which are saved around the call and restored before the jump.
 *   after the pushes:  24(%rsp) return address, 16(%rsp) rdi, 8(%rsp) rsi, 0(%rsp) rdx
 * The call happens with %rsp 16-byte aligned (8 + 3*8 = 32 bytes below the caller's).
 */
	.text

	.globl	dlopen
	.type	dlopen, @function
dlopen:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	call	callmon_before_dlopen
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlopen, .-dlopen

	.globl	dlmopen
	.type	dlmopen, @function
dlmopen:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	call	callmon_before_dlmopen
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlmopen, .-dlmopen

	.section .note.GNU-stack,"",@progbits
