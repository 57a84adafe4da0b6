/* The library-call probe's calibration path for x86-64 (calibration_libcall.cpp;
 * docs/runtime.md, "Library calls' own cost"). A program's library call goes
 *     call f@plt -> jmp *slot(%rip) -> stub: lea data(%rip),%r11; jmp *entry(%rip)
 *     -> callmon_libcall_entry -> callmon_libcall_call -> the function -> ret to the
 *     return point -> callmon_sled_return (or, for an attach, a jump to the function whose
 *     return goes to callmon_pg_return)
 * The calibration's parents (calibration_probe*.cpp) call callmon_calib_libcall_plt
 * directly, as a program calls a PLT entry, and the rest is the same instructions: a slot
 * holding the stub's address, the stub's two instructions (got_stub.cpp's layout, here in
 * the runtime's own text rather than a page of its own), and its data {fn, target}, both
 * the empty uninstrumented leaf callmon_calibration_plain_leaf (calibration_plain.cpp).
 */
	.text
	.globl	callmon_calib_libcall_plt
	.hidden	callmon_calib_libcall_plt
	.type	callmon_calib_libcall_plt, @function
	.p2align 4
callmon_calib_libcall_plt:
	.cfi_startproc
	jmp	*callmon_calib_libcall_slot(%rip)
	.cfi_endproc
	.size	callmon_calib_libcall_plt, .-callmon_calib_libcall_plt

	.p2align 4
	.type	callmon_calib_libcall_stub, @function
callmon_calib_libcall_stub:
	.cfi_startproc
	leaq	callmon_calib_libcall_data(%rip), %r11
	jmp	*callmon_calib_libcall_entry_ptr(%rip)
	.cfi_endproc
	.size	callmon_calib_libcall_stub, .-callmon_calib_libcall_stub

	.section .data.rel.ro.local,"aw"
	.p2align 3
callmon_calib_libcall_slot:
	.quad	callmon_calib_libcall_stub
callmon_calib_libcall_entry_ptr:
	.quad	callmon_libcall_entry
	.p2align 4
callmon_calib_libcall_data:
	.quad	callmon_calibration_plain_leaf	/* LibcallData::fn */
	.quad	callmon_calibration_plain_leaf	/* LibcallData::target */

	.section .note.GNU-stack,"",@progbits
