/* The entry trampoline of entry patching (docs/patching.md, "Entry patching"). A patched
 * function's first bytes jump to its own trampoline (runtime/patching/entry_tramp.hpp),
 * whose first instruction calls this. The stack then is the one `call __fentry__` as a
 * function's first instruction makes (pg_entry.S):
 *     0(%rsp)  child: the trampoline's code after the call (trampoline + 6)
 *     8(%rsp)  slot:  the patched function's return address
 * and the trampoline holds the function's own address 122 bytes after `child`. Like
 * __fentry__, this saves every register a function may receive an argument in, with the
 * same layout (the -A argument capture reads it), and calls
 *     callmon_patched_enter(fn, slot, saved)   (hooks_pg.cpp)
 * which records the entry and takes the return slot (answered in ZF, clear when taken: the
 * trampoline then calls the copy, which returns through callmon_patched_return_ret; else,
 * or in an attach's trampolines, its return goes to callmon_patched_return, below),
 * whose C side, callmon_patched_exit, is the -pg modes' own exit (but for a monitor's
 * callbacks, which run behind the full save there: hooks/hooks.hpp, Reach::kHot). Only
 * called while recording (nothing is patched otherwise), so there is no forwarding to
 * glibc.
 *
 * Unlike the -pg trampolines, both keep every register a call may clobber by the ABI (rax,
 * rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm15): the function was compiled with no hook call in
 * it, and gcc's -fipa-ra lets a caller in the same unit keep values in the registers its
 * callee leaves alone (bench/fib.c's main keeps `n` in rsi across fib()). The AVX and
 * AVX-512 state (upper halves, ymm16-31/zmm16-31, opmask registers) is kept by the hooks'
 * slow paths, the only code behind these trampolines that may touch it (slow_call.S,
 * xstate.inc), so a function taking or returning __m256/__m512 gets its registers whole.
 */
#include "runtime/arch/x86_64/frame.inc"

	.text
	.globl	callmon_patched_entry
	.hidden	callmon_patched_entry
	.type	callmon_patched_entry, @function
	.p2align 4
callmon_patched_entry:
	.cfi_startproc
	FRAME_ENTER
	subq	$336, %rsp
	andq	$-16, %rsp
	movq	%r11, 192(%rsp)
	movaps	%xmm8, 208(%rsp)
	movaps	%xmm9, 224(%rsp)
	movaps	%xmm10, 240(%rsp)
	movaps	%xmm11, 256(%rsp)
	movaps	%xmm12, 272(%rsp)
	movaps	%xmm13, 288(%rsp)
	movaps	%xmm14, 304(%rsp)
	movaps	%xmm15, 320(%rsp)
	ARGS_STORE
	movq	8(%rbp), %rdi
	movq	122(%rdi), %rdi		/* the function's address: trampoline + 128 */
	leaq	16(%rbp), %rsi
	movq	%rsp, %rdx
	call	callmon_patched_enter
	/* The answer in ZF, which nothing below changes (moves, movaps, pop): set when the
	 * trampoline is to jump into the copy, clear when it calls it. Every register a call
	 * may clobber must reach the function as it was, so no register can carry it. */
	testq	%rax, %rax
	ARGS_LOAD
	movq	192(%rsp), %r11
	movaps	208(%rsp), %xmm8
	movaps	224(%rsp), %xmm9
	movaps	240(%rsp), %xmm10
	movaps	256(%rsp), %xmm11
	movaps	272(%rsp), %xmm12
	movaps	288(%rsp), %xmm13
	movaps	304(%rsp), %xmm14
	movaps	320(%rsp), %xmm15
	FRAME_LEAVE
	ret
	.cfi_endproc
	.size	callmon_patched_entry, .-callmon_patched_entry

/* The exit trampoline of patched functions: callmon_pg_return (pg_return.S) with every
 * call-clobbered register kept (see above). Its save area starts like RETVALS_SAVE's
 * (0 rax, 8 rdx, 16 xmm0, 32 xmm1: -R reads return values there), then xmm2-xmm15 and
 * rcx rsi rdi r8 r9 r10 r11. It leaves through `jmp *-8(%rsp)` rather than through a
 * register (r11 must be kept too): the kernel never writes a signal frame into the 128
 * bytes below the stack pointer, so the word stays there until the jump reads it. */
.macro	PATCHED_RETURN name, hijacked, by_ret
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
	subq	$336, %rsp
	andq	$-16, %rsp
	movq	%rax, 0(%rsp)
	movq	%rdx, 8(%rsp)
	movaps	%xmm0, 16(%rsp)
	movaps	%xmm1, 32(%rsp)
	movaps	%xmm2, 48(%rsp)
	movaps	%xmm3, 64(%rsp)
	movaps	%xmm4, 80(%rsp)
	movaps	%xmm5, 96(%rsp)
	movaps	%xmm6, 112(%rsp)
	movaps	%xmm7, 128(%rsp)
	movaps	%xmm8, 144(%rsp)
	movaps	%xmm9, 160(%rsp)
	movaps	%xmm10, 176(%rsp)
	movaps	%xmm11, 192(%rsp)
	movaps	%xmm12, 208(%rsp)
	movaps	%xmm13, 224(%rsp)
	movaps	%xmm14, 240(%rsp)
	movaps	%xmm15, 256(%rsp)
	movq	%rcx, 272(%rsp)
	movq	%rsi, 280(%rsp)
	movq	%rdi, 288(%rsp)
	movq	%r8, 296(%rsp)
	movq	%r9, 304(%rsp)
	movq	%r10, 312(%rsp)
	movq	%r11, 320(%rsp)
	leaq	8(%rbp), %rdi
	movq	%rsp, %rsi
	call	callmon_patched_exit
	movq	0(%rsp), %rax
	movq	8(%rsp), %rdx
	movaps	16(%rsp), %xmm0
	movaps	32(%rsp), %xmm1
	movaps	48(%rsp), %xmm2
	movaps	64(%rsp), %xmm3
	movaps	80(%rsp), %xmm4
	movaps	96(%rsp), %xmm5
	movaps	112(%rsp), %xmm6
	movaps	128(%rsp), %xmm7
	movaps	144(%rsp), %xmm8
	movaps	160(%rsp), %xmm9
	movaps	176(%rsp), %xmm10
	movaps	192(%rsp), %xmm11
	movaps	208(%rsp), %xmm12
	movaps	224(%rsp), %xmm13
	movaps	240(%rsp), %xmm14
	movaps	256(%rsp), %xmm15
	movq	272(%rsp), %rcx
	movq	280(%rsp), %rsi
	movq	288(%rsp), %rdi
	movq	296(%rsp), %r8
	movq	304(%rsp), %r9
	movq	312(%rsp), %r10
	movq	320(%rsp), %r11
	FRAME_LEAVE
	/* The real return address is in the slot now (callmon_patched_exit wrote it back). */
.if \by_ret
	ret
.else
	leaq	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	jmp	*-8(%rsp)
.endif
	.cfi_endproc
	.size	\name, .-\name
.endm

	PATCHED_RETURN callmon_patched_return, callmon_patched_hijacked_return, 0
	/* Reached from a trampoline that called the function's copy (entry_tramp.hpp): the
	 * function returned through that call's prediction, so the caller's is next. */
	PATCHED_RETURN callmon_patched_return_ret, callmon_patched_called_return, 1


	.section .note.GNU-stack,"",@progbits
