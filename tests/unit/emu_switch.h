/*
 * The emulators' context switches (cta_emu.h, warp_emu.h): a scheduler on the host thread's stack
 * resumes coroutines on stacks of their own, and they yield back to it.
 *
 * A switch saves the callee-saved registers on the stack it leaves and takes them from the stack
 * it enters (emu_switch_swap below, x86-64 and AArch64): nothing else needs to survive a function
 * call.  glibc's swapcontext also saves and restores the signal mask — a system call at every
 * switch — which was 90 % of an emulated kernel's time; an emulated backward makes millions of
 * switches (every warp intrinsic is two).
 *
 * Under AddressSanitizer every switch is announced through the sanitizer's fiber interface (which
 * stack is entered, and back), so that it keeps its shadow of each stack straight.
 */
#ifndef FLASHC_TESTS_UNIT_EMU_SWITCH_H
#define FLASHC_TESTS_UNIT_EMU_SWITCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define EMU_SWITCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_SWITCH_ASAN 1
#endif
#endif

#ifdef EMU_SWITCH_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
}
#endif

/* emu_switch_swap(save, load): pushes the callee-saved registers (and the floating-point control
 * words), stores the stack pointer to *save, continues on the stack `load` and pops what a
 * previous swap (or emu_switch::make) left there.  emu_switch_start: a new coroutine's first
 * return address; calls fn(arg) with fn and arg from the first two callee-saved slots.  Every
 * translation unit that includes this defines both, weak (the linker keeps one) and hidden (so
 * that their addresses are formed directly: a GOT entry of a local symbol lost its offset in the
 * section on AArch64). */
extern "C" __attribute__((visibility("hidden"))) void emu_switch_swap(void **save, void *load);
extern "C" __attribute__((visibility("hidden"))) void emu_switch_start();
#if defined(__x86_64__)
/* stack from `load` up: fnstcw word (8), mxcsr (8), r15, r14, r13, r12, rbx, rbp, return address */
__asm__(".text\n"
        ".p2align 4\n"
        ".weak emu_switch_swap\n"
        ".hidden emu_switch_swap\n"
        ".type emu_switch_swap,@function\n"
        "emu_switch_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $16, %rsp\n  stmxcsr 8(%rsp)\n  fnstcw (%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr 8(%rsp)\n  fldcw (%rsp)\n  addq $16, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size emu_switch_swap, .-emu_switch_swap\n"
        ".p2align 4\n"
        ".weak emu_switch_start\n"
        ".hidden emu_switch_start\n"
        ".type emu_switch_start,@function\n"
        "emu_switch_start:\n" /* rsp is 16-byte aligned here, as before a call */
        "  movq %r12, %rdi\n  call *%rbx\n  ud2\n"
        ".size emu_switch_start, .-emu_switch_start\n");
#elif defined(__aarch64__)
/* stack from `load` up: x19 … x28, x29, x30 (the return address), d8 … d15, fpcr, padding */
__asm__(".text\n"
        ".p2align 4\n"
        ".weak emu_switch_swap\n"
        ".hidden emu_switch_swap\n"
        ".type emu_switch_swap,%function\n"
        "emu_switch_swap:\n"
        "  sub sp, sp, #176\n"
        "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
        "  mrs x9, fpcr\n  str x9, [sp, #160]\n"
        "  mov x9, sp\n  str x9, [x0]\n"
        "  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n  ldp d14, d15, [sp, #144]\n"
        "  ldr x9, [sp, #160]\n  msr fpcr, x9\n"
        "  add sp, sp, #176\n"
        "  ret\n"
        ".size emu_switch_swap, .-emu_switch_swap\n"
        ".p2align 4\n"
        ".weak emu_switch_start\n"
        ".hidden emu_switch_start\n"
        ".type emu_switch_start,%function\n"
        "emu_switch_start:\n"
        "  mov x0, x20\n  blr x19\n  brk #0\n"
        ".size emu_switch_start, .-emu_switch_start\n");
#else
#error "the GPU kernel emulators switch contexts on x86-64 and AArch64 only (tests/unit/CMakeLists.txt builds them there)"
#endif

namespace emu_switch {

/* A suspended context: its stack pointer, and for a coroutine the stack it runs on. */
struct Context {
    void *sp;
    void *stack;
    size_t size;
};

/* A coroutine that will run fn(arg) on [stack, stack + size) when first entered; fn never returns
 * (it ends with exit_to). */
inline void make(Context *c, void *stack, size_t size, void (*fn)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    void **slot;
#if defined(__x86_64__)
    top -= 16;                               /* emu_switch_start runs on a 16-byte aligned stack */
    slot = reinterpret_cast<void **>(top) - 9; /* the nine words emu_switch_swap pops */
    uint32_t mxcsr;
    uint16_t fpu_cw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fpu_cw));
    slot[0] = reinterpret_cast<void *>((uintptr_t)fpu_cw), slot[1] = reinterpret_cast<void *>((uintptr_t)mxcsr);
    slot[2] = slot[3] = slot[4] = nullptr;                       /* r15, r14, r13 */
    slot[5] = arg, slot[6] = reinterpret_cast<void *>(fn);       /* r12, rbx */
    slot[7] = nullptr, slot[8] = reinterpret_cast<void *>(&emu_switch_start); /* rbp, return address */
#else
    slot = reinterpret_cast<void **>(top) - 22; /* 176 bytes */
    for (int i = 0; i < 22; i++)
        slot[i] = nullptr;
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    slot[0] = reinterpret_cast<void *>(fn), slot[1] = arg;                   /* x19, x20 */
    slot[11] = reinterpret_cast<void *>(&emu_switch_start);                  /* x30 */
    slot[20] = reinterpret_cast<void *>((uintptr_t)fpcr);
#endif
    c->sp = slot, c->stack = stack, c->size = size;
}

#ifdef EMU_SWITCH_ASAN
/* The scheduler's stack, as the first switch into a coroutine reports it (started). */
struct Host {
    const void *bottom;
    size_t size;
};
inline Host &host()
{
    static Host h;
    return h;
}

/* from → to, announcing the stack [bottom, bottom + size) that `to` runs on. */
inline void announced_swap(Context *from, Context *to, const void *bottom, size_t size)
{
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, bottom, size);
    emu_switch_swap(&from->sp, to->sp);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
}
#endif

/* Scheduler → coroutine `to`; returns when the coroutine yields or ends. */
inline void enter(Context *from, Context *to)
{
#ifdef EMU_SWITCH_ASAN
    announced_swap(from, to, to->stack, to->size);
#else
    emu_switch_swap(&from->sp, to->sp);
#endif
}

/* First thing a coroutine does on its own stack: the first switch reports the scheduler's stack. */
inline void started()
{
#ifdef EMU_SWITCH_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &host().bottom, &host().size);
#endif
}

/* Coroutine → scheduler; returns when the scheduler resumes it. */
inline void leave(Context *from, Context *to)
{
#ifdef EMU_SWITCH_ASAN
    announced_swap(from, to, host().bottom, host().size);
#else
    emu_switch_swap(&from->sp, to->sp);
#endif
}

/* Coroutine `self`'s last switch, to the scheduler `to`: it is never resumed (its stack may be
 * reused). */
[[noreturn]] inline void exit_to(Context *self, Context *to)
{
    void *gone;
#ifdef EMU_SWITCH_ASAN
    /* The frames from here to the stack's top never return, so the sanitizer never clears their
     * redzones: a coroutine made later on this stack would trip over them. */
    const char *top = static_cast<const char *>(self->stack) + self->size;
    const char *low = static_cast<const char *>(__builtin_frame_address(0)) - 4096;
    if (low < static_cast<const char *>(self->stack))
        low = static_cast<const char *>(self->stack);
    __asan_unpoison_memory_region(low, (size_t)(top - low));
    __sanitizer_start_switch_fiber(nullptr, host().bottom, host().size); /* null: this stack's fake frames go */
#else
    (void)self;
#endif
    emu_switch_swap(&gone, to->sp);
    abort();
}

} // namespace emu_switch

#endif /* FLASHC_TESTS_UNIT_EMU_SWITCH_H */
