/* Exit trampoline of the -pg modes for x86-64. callmon_pg_enter (hooks_pg.cpp) replaces an
 * instrumented function's return address with the address of callmon_pg_return, so the
 * function's `ret` lands here. We record the exit through
 *     uintptr_t callmon_pg_exit(uintptr_t* slot, const uint64_t* saved)
 * (`saved`: the save area below, where -R finds the return value) which pops the
 * shadow-stack frame, writes the real return address back into the slot
 * and returns it, and then return to the real caller with the function's return values
 * intact: rax and rdx (integers, small structs), xmm0 and xmm1 (floating point, small
 * structs); the AVX/AVX-512 state (a __m256/__m512 return value) is kept by the hook's
 * slow paths, the only ones that may touch it (slow_call.S, xstate.inc). st0/st1 (long
 * double) are not saved: the runtime does no x87 arithmetic.
 *
 * Stack on entry (the function has just executed `ret`):
 *     %rsp = slot + 8, the caller's stack pointer after the call;
 *     -8(%rsp) = slot, still holding the address of callmon_pg_return
 * We step back onto the slot (`sub $8`) so the frame looks like a function's just after
 * its call: return address at 0(%rsp). The CFI says so; until callmon_pg_exit has put the
 * real address back, an unwinder reads callmon_pg_return there and stops at
 * callmon_hijacked_return (below). After the call it walks on to the real caller.
 * Then, as in the entry trampolines, a frame pointer and an explicitly 16-byte aligned
 * save area:
 *     0(%rbp) saved rbp, 8(%rbp) slot;
 *     0(%rsp) rax, 8(%rsp) rdx, 16(%rsp) xmm0, 32(%rsp) xmm1
 */
#include "runtime/arch/x86_64/frame.inc"

	.text

/* PG_RETURN name, hijacked, by_ret: the exit trampoline `name`, with the byte `hijacked` in
 * front of it. One byte in front of the trampoline, in its FDE, where the return address
 * is "undefined": an unwinder that meets a redirected return address looks up the address
 * minus one, lands here, and ends the walk (gdb shows the frame as `hijacked`, the
 * outermost) instead of walking on through garbage. `by_ret` 0 leaves by a jump (below),
 * 1 by `ret`: callmon_sled_return, reached from a stub whose own call the function
 * returned through (arch/x86_64/sled_call.S), where the real caller's entry is next on the
 * return stack buffer. */
.macro	PG_RETURN name, hijacked, by_ret
	.p2align 4
	.type	\hijacked, @function
\hijacked:
	.cfi_startproc
	.cfi_def_cfa %rsp, 0
	.cfi_undefined %rip
	nop
	.size	\hijacked, .-\hijacked
	.globl	\name
	.hidden	\name
	.type	\name, @function
\name:
	.cfi_offset %rip, -8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	FRAME_ENTER
	RETVALS_SAVE
	leaq	8(%rbp), %rdi
	movq	%rsp, %rsi
	call	callmon_pg_exit
	RETVALS_RESTORE
	FRAME_LEAVE
.if \by_ret
	ret			/* callmon_pg_exit put the real return address back in the slot */
.else
	/* Not `ret`: the function's own `ret` already took the return-stack-buffer entry of
	 * the real caller (and was mispredicted); a second `ret` here would take the entry of
	 * the caller's caller and leave every later return of the chain mispredicted too. */
	popq	%r11
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %r11
	jmp	*%r11
.endif
	.cfi_endproc
	.size	\name, .-\name
.endm

	PG_RETURN callmon_pg_return, callmon_hijacked_return, 0
	PG_RETURN callmon_sled_return, callmon_sled_hijacked_return, 1

	.section .note.GNU-stack,"",@progbits
