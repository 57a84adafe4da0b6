/* dlopen, dlmopen and dlsym interposers for x86-64 (interpose_process.cpp,
 * interpose_dlsym.cpp).
 *
 * glibc's dlopen looks at its return address to find the calling object (for its RUNPATH
 * and $ORIGIN), and dlsym does too (RTLD_NEXT is relative to the calling object), so a C
 * wrapper that calls the real function would make every call look as if libcallmon.so
 * made it. These trampolines instead ask the runtime for the real function and then
 * *jump* to it, leaving the caller's return address in place:
 *   - callmon_before_dlopen / _dlmopen also schedule a module rescan, done at the next
 *     hook after the library is loaded;
 *   - callmon_before_dlsym runs a pending nop-sled pass first: a function pointer from
 *     dlsym is the usual way into a new module, and its sleds must be patched before.
 *
 * Stack layout on entry:  0(%rsp) = return address into the caller; arguments in
 * rdi, rsi, rdx (dlmopen's third; saved for all, which also aligns the call) which are
 * saved around the call and restored before the jump.
 *   after the pushes:  24(%rsp) return address, 16(%rsp) rdi, 8(%rsp) rsi, 0(%rsp) rdx
 * The call happens with %rsp 16-byte aligned (8 + 3*8 = 32 bytes below the caller's).
 */
	.text

/* DL_FORWARD name, before: `name` calls `before` with its own arguments and jumps to the
 * function it returns. */
.macro	DL_FORWARD name, before
	.globl	\name
	.type	\name, @function
\name:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	call	\before
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	\name, .-\name
.endm

	DL_FORWARD dlopen, callmon_before_dlopen
	DL_FORWARD dlmopen, callmon_before_dlmopen
	DL_FORWARD dlsym, callmon_before_dlsym

	.section .note.GNU-stack,"",@progbits
