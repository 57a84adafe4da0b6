/* The -pg -mfentry entry hook in stages, for bench/hot_path_breakdown.py (see
 * hot_path_cyg_stubs.c for the idea). Built as a shared library with -DSTAGE=N and preloaded
 * into bench/fib.c built with -pg -mfentry.
 *   STAGE 0: __fentry__ returns at once
 *   STAGE 1: + the return hijack of callmon's -pg modes: the function's return address is
 *            kept on a per-thread stack and its slot gets the exit stub's address; the exit
 *            stub takes it back and jumps there (the function's `ret` is then mispredicted:
 *            the return stack buffer expected the caller)
 *   STAGE 2: + one clock read (rdtsc) in the entry and in the exit stub
 * The per-thread stack is a TLS block: the top index at offset 0, the addresses after it.
 */
#ifndef STAGE
#error "build with -DSTAGE=0, 1 or 2"
#endif

        .section .tbss,"awT",@nobits
        .align 8
        .type hp_stack, @object
        .size hp_stack, 8 + 8 * 16384
hp_stack:
        .zero 8 + 8 * 16384
        .section .tbss,"awT",@nobits
        .align 8
        .type hp_ticks, @object
        .size hp_ticks, 8
hp_ticks:
        .zero 8

        .text
        .globl __fentry__
        .type __fentry__, @function
__fentry__:
#if STAGE >= 1
        push %rax                        /* 16(%rsp): into the function; 24(%rsp): its return */
        push %rcx
#if STAGE >= 2
        push %rdx
        rdtsc
        shl $32, %rdx
        or %rdx, %rax
        movq hp_ticks@GOTTPOFF(%rip), %r11
        movq %rax, %fs:(%r11)
        pop %rdx
#endif
        movq hp_stack@GOTTPOFF(%rip), %r11
        movq %fs:(%r11), %rax
        movq 24(%rsp), %rcx
        movq %rcx, %fs:8(%r11,%rax,8)
        incq %rax
        andq $16383, %rax
        movq %rax, %fs:(%r11)
        leaq hp_exit(%rip), %rcx
        movq %rcx, 24(%rsp)
        pop %rcx
        pop %rax
#endif
        ret
        .size __fentry__, .-__fentry__

        .type hp_exit, @function
hp_exit:
        push %rax                        /* the function's return values */
        push %rdx
#if STAGE >= 2
        rdtsc
        shl $32, %rdx
        or %rdx, %rax
        movq hp_ticks@GOTTPOFF(%rip), %r11
        movq %rax, %fs:(%r11)
#endif
        movq hp_stack@GOTTPOFF(%rip), %r11
        movq %fs:(%r11), %rax
        decq %rax
        andq $16383, %rax
        movq %rax, %fs:(%r11)
        movq %fs:8(%r11,%rax,8), %r11
        pop %rdx
        pop %rax
        jmp *%r11
        .size hp_exit, .-hp_exit

        .section .note.GNU-stack,"",@progbits
