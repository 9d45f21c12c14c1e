/*
 * Runs the device code of one warp on the host, unchanged: 32 threads in lock step, each warp
 * intrinsic an exchange of every lane's value through a barrier (so the code must call it with
 * every lane, as the real __*_sync intrinsics with a full mask require).  For warp-level pieces of
 * the CUDA kernels that can be checked without a GPU (C++, included before the device header).
 */
#ifndef FLASHC_TESTS_UNIT_WARP_EMU_H
#define FLASHC_TESTS_UNIT_WARP_EMU_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define __device__
#define __host__
#define __forceinline__ inline

namespace warp_emu {

struct Exchange {
    pthread_barrier_t bar;
    uint64_t slot[32];
};
inline Exchange &exchange_area()
{
    static Exchange ex;
    return ex;
}
inline int &lane_id()
{
    static thread_local int lane;
    return lane;
}

/* Every lane publishes v; returns what lane src published. */
template <class T> inline T swap_with(T v, int src)
{
    static_assert(sizeof(T) <= 8, "one slot per lane");
    Exchange &ex = exchange_area();
    uint64_t raw = 0;
    memcpy(&raw, &v, sizeof v);
    ex.slot[lane_id()] = raw;
    pthread_barrier_wait(&ex.bar);
    T out;
    raw = ex.slot[src];
    memcpy(&out, &raw, sizeof out);
    pthread_barrier_wait(&ex.bar);
    return out;
}

/* Runs f(lane) on 32 threads, one per lane, and waits for them. */
template <class F> inline void run_warp(F f)
{
    Exchange &ex = exchange_area();
    pthread_barrier_init(&ex.bar, nullptr, 32);
    struct Arg {
        F *f;
        int lane;
    } args[32];
    pthread_t th[32];
    for (int l = 0; l < 32; l++) {
        args[l] = Arg{&f, l};
        pthread_create(
            &th[l], nullptr,
            [](void *p) -> void * {
                Arg *a = static_cast<Arg *>(p);
                lane_id() = a->lane;
                (*a->f)(a->lane);
                return nullptr;
            },
            &args[l]);
    }
    for (int l = 0; l < 32; l++)
        pthread_join(th[l], nullptr);
    pthread_barrier_destroy(&ex.bar);
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
    unsigned mask = 0;
    for (int l = 0; l < 32; l++)
        mask |= (unsigned)(warp_emu::swap_with(pred != 0, l) ? 1u : 0u) << l;
    return mask;
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline void __syncwarp(unsigned = 0xffffffffu) { pthread_barrier_wait(&warp_emu::exchange_area().bar); }

#endif
