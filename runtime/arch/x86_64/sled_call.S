/* The trampolines of nop sleds patched into jumps to per-function stubs (sled_call_stub.hpp):
 * the sled's function is *called* by its stub, so its `ret` is predicted by the return
 * stack buffer, where the -pg modes' redirected return address never is
 * (docs/modes.md, "Nop sleds"). A stub (64 bytes, s = its first byte):
 *
 *     s+0   call *enter(%rip)      callmon_sled_enter, below
 *     s+6   test %r11, %r11        redirected?
 *     s+9   je   s+27
 *     s+11  lea  8(%rsp), %rsp     drop the caller's return address (kept in the frame)
 *     s+16  call body              the function after its sled; pushes s+21 where it was
 *     s+21  jmp  *exit(%rip)       callmon_sled_return, below
 *     s+27  jmp  body              not recorded, or a tail call sharing its caller's slot
 *     s+32  .quad fn               the function's address, as the -pg entry records it
 *
 * callmon_sled_enter is __fentry__'s trampoline with the function's address read from the
 * stub instead of derived from the return address. Stack on entry:
 *     0(%rsp)  s+6, its return address into the stub
 *     8(%rsp)  slot: the function's own return address (into its caller)
 * It calls
 *     uintptr_t callmon_sled_enter_c(fn, slot, saved)   (hooks_pg.cpp)
 * which records the ENTER like the -pg entry and answers whether the slot was redirected
 * (a new frame holds the real return address): returned in r11 (scratch at a function's
 * entry, never an argument), every argument register restored.
 *
 * callmon_sled_return (pg_return.S) is callmon_pg_return but for its last instruction: the
 * function returned to s+21 through the prediction the stub's `call` pushed, so the real
 * caller's entry is next on the return stack buffer and a `ret` takes it. A frame whose slot
 * got callmon_pg_return instead (redirected again after an exception was caught,
 * pg_hijack_returns) returns there and jumps, correct but mispredicted.
 *
 * callmon_pg_tramp_enter is the same entry for the trampolines of -pg (mcount) functions
 * (mcount_entry.hpp), whose layout is --patch's (entry_tramp.hpp): the function's address
 * at +128 of the trampoline (the return address being +6), the answer in ZF (set: not
 * redirected, jump into the copy), which the moves and pop after the `test` leave alone.
 */
#include "runtime/arch/x86_64/frame.inc"

	.text

/* SLED_ENTER name, fn_at, answer: the entry, reading the function's address fn_at bytes
 * after its return address, answering by `answer` (an instruction taking %rax, the C
 * side's result, to where the caller looks: r11 or ZF). */
.macro	SLED_ENTER name, fn_at, answer:vararg
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	movq	8(%rbp), %rdi
	movq	\fn_at(%rdi), %rdi	/* fn */
	leaq	16(%rbp), %rsi		/* slot */
	movq	%rsp, %rdx		/* saved */
	call	callmon_sled_enter_c
	\answer
	ARGS_LOAD
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	\name, .-\name
.endm

	/* A stub's: fn at s+32, the return address being s+6. */
	SLED_ENTER callmon_sled_enter, 26, movq %rax, %r11
	/* A -pg function's trampoline: fn at +128, the return address being +6. */
	SLED_ENTER callmon_pg_tramp_enter, 122, testq %rax, %rax

	.section .note.GNU-stack,"",@progbits
