/* The one way out of the probes' fast paths into code that may touch vector registers
 * (xstate.inc, docs/patching.md "Vector registers"):
 *     R callmon_slow_call(R (*fn)(A...), A... args)      at most 5 integer/pointer args
 * calls fn(args...) and returns its rax, with the AVX and AVX-512 state as it was before
 * the call. The hooks' fast paths (hooks_pg.cpp, libcall_hooks.cpp: pure integer code
 * writing into memory already mapped) reach their slow paths (thread set-up, the trace
 * window's growth, selection, lost frames, the monotonic clock: anything that may call libc
 * or the dynamic linker) only through here; runtime/core/slow_call.hpp is the C++ side,
 * tests/audit/fast_path_audit.py checks the built library keeps to it.
 *
 * When none of the components checked is in use (XSTATE_IF_LIVE) the arguments move down
 * one register and we jump to fn, which returns to our caller directly. Otherwise the state
 * is saved below our frame, fn is called and the state put back (XSTATE_SAVE/RESTORE).
 *
 * Two entries, which differ in what they check (the save is the same):
 *   callmon_slow_call      every component saved (callmon_xstate_mask: AVX, opmask,
 *                          ZMM_Hi256, Hi16_ZMM). glibc's EVEX functions leave opmask and
 *                          Hi16_ZMM "in use" for good, so this saves on nearly every call:
 *                          for the rare slow paths (a thread's set-up, the trace window's
 *                          growth every 16 KiB-1 MiB, a new chunk, a signal's interference,
 *                          a rescan after dlopen, an exception unwinding).
 *   callmon_slow_call_hot  only the upper halves of ymm/zmm0-15 (callmon_xstate_live), and
 *                          only in monitor mode (callmon_xstate_hot_on: nothing else it
 *                          calls can change them; outside it, no check at all),
 *                          where arguments and results travel: for the slow paths a mode
 *                          takes on every call (record-time filters, tail calls, the
 *                          monotonic clock, a full shadow stack) or often (the writer's
 *                          records that do not fit its word: event_writer.hpp, Via),
 *                          where a save costs ~130
 *                          ns per call here. What it calls must leave zmm16-31 and the
 *                          opmask registers alone: integer code of the library's own that
 *                          reaches nothing outside it (hooks.hpp, kHotGuards; but a
 *                          monitor's callbacks at a call boundary, Reach::kCall;
 *                          tests/audit/fast_path_audit.py checks it; docs/patching.md,
 *                          "Vector registers").
 *
 * Frame: 0(%rbp) saved rbp, 8(%rbp) return address; 0..47(%rsp) fn and the five
 * arguments (rdi rsi rdx rcx r8 r9 on entry), 48(%rsp) rbx while the state is saved.
 * rdx is not kept as a second return register: the slow functions return one word.
 */
#include "runtime/arch/x86_64/frame.inc"
#include "runtime/arch/x86_64/xstate.inc"

	.text

/* SLOW_CALL name, live, gate: `gate`, when given, is a byte that must be non-zero for the
 * check to be made at all: callmon_slow_call_hot's callees can change the vector state only
 * through a monitor's callbacks, so outside monitor mode it jumps straight to them (the
 * xgetbv alone was a third of a duration-filtered call's cost, fentry fib). */
.macro	SLOW_CALL name, live, gate
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
	FRAME_ENTER
	subq	$64, %rsp
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
.ifnb \gate
	cmpb	$0, \gate(%rip)
	je	6f
.endif
	XSTATE_IF_LIVE 5f, \live
6:
	.cfi_remember_state
	movq	0(%rsp), %r11
	movq	8(%rsp), %rdi
	movq	16(%rsp), %rsi
	movq	24(%rsp), %rdx
	movq	32(%rsp), %rcx
	movq	40(%rsp), %r8
	FRAME_LEAVE
	jmp	*%r11
5:
	.cfi_restore_state
	XSTATE_SAVE 48
	movq	0(%rbx), %r11
	movq	8(%rbx), %rdi
	movq	16(%rbx), %rsi
	movq	24(%rbx), %rdx
	movq	32(%rbx), %rcx
	movq	40(%rbx), %r8
	call	*%r11
	XSTATE_RESTORE 48
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	\name, .-\name

.endm

	SLOW_CALL callmon_slow_call, callmon_xstate_mask
	SLOW_CALL callmon_slow_call_hot, callmon_xstate_live, callmon_xstate_hot_on

	.section .note.GNU-stack,"",@progbits
