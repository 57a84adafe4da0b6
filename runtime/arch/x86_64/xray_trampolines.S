/* Trampolines of the XRay mode (docs/modes.md, "XRay sleds"): clang -fxray-instrument puts
 * an 11-byte sled at each function's entry, at each `ret` and before each tail call, and
 * the runtime rewrites them (runtime/patching/xray_sleds.cpp) into
 *     entry:  mov $id, %r10d; call callmon_xray_entry
 *     exit:   mov $id, %r10d; jmp  callmon_xray_exit
 *     tail:   mov $id, %r10d; call callmon_xray_tail
 * (through a stub page when the module is out of rel32 reach). `id` indexes
 * callmon_xray_fns, the functions' addresses. No return address is replaced: the exit
 * trampoline is reached by a jump from the function's `ret` site and itself returns to the
 * function's caller, the address the return stack buffer predicts. So the hooks are those of
 * the -finstrument-functions mode (hooks_cyg.cpp), with its frame rules:
 *     callmon_xray_enter_body(fn, call_site, ticks, sp, saved)   (hooks_xray.cpp)
 *     callmon_xray_exit_body(fn, call_site, ticks, sp, saved)
 *     callmon_xray_tail_body(fn, call_site, ticks, sp)
 * with `sp` the function's stack pointer at its entry minus 16 (the same value at the entry,
 * at every exit and at a tail call, which is what the exit matches the frame by) and `saved`
 * the trampoline's save area: the argument registers at the entry, where -A finds them, the
 * return values at the exit, for -R (docs/record.md).
 *
 * Unlike the -finstrument-functions hooks, which the compiler calls like any function, these
 * run where the function expects no call: the entry and tail trampolines keep the argument
 * registers (frame.inc's ARGS_STORE: rdi rsi rdx rcx r8 r9 rax r10, xmm0-7), the exit
 * trampoline the return values (RETVALS_SAVE: rax rdx xmm0 xmm1). They keep no AVX or
 * AVX-512 state (__m256/__m512 arguments and results, zmm16-31, the opmask registers): the
 * bodies' fast paths are integer code that calls nothing, and their slow paths save that
 * state through callmon_slow_call (slow_call.S; docs/patching.md "Vector registers",
 * checked by tests/audit/fast_path_audit.py), as does the fenced clock's burst below. r10
 * (the id) and r11 are free in an XRay sled: compiler-rt's patched sleds clobber them too.
 *
 * What a monitor's callbacks (the program's code, which may clobber every call-clobbered
 * register) need here is no more than this: the entry sled is the function's first
 * instruction and the tail sled comes right before the jump to the called function, so
 * only argument registers are live there (saved above); the exit sled is the function's
 * `ret`, with only the results live (rax rdx xmm0 xmm1, saved; long double in st0 is not,
 * and monitors must not use long double: monitor.hpp). xmm8-15, zmm16-31 and k0-7 are dead
 * at all three because the caller cannot know the function's actual register use (clang
 * has no IPRA unless asked), and the upper halves of vector arguments and results are kept
 * by callmon_slow_call_hot. So the bodies' slow paths are the Reach::kCall instances
 * (hooks/hooks.hpp; docs/runtime.md, "Monitor mode and the vector state").
 */
#include "runtime/hooks/hook_burst.h"
#include "runtime/arch/x86_64/frame.inc"

	.text

/* rdi = the function of id r10d. */
.macro	XRAY_FN_TO_RDI
	movq	callmon_xray_fns(%rip), %rdi
	movl	%r10d, %r10d
	movq	(%rdi,%r10,8), %rdi
.endm

/* The entry hook's call; the trampoline's frame: 0(%rbp) saved rbp, 8(%rbp) the return
 * into the function's sled, 16(%rbp) the function's return address (its call site). */
.macro	XRAY_CALL_ENTER
	XRAY_FN_TO_RDI
	movq	16(%rbp), %rsi
	TICKS_TO_RDX
	movq	%rbp, %rcx		/* the function's entry %rsp - 16 */
	movq	%rsp, %r8		/* saved: ARGS_STORE's area */
	call	callmon_xray_enter_body
.endm

/* The exit hook's call for an exit whose function's entry %rsp - 16 is `sp_off`(%rbp), with
 * `saved` (an instruction setting r8 to the return values' save area, or nothing); under
 * the fenced clock with the burst check cyg_hooks.S makes too (frame.inc's EXIT_BURST_CHECK:
 * the body returns the EXIT's time in rax, 0 if none, and &covered_exit in rdx). */
.macro	XRAY_CALL_EXIT sp_off, body, saved:vararg
	XRAY_FN_TO_RDI
	movq	8(%rbp), %rsi
	leaq	\sp_off(%rbp), %rcx
	\saved
	cmpb	$0, g_clock_fenced(%rip)
	jne	2f
	TICKS_TO_RDX
	call	\body
	jmp	4f
2:
	lfence
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	call	\body
	EXIT_BURST_CHECK 4f, 3f
	jmp	4f
3:					/* a burst: callmon_cyg_exit_pause(from, to), may reach libc */
	movq	%rax, %rdx
	movq	%rdi, %rsi
	leaq	callmon_cyg_exit_pause(%rip), %rdi
	call	callmon_slow_call
4:
.endm

/* Called from an entry sled: 0(%rsp) the return into the sled, 8(%rsp) the function's own
 * return address. */
	.globl	callmon_xray_entry
	.hidden	callmon_xray_entry
	.type	callmon_xray_entry, @function
	.p2align 4
callmon_xray_entry:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	XRAY_CALL_ENTER
	ARGS_LOAD
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_xray_entry, .-callmon_xray_entry

/* Jumped to from an exit sled (the function's `ret`): 0(%rsp) the function's return
 * address, %rsp its entry %rsp. Returns there, as the `ret` would have. */
	.globl	callmon_xray_exit
	.hidden	callmon_xray_exit
	.type	callmon_xray_exit, @function
	.p2align 4
callmon_xray_exit:
	.cfi_startproc
	FRAME_ENTER
	RETVALS_SAVE
	XRAY_CALL_EXIT -8, callmon_xray_exit_body, movq %rsp, %r8
	RETVALS_RESTORE
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_xray_exit, .-callmon_xray_exit

/* Called from a tail sled, the function's frame gone and the tail call's arguments in their
 * registers: 0(%rsp) the return into the sled, 8(%rsp) the function's return address, so
 * the function's entry %rsp - 16 is %rbp here. The body keeps the function's frame open
 * until the tail-called function returns (hooks_xray.cpp); back to the sled, which jumps. */
	.globl	callmon_xray_tail
	.hidden	callmon_xray_tail
	.type	callmon_xray_tail, @function
	.p2align 4
callmon_xray_tail:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	XRAY_CALL_EXIT 0, callmon_xray_tail_body
	ARGS_LOAD
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_xray_tail, .-callmon_xray_tail

	.section .note.GNU-stack,"",@progbits
