/* Common entry of the library-call probes for x86-64 (docs/patching.md, "Library calls").
 * An instrumented module's call through its GOT (a PLT stub's `jmp *slot`) reaches a
 * per-slot stub (patching/got_stub.cpp), which points r11 at its LibcallData {fn, target}
 * and jumps here. The stack is the library function's on entry:
 *     0(%rsp)  the return address into the caller (the slot the -pg entry takes)
 * We save the argument registers as the -pg entry trampolines do (pg_entry.S), call
 *     LibcallEnter callmon_libcall_enter(const LibcallData* d, uintptr_t* slot, saved)
 * (hooks/libcall_hooks.cpp), which records the entry like a -pg -mfentry function's and
 * returns the function to go to (rax) and whether the slot now belongs to a new frame
 * (rdx), and restore the registers. Then, as a sled stub does (sled_call.S):
 * - a new frame: callmon_libcall_call drops the caller's return address (kept in the
 *   frame) and *calls* the function, whose `ret` comes back predicted to the return point
 *   below; callmon_sled_return records the EXIT and returns to the caller with a `ret`,
 *   predicted too. The return point lies at 21 modulo 64 like a sled stub's, and its
 *   64-byte block is published with the stubs' pools (got_redirect.cpp), so the hooks
 *   recognise a slot holding it;
 * - otherwise (nothing recorded, a tail call sharing its caller's slot, or an attach's
 *   stubs, whose frames keep the redirected return the detach knows how to put back): a
 *   jump to the function with the stack as we found it.
 * r11 is scratch, as in the PLT stubs themselves. The flags set by the `test` survive the
 * moves and the pop of ARGS_LOAD and FRAME_LEAVE.
 *
 * Frame: 0(%rbp) saved rbp, 8(%rbp) slot; below, 16-byte aligned, 192 bytes:
 *     0..63(%rsp) rdi rsi rdx rcx r8 r9 rax r10, 64..191(%rsp) xmm0..xmm7
 * The AVX/AVX-512 state is kept by the hook's slow paths (slow_call.S, xstate.inc).
 */
#include "runtime/arch/x86_64/frame.inc"

	.text
	.globl	callmon_libcall_entry
	.hidden	callmon_libcall_entry
	.type	callmon_libcall_entry, @function
	.p2align 4
callmon_libcall_entry:
	.cfi_startproc
	FRAME_ENTER
	subq	$192, %rsp
	andq	$-16, %rsp
	ARGS_STORE
	movq	%r11, %rdi
	leaq	8(%rbp), %rsi
	movq	%rsp, %rdx
	call	callmon_libcall_enter
	movq	%rax, %r11
	testq	%rdx, %rdx
	ARGS_LOAD
	FRAME_LEAVE
	jne	callmon_libcall_call
	jmp	*%r11
	.cfi_endproc
	.size	callmon_libcall_entry, .-callmon_libcall_entry

	/* The block with the return point: callmon_libcall_block + 21. */
	.globl	callmon_libcall_block
	.hidden	callmon_libcall_block
	.p2align 6
callmon_libcall_block:
	.skip	13, 0xcc
	.type	callmon_libcall_call, @function
callmon_libcall_call:
	.cfi_startproc
	leaq	8(%rsp), %rsp
	/* From here the caller's return address is only in the frame: an unwinder stops. */
	.cfi_undefined %rip
	call	*%r11
.Lreturn_point:
	jmp	callmon_sled_return
	.cfi_endproc
	.size	callmon_libcall_call, .-callmon_libcall_call
	.if	.Lreturn_point - callmon_libcall_block - 21
	.error	"the library-call return point must lie at 21 modulo 64 (sled_call_stub.hpp)"
	.endif

	.section .note.GNU-stack,"",@progbits
