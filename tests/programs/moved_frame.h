/* moved_frame and call_moved, in assembly (tests/programs/patch_prologues.c,
 * tests/attach/attach_moved.c): a function that builds its frame in memory its caller gave
 * and returns from there, as libffi's ffi_call_unix64 does under every call of Python's
 * ctypes. moved_frame copies its return address into that frame first, so its `ret` is
 * not from the slot its call left; it calls CALLEE(x) on the memory below the frame and
 * adds 1000. call_moved(x) gives it 32 KiB of its own stack and restores its stack pointer
 * from its frame pointer, as ffi_call_int does. CALLEE: a C identifier. */
#define MOVED_FRAME_STR2(x) #x
#define MOVED_FRAME_STR(x) MOVED_FRAME_STR2(x)
#define MOVED_FRAME_ASM(CALLEE)                                                         \
  __asm__(".text\n"                                                                     \
          ".globl moved_frame\n.type moved_frame,@function\n.p2align 4\n"               \
          "moved_frame:\n" /* long moved_frame(long *area, long x) */                   \
          "  .cfi_startproc\n"                                                          \
          "  movq (%rsp), %r10\n" /* its return address, into the frame it builds */    \
          "  leaq 16(%rdi), %rax\n"                                                     \
          "  movq %rbp, (%rax)\n"                                                       \
          "  movq %r10, 8(%rax)\n"                                                      \
          "  movq %rax, %rbp\n"                                                         \
          "  .cfi_def_cfa %rbp, 16\n"                                                   \
          "  .cfi_offset %rbp, -16\n"                                                   \
          "  movq %rdi, %rsp\n" /* its stack: the area, below that frame */             \
          "  movq %rsi, %rdi\n"                                                         \
          "  call " MOVED_FRAME_STR(CALLEE) "\n"                                        \
          "  addq $1000, %rax\n"                                                        \
          "  movq %rbp, %rsp\n"                                                         \
          "  popq %rbp\n"                                                               \
          "  .cfi_def_cfa %rsp, 8\n"                                                    \
          "  ret\n" /* from area + 24: not the slot the call left */                    \
          "  .cfi_endproc\n"                                                            \
          ".size moved_frame, .-moved_frame\n"                                          \
          ".globl call_moved\n.type call_moved,@function\n.p2align 4\n"                 \
          "call_moved:\n" /* long call_moved(long x) */                                 \
          "  .cfi_startproc\n"                                                          \
          "  push %rbp\n"                                                               \
          "  .cfi_def_cfa_offset 16\n"                                                  \
          "  .cfi_offset %rbp, -16\n"                                                   \
          "  mov %rsp, %rbp\n"                                                          \
          "  .cfi_def_cfa_register %rbp\n"                                              \
          "  sub $65536, %rsp\n"                                                        \
          "  mov %rdi, %rsi\n"                                                          \
          "  lea 32768(%rsp), %rdi\n" /* the area: stack below, frame above */          \
          "  call moved_frame\n"                                                        \
          "  leave\n" /* moved_frame's stack pointer at its return is not this one's */ \
          "  .cfi_def_cfa %rsp, 8\n"                                                    \
          "  ret\n"                                                                     \
          "  .cfi_endproc\n"                                                            \
          ".size call_moved, .-call_moved\n")
