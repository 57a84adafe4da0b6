/* The -finstrument-functions hooks for x86-64: __cyg_profile_func_enter and _exit. These
 * stubs only read the clock at the hooks' very edges and hand over to the C++ bodies in
 * hooks_cyg.cpp:
 *     callmon_cyg_enter(this_fn, call_site, ticks, sp)
 *     uint64_t callmon_cyg_exit(this_fn, call_site, ticks, sp)
 * `ticks` is rdtsc's value (0 on the monotonic clock: the body reads that itself); `sp` is
 * the frame address the hook would have had as a C++ function, the instrumented function's
 * stack pointer at the call minus 16 (Frame::sp, thread_state.hpp).
 *
 * Why the edges: under --clock=tsc-fenced the hooks take a gap of more than
 * CALLMON_HOOK_BURST_TICKS between two of their clock reads as a burst (the host took the
 * CPU) and record it as a PAUSE. What lies between the exit hook's last read and the next
 * entry hook's first read is no one's to judge: a burst there lands in the caller, whose
 * measured time is mostly probes. Compiled C++ hooks spent most of that stretch pushing
 * and popping callee-saved registers; here it is the program's own instructions and a few
 * of ours.
 *
 * The entry stub jumps to its body, which runs on the hook's own stack frame. The exit stub
 * under the fenced clock calls its body, which returns the time its EXIT carries (0 when it
 * wrote none from its fast path) in rax and the address of the thread's covered_exit counter
 * in rdx, then reads the clock once more after the body's epilogue: a burst goes to
 * callmon_cyg_exit_pause(from, to), a shorter gap is added to the counter (check_hook_burst
 * in event_writer.hpp does the same for the C++ paths). rax, rdx, rcx, rsi, rdi, r8-r11 are
 * the caller's to lose across a hook, as across any call; the instrumented function keeps
 * its return value in callee-saved registers or memory across its exit hook.
 */
#include "runtime/hooks/hook_burst.h"
#include "runtime/arch/x86_64/frame.inc"
#include "runtime/arch/x86_64/relocated.inc"

/* The marker RETURN_IF_UNRELOCATED compares with its own address (relocated.inc). */
	.section .data.rel.ro, "aw"
	.p2align 3
	.globl	callmon_self_ref
	.hidden	callmon_self_ref
	.type	callmon_self_ref, @object
callmon_self_ref:
	.quad	callmon_self_ref
	.size	callmon_self_ref, 8

	.text

	.globl	__cyg_profile_func_enter
	.type	__cyg_profile_func_enter, @function
	.p2align 4
__cyg_profile_func_enter:
	.cfi_startproc
	RETURN_IF_UNRELOCATED
	TICKS_TO_RDX
	leaq	-8(%rsp), %rcx
	jmp	callmon_cyg_enter
	.cfi_endproc
	.size	__cyg_profile_func_enter, .-__cyg_profile_func_enter

	.globl	__cyg_profile_func_exit
	.type	__cyg_profile_func_exit, @function
	.p2align 4
__cyg_profile_func_exit:
	.cfi_startproc
	RETURN_IF_UNRELOCATED
	cmpb	$0, g_clock_fenced(%rip)
	jne	2f
	TICKS_TO_RDX
	leaq	-8(%rsp), %rcx
	jmp	callmon_cyg_exit
2:
	/* Fenced: lfence first, so the function's last instructions complete inside it. */
	lfence
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	leaq	-8(%rsp), %rcx
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	callmon_cyg_exit
	EXIT_BURST_CHECK 3f, 4f
3:
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
4:
	.cfi_adjust_cfa_offset 8
	movq	%rax, %rsi		/* to */
	call	callmon_cyg_exit_pause
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	__cyg_profile_func_exit, .-__cyg_profile_func_exit

	.section .note.GNU-stack,"",@progbits
