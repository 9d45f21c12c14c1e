/*
 * The emulators' context switches (cta_emu.h, warp_emu.h): a scheduler on the host thread's stack
 * resumes coroutines on stacks of their own, and they yield back to it.
 *
 * Under AddressSanitizer the intercepted swapcontext clears the shadow of the whole stack of the
 * context it enters, at every switch: with the emulators' 256–512 KB stacks that is 32–64 KB of
 * shadow written each time a thread resumes, and an emulated run with many warp exchanges (the
 * CUDA backward's non-finite scan, a warp per row) then took more than ctest's 600 s.  There the
 * switches go to libc's own swapcontext instead, announced through the sanitizer's fiber interface
 * (which stack is entered, and back), what the interceptor's clearing stands in for.
 */
#ifndef FLASHC_TESTS_UNIT_EMU_SWITCH_H
#define FLASHC_TESTS_UNIT_EMU_SWITCH_H

#include <stddef.h>
#include <stdlib.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define EMU_SWITCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_SWITCH_ASAN 1
#endif
#endif

#ifdef EMU_SWITCH_ASAN
#include <dlfcn.h>
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
}
#endif

namespace emu_switch {

#ifdef EMU_SWITCH_ASAN
/* libc's swapcontext, not the sanitizer's interceptor (which the program's own calls reach). */
inline int raw_swap(ucontext_t *from, const ucontext_t *to)
{
    using swap_fn = int (*)(ucontext_t *, const ucontext_t *);
    static const swap_fn libc_swap = [] {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        void *fn = libc ? dlsym(libc, "swapcontext") : nullptr;
        if (!fn)
            abort();
        return reinterpret_cast<swap_fn>(fn);
    }();
    return libc_swap(from, to);
}

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
inline void announced_swap(ucontext_t *from, ucontext_t *to, const void *bottom, size_t size)
{
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, bottom, size);
    raw_swap(from, to);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
}
#endif

/* Scheduler → coroutine `to` (made with its uc_stack); returns when the coroutine yields or ends. */
inline void enter(ucontext_t *from, ucontext_t *to)
{
#ifdef EMU_SWITCH_ASAN
    announced_swap(from, to, to->uc_stack.ss_sp, to->uc_stack.ss_size);
#else
    swapcontext(from, to);
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
inline void leave(ucontext_t *from, ucontext_t *to)
{
#ifdef EMU_SWITCH_ASAN
    announced_swap(from, to, host().bottom, host().size);
#else
    swapcontext(from, to);
#endif
}

/* Last thing a coroutine does before its function returns to the scheduler (uc_link). */
inline void finishing()
{
#ifdef EMU_SWITCH_ASAN
    __sanitizer_start_switch_fiber(nullptr, host().bottom, host().size);
#endif
}

} // namespace emu_switch

#endif /* FLASHC_TESTS_UNIT_EMU_SWITCH_H */
