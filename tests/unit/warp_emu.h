/*
 * Runs the device code of one warp on the host, unchanged: 32 lanes in lock step, each warp
 * intrinsic an exchange of every lane's value between two barriers, so the code must call it with
 * every lane, as the real __*_sync intrinsics with a full mask require.  The lanes are coroutines
 * on one thread (emu_switch.h), switched at each barrier in lane order: deterministic, and cheap even
 * on a loaded machine or under a sanitizer.  For warp-level pieces of the CUDA kernels that can be
 * checked without a GPU (C++, included before the device header).
 */
#ifndef FLASHC_TESTS_UNIT_WARP_EMU_H
#define FLASHC_TESTS_UNIT_WARP_EMU_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu_switch.h"

#define __device__
#define __host__
#define __forceinline__ inline

namespace warp_emu {

constexpr size_t kStack = 256 * 1024;

struct Warp {
    emu_switch::Context sched, lane[32];
    uint64_t slot[32];
    int current;
    bool finished[32];
    void *fn;
    void (*call)(void *fn, int lane);
};
inline Warp *&active()
{
    static Warp *w;
    return w;
}
inline int lane_id() { return active()->current; }

/* Every lane reaches this point before any goes on. */
inline void barrier()
{
    Warp *w = active();
    emu_switch::leave(&w->lane[w->current], &w->sched);
}

/* Every lane publishes v; returns what lane src published. */
template <class T> inline T swap_with(T v, int src)
{
    static_assert(sizeof(T) <= 8, "one slot per lane");
    Warp *w = active();
    uint64_t raw = 0;
    memcpy(&raw, &v, sizeof v);
    w->slot[lane_id()] = raw;
    barrier();
    T out;
    raw = w->slot[src];
    memcpy(&out, &raw, sizeof out);
    barrier();
    return out;
}

[[noreturn]] inline void lane_entry(void *)
{
    emu_switch::started();
    Warp *w = active();
    const int l = w->current;
    w->call(w->fn, l);
    w->finished[l] = true;
    emu_switch::exit_to(&w->lane[l], &w->sched);
}

/* Runs f(lane) for the 32 lanes and returns when all have. */
template <class F> inline void run_warp(F f)
{
    Warp w;
    memset(&w, 0, sizeof w);
    w.fn = &f;
    w.call = [](void *fn, int lane) { (*static_cast<F *>(fn))(lane); };
    char *stacks = static_cast<char *>(malloc(32 * kStack));
    if (!stacks)
        abort();
    active() = &w;
    for (int l = 0; l < 32; l++)
        emu_switch::make(&w.lane[l], stacks + l * kStack, kStack, lane_entry, nullptr);
    for (bool any = true; any;) { /* one round: each lane from its last barrier to its next */
        any = false;
        for (int l = 0; l < 32; l++)
            if (!w.finished[l]) {
                w.current = l;
                emu_switch::enter(&w.sched, &w.lane[l]);
                any = true;
            }
    }
    active() = nullptr;
    free(stacks);
}

} // namespace warp_emu

template <class T> inline T __shfl_sync(unsigned, T v, int src) { return warp_emu::swap_with(v, src & 31); }
template <class T> inline T __shfl_up_sync(unsigned, T v, unsigned d)
{
    const int me = warp_emu::lane_id(), src = me - (int)d;
    return warp_emu::swap_with(v, src < 0 ? me : src); /* lanes below d keep their own value */
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) { return warp_emu::swap_with(v, (warp_emu::lane_id() ^ m) & 31); }
inline unsigned __ballot_sync(unsigned, int pred)
{
    warp_emu::Warp *w = warp_emu::active();
    w->slot[warp_emu::lane_id()] = pred != 0;
    warp_emu::barrier();
    unsigned mask = 0;
    for (int l = 0; l < 32; l++)
        mask |= (unsigned)w->slot[l] << l;
    warp_emu::barrier();
    return mask;
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline void __syncwarp(unsigned = 0xffffffffu) { warp_emu::barrier(); }

#endif
