/* dlsym interposer for x86-64 (interpose_dlsym.cpp).
 *
 * After a dlopen the new module's nop sleds must be patched before the program calls into
 * it, and a function pointer from dlsym is the usual way in: callmon_before_dlsym runs a
 * pending sled pass, then returns the real dlsym, which this trampoline *jumps* to. As
 * with dlopen (dlopen_trampoline.S), glibc's dlsym looks at its return address (RTLD_NEXT
 * is relative to the calling object), so the caller's return address stays in place.
 *
 * Stack layout on entry:  0(%rsp) = return address into the caller; arguments in rdi, rsi
 * (and rdx, saved too so that the call below has %rsp 16-byte aligned).
 *   after the pushes:  24(%rsp) return address, 16(%rsp) rdi, 8(%rsp) rsi, 0(%rsp) rdx
 */
	.text

	.globl	dlsym
	.type	dlsym, @function
dlsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	call	callmon_before_dlsym
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlsym, .-dlsym

	.section .note.GNU-stack,"",@progbits
