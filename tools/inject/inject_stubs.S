/* Code the injection monitor sends the program through, by replacing a return address on
 * the stack (inject_redirect.cpp says which and when). Each stub is reached by a `ret` (or
 * the -pg exit trampoline's `jmp`) that would have gone to R; it asks a C++ helper for what
 * to do and ends where R's code expects.
 *
 * callmon_inject_throw_stub, reached by the entry hook's return: %rsp = S + 8, where S is
 * the stack slot that held R, the return address into the instrumented function. It puts R
 * back into S and calls the thrower with a frame that looks, to the unwinder, exactly like
 * a call made by the instrumented function at R:
 *     8(%rbp) = S: R        0(%rbp): saved rbp        CFA = %rbp + 16 = S + 8
 * so the exception leaves the instrumented function as if the hook had thrown it.
 *
 * callmon_inject_throw_entry_stub (-pg -mfentry), reached by __fentry__'s return: %rsp is
 * the instrumented function's entry stack pointer, 0(%rsp) its return address; nothing of
 * the function has run. The exception comes out of the caller's call instruction, as if
 * the function had thrown before its first instruction. (Throwing from inside the function
 * at its __fentry__ call would end in std::terminate wherever the function has an LSDA:
 * that call is in none of its call-site ranges.)
 *
 * callmon_inject_return_stub (-pg -mfentry only), reached by __fentry__'s return: %rsp = S
 * + 8 is the instrumented function's own entry stack pointer, 0(%rsp) its return address.
 * It loads the value into %rax and returns for the function, whose body never runs.
 *
 * callmon_inject_errno_stub, reached as the instrumented function returns (after its exit
 * hook: the runtime restores errno in its hooks, so errno must be set after them). The
 * function's return values (rax, rdx, xmm0, xmm1) are kept; the helper sets errno and gives
 * R back, where we jump with %rsp unchanged.
 *
 * The entry stack alignment differs between the hook modes, so each stub aligns its own.
 */
#include "runtime/arch/x86_64/frame.inc"

	.text

	.globl	callmon_inject_throw_stub
	.hidden	callmon_inject_throw_stub
	.type	callmon_inject_throw_stub, @function
	.p2align 4
callmon_inject_throw_stub:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rip, -8
	FRAME_ENTER
	andq	$-16, %rsp
	call	callmon_inject_take_return
	movq	%rax, 8(%rbp)
	call	callmon_inject_throw
	ud2
	.cfi_endproc
	.size	callmon_inject_throw_stub, .-callmon_inject_throw_stub

	.globl	callmon_inject_throw_entry_stub
	.hidden	callmon_inject_throw_entry_stub
	.type	callmon_inject_throw_entry_stub, @function
	.p2align 4
callmon_inject_throw_entry_stub:
	.cfi_startproc
	FRAME_ENTER
	andq	$-16, %rsp
	call	callmon_inject_throw
	ud2
	.cfi_endproc
	.size	callmon_inject_throw_entry_stub, .-callmon_inject_throw_entry_stub

	.globl	callmon_inject_return_stub
	.hidden	callmon_inject_return_stub
	.type	callmon_inject_return_stub, @function
	.p2align 4
callmon_inject_return_stub:
	.cfi_startproc
	FRAME_ENTER
	andq	$-16, %rsp
	call	callmon_inject_take_value
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_inject_return_stub, .-callmon_inject_return_stub

	.globl	callmon_inject_errno_stub
	.hidden	callmon_inject_errno_stub
	.type	callmon_inject_errno_stub, @function
	.p2align 4
callmon_inject_errno_stub:
	.cfi_startproc
	.cfi_undefined %rip
	FRAME_ENTER
	RETVALS_SAVE
	call	callmon_inject_apply_errno
	movq	%rax, %r11
	RETVALS_RESTORE
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 0
	.cfi_restore %rbp
	jmp	*%r11
	.cfi_endproc
	.size	callmon_inject_errno_stub, .-callmon_inject_errno_stub

	.section .note.GNU-stack,"",@progbits
