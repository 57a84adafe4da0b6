/* The dl* functions of other link namespaces, forwarded (runtime/patching/namespace_dl.cpp).
 *
 * A module dlmopen'ed into another namespace calls that namespace's libc dlopen, dlmopen,
 * dlsym and dlclose, which the preloaded runtime does not interpose; namespace_dl.cpp
 * points its GOT words of them at these. For each function there are kNsDlSlots
 * trampolines, 16 bytes apart, the i-th forwarding to the i-th real function of the table
 * callmon_ns_dl_real (one namespace's libc each): it loads that address into %r11 (free at
 * a function's entry: the lazy PLT uses it too) and jumps to the function's handler, which
 * does what the base namespace's interposer does (dl_trampolines.S, interpose_dlclose.cpp)
 * and then *jumps* to the real function, the caller's return address left in place: glibc's
 * dlopen finds the calling object, hence the namespace to load into, its RUNPATH and
 * $ORIGIN, by that address.
 *
 * Handler stack on the call: entry %rsp = 8 mod 16; four pushes and 8 more make it 0.
 */
	.text

/* NS_HANDLER name, before: saves the arguments (rdi, rsi, rdx) and %r11, calls `before`
 * (its result, the base namespace's function, is not used), restores them and jumps to
 * the namespace's function in %r11. */
.macro	NS_HANDLER name, before
	.type	\name, @function
\name:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	\before
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r11
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%r11
	.cfi_endproc
	.size	\name, .-\name
.endm

	NS_HANDLER callmon_ns_open_handler, callmon_before_dlopen
	NS_HANDLER callmon_ns_sym_handler, callmon_before_dlsym

/* dlclose: a plain C wrapper (it does not look at its caller) given the real function. */
	.type	callmon_ns_close_handler, @function
callmon_ns_close_handler:
	.cfi_startproc
	movq	%r11, %rsi
	jmp	callmon_dlclose_with
	.cfi_endproc
	.size	callmon_ns_close_handler, .-callmon_ns_close_handler

/* NS_SET kind, handler: kNsDlSlots (16) trampolines for table column `kind` (0 dlopen,
 * 1 dlmopen, 2 dlsym, 3 dlclose), 16 bytes each, from the label callmon_ns_tramps_KIND. */
.macro	NS_SET kind, handler
	.balign	16
	.globl	callmon_ns_tramps_\kind
	.hidden	callmon_ns_tramps_\kind
callmon_ns_tramps_\kind:
	.irp	i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.balign	16
	.cfi_startproc
	movq	callmon_ns_dl_real + 8 * (\kind * 16 + \i)(%rip), %r11
	jmp	\handler
	.cfi_endproc
	.endr
.endm

	NS_SET	0, callmon_ns_open_handler
	NS_SET	1, callmon_ns_open_handler
	NS_SET	2, callmon_ns_sym_handler
	NS_SET	3, callmon_ns_close_handler

	.section .note.GNU-stack,"",@progbits
