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

	.globl	callmon_sled_enter
	.hidden	callmon_sled_enter
	.type	callmon_sled_enter, @function
	.p2align 4
callmon_sled_enter:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	movq	8(%rbp), %rdi
	movq	26(%rdi), %rdi		/* fn: s+32, the return address being s+6 */
	leaq	16(%rbp), %rsi		/* slot */
	movq	%rsp, %rdx		/* saved */
	call	callmon_sled_enter_c
	movq	%rax, %r11
	ARGS_LOAD
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_sled_enter, .-callmon_sled_enter

	.globl	callmon_pg_tramp_enter
	.hidden	callmon_pg_tramp_enter
	.type	callmon_pg_tramp_enter, @function
	.p2align 4
callmon_pg_tramp_enter:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	movq	8(%rbp), %rdi
	movq	122(%rdi), %rdi		/* fn: trampoline + 128, the return address being +6 */
	leaq	16(%rbp), %rsi		/* slot */
	movq	%rsp, %rdx		/* saved */
	call	callmon_sled_enter_c
	testq	%rax, %rax
	ARGS_LOAD
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_pg_tramp_enter, .-callmon_pg_tramp_enter

	.section .note.GNU-stack,"",@progbits
