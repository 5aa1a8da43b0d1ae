// The fibers' context switch (x86-64 System V). A fiber's saved context is its stack pointer; the callee-saved
// registers live on its stack. Far cheaper than swapcontext, which makes a signal-mask syscall per switch.
    .text

// void emu_fiber_switch(void** save_sp, void* to_sp): saves the caller's context to *save_sp, resumes to_sp.
    .globl emu_fiber_switch
    .hidden emu_fiber_switch
    .type emu_fiber_switch, @function
emu_fiber_switch:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    // Not `ret`: the return would go to another context than the matching call, a sure return-stack miss.
    popq %rcx
    jmp *%rcx
    .cfi_endproc
    .size emu_fiber_switch, .-emu_fiber_switch

// First code of a new fiber: calls r13(r12). The entry never returns; the CFI marks the end of the stack.
    .globl emu_fiber_start
    .hidden emu_fiber_start
    .type emu_fiber_start, @function
emu_fiber_start:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    callq *%r13
    ud2
    .cfi_endproc
    .size emu_fiber_start, .-emu_fiber_start

    .section .note.GNU-stack,"",@progbits
