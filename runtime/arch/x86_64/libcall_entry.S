/* Common entry of the library-call probes for x86-64 (docs/patching.md, "Library calls").
 * An instrumented module's call through its GOT (a PLT stub's `jmp *slot`) reaches a
 * per-slot stub (patching/got_stub.cpp), which points r11 at its LibcallData {fn, target}
 * and jumps here. The stack is the library function's on entry:
 *     0(%rsp)  the return address into the caller (the slot the -pg exit hijacks)
 * We save the argument registers as the -pg entry trampolines do (pg_entry.S), call
 *     uintptr_t callmon_libcall_enter(const LibcallData* d, uintptr_t* slot, saved)
 * (hooks/libcall_hooks.cpp), which records the entry and redirects the return address to
 * callmon_pg_return (pg_return.S) exactly like a -pg -mfentry function's, restore the
 * registers and jump to the function it returned, with the stack as we found it.
 * r11 is scratch, as in the PLT stubs themselves.
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
	ARGS_LOAD
	FRAME_LEAVE
	jmp	*%r11
	.cfi_endproc
	.size	callmon_libcall_entry, .-callmon_libcall_entry

	.section .note.GNU-stack,"",@progbits
