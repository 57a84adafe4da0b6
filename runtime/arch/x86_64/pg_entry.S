/* Entry trampolines of the -pg modes for x86-64: mcount (-pg) and __fentry__ (-pg -mfentry).
 * libcallmon.so is loaded before libc, so these definitions take the place of glibc's for
 * every module of the program. Both save the registers a function can receive arguments in
 * (rdi rsi rdx rcx r8 r9, rax for the vector count of variadic calls, r10 for a static
 * chain, xmm0-xmm7), call
 *     callmon_pg_enter(child, slot, saved, above)   (hooks_pg.cpp)
 * where `saved` is the save area below (the arguments recorded by -A/--auto-args come from it)
 * and return to the instrumented function as if nothing had happened. r11 is used as
 * scratch (caller-saved and never an argument, as glibc's own mcount assumes).
 *
 * Stack on entry to __fentry__ (called as the function's first instruction):
 *     0(%rsp)  child: return address into the instrumented function
 *     8(%rsp)  slot:  the instrumented function's own return address (into its caller)
 * except in a GCC function that takes a static chain (a nested function), which saves the
 * chain around the call, `push %r10; call __fentry__; pop %r10`: there 8(%rsp) is the saved
 * r10 and the slot is 16(%rsp). callmon_pg_enter_fentry (hooks_pg.cpp) recognises that
 * shape from the code around the call and moves the slot up; the trampoline itself passes
 * 8(%rsp) in both cases.
 * Stack on entry to mcount (called after the prologue `push %rbp; mov %rsp,%rbp`, GCC and
 * clang alike; the function may have pushed more registers since):
 *     0(%rsp)  child
 *     %rbp     the instrumented function's frame: 0(%rbp) its caller's rbp,
 *              8(%rbp) slot: its return address
 * After `push %rbp; mov %rsp,%rbp` here, the trampoline's own frame is
 *     0(%rbp) saved rbp, 8(%rbp) child, and for __fentry__ 16(%rbp) slot;
 * below it 192 bytes, rounded down to 16-byte alignment (the alignment at mcount's entry
 * depends on what the prologue pushed), hold the saved registers:
 *     0..63(%rsp)   rdi rsi rdx rcx r8 r9 rax r10
 *     64..191(%rsp) xmm0..xmm7
 *
 * The AVX/AVX-512 state is not saved here: the hook's fast path is integer code, and its
 * slow paths, which may call libc, keep that state themselves (slow_call.S, xstate.inc).
 *
 * When nothing is recorded (no CALLMON_DIR) the runtime's start-up stores glibc's own
 * function in callmon_pg_forward_*; the trampoline then jumps there with the stack
 * untouched, so a -pg program linked with the runtime still gets a complete gmon.out.
 */
#include "runtime/arch/x86_64/frame.inc"
#include "runtime/arch/x86_64/relocated.inc"

	.text

.macro	PG_SAVE
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
.endm

/* The hook's arguments but `saved` (rdx): child, slot, above. */
.macro	PG_HOOK_ARGS via_rbp
	movq	8(%rbp), %rdi
.if \via_rbp
	movq	0(%rbp), %rsi
	addq	$8, %rsi
.else
	leaq	16(%rbp), %rsi
.endif
	leaq	16(%rbp), %rcx
.endm

/* PG_ENTRY name, forward, via_rbp, hook: `via_rbp` is 1 where the slot is found through the
 * instrumented function's frame pointer, 0 where it is just above the child address;
 * `hook` is the C function called with (child, slot, saved, above), `above` the address
 * of the word just above the child address (16(%rbp)), which the C side takes as the slot
 * for prologue shapes it recognises (hooks_pg.cpp). */
.macro	PG_ENTRY name, forward, via_rbp, hook
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
	RETURN_IF_UNRELOCATED
	movq	\forward(%rip), %r11
	testq	%r11, %r11
	jnz	9f
	FRAME_ENTER
	PG_SAVE
	PG_HOOK_ARGS \via_rbp
	movq	%rsp, %rdx
	call	\hook
	ARGS_LOAD
	FRAME_LEAVE
	ret
9:
	jmp	*%r11
	.cfi_endproc
	.size	\name, .-\name
.endm

	PG_ENTRY __fentry__, callmon_pg_forward_fentry, 0, callmon_pg_enter_fentry
	PG_ENTRY mcount, callmon_pg_forward_mcount, 1, callmon_pg_enter

	.section .note.GNU-stack,"",@progbits
