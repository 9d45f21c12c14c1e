/*
 * Runs a CUDA kernel's device code on the host, unchanged, one CTA at a time: every thread a
 * coroutine (emu_switch.h) on one host thread, switched at barriers — a warp intrinsic is an exchange
 * among the warp's 32 lanes between two warp barriers, __syncthreads a barrier of the whole CTA
 * (a thread that reaches one barrier while others of its warp wait at the other, or that exits
 * while others wait, is a deadlock: reported, then abort).  The sm_80 vocabulary of src/cuda/ptx.cuh
 * is spelled out from the PTX ISA's definitions, not from the kernels: ldmatrix (x4, .trans)
 * hands each lane its fragment words from the rows the 32 lanes address, mma.sync m16n8k16 forms
 * A (16×16), B (16×8) and D from the lanes' fragments (m16n8k8 .tf32 likewise, with
 * cvt.rna.tf32.f32's rounding; m16n8k32 on signed bytes, exact in s32), and cp.async copies are queued per thread
 * and made only when a cp.async.wait_group retires their group, so a kernel that reads a tile
 * before waiting for it reads stale data here too.  fp16 / bf16 are the core's conversions
 * (core/half.h).  Include this before the device headers; it defines FC_CUDA_PTX_CUH, so ptx.cuh
 * is replaced.  Dynamic shared memory is cta_emu_smem (0xFF bytes, NaN in every float type, before
 * every CTA: a kernel that reads it before writing it poisons its results); a kernel's static
 * __shared__ variables are thread_local — one copy for the CTA's coroutines, which share the host
 * thread — and keep their bytes from CTA to CTA.  CTAs run one at a time and a coroutine runs
 * until it waits, so every atomic is a plain read-modify-write and every fence orders nothing that
 * was not already in order; a CTA that waits for another CTA of its grid can not be run here.
 */
#ifndef FLASHC_TESTS_UNIT_CTA_EMU_H
#define FLASHC_TESTS_UNIT_CTA_EMU_H

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <deque>
#include <vector>

extern "C" {
#include "core/half.h"
}
#include "emu_switch.h"
#include "flashc.h"

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__ thread_local
#define __align__(n) /* the definition, cta_emu_smem, is aligned */

struct int4 {
    int x, y, z, w;
};
struct uint4 {
    unsigned x, y, z, w;
};
struct int2 {
    int x, y;
};
inline int2 make_int2(int x, int y) { return int2{x, y}; }
struct float2 {
    float x, y;
};
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline float2 make_float2(float x, float y) { return float2{x, y}; }
struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct cta_emu_dim3 {
    unsigned x, y, z;
};

/* The CTA's dynamic shared memory: an array cta_emu_smem of the kernels' element type in their
 * namespace, where their block-scope `extern __shared__ T smem_raw[]` looks (CTA_EMU_SMEM(T) inside
 * `namespace ns { }` defines it; fc_cuda's is here).  Aligned to a swizzle period (cta_emu_sm90.h).
 * Its initialiser is not a constant expression on purpose: a thread_local with a dynamic
 * initialiser has a TLS init function in every compiler's ABI, and gcc calls that function,
 * unchecked, from a template's block-scope extern declaration. */
constexpr size_t kCtaEmuSmem = 232448;
namespace cta_emu {
inline unsigned char poison_byte() { return 0xFF; }
}
#define CTA_EMU_SMEM(T) alignas(1024) thread_local T cta_emu_smem[kCtaEmuSmem] = {(T)cta_emu::poison_byte()}
namespace fc_cuda {
CTA_EMU_SMEM(unsigned char);
}
#define smem_raw cta_emu_smem

namespace cta_emu {

constexpr size_t kStack = 512 * 1024;
/* WAIT_UNTIL: blocked until a condition holds (cta_emu_sm90.h's mbarriers, named barriers),
 * checked between rounds; WAIT_IDLE likewise, but only once no other thread can run (an
 * asynchronous unit's work done at the latest time the kernel leaves it: cta_emu_sm90.h's wgmma). */
enum State { RUN, WAIT_WARP, WAIT_CTA, WAIT_UNTIL, WAIT_IDLE, DONE };

/* A thread's queued cp.async copies: committed groups, oldest first, and the open one. */
struct Copy {
    void *dst;
    const void *src;
    int bytes;
};
struct Copies {
    std::deque<std::vector<Copy>> groups;
    std::vector<Copy> open;
};

struct Cta {
    emu_switch::Context sched;
    std::vector<emu_switch::Context> th;
    std::vector<State> state;
    std::vector<Copies> copies;
    std::vector<uint64_t> xchg; /* per thread: 8 words published to its warp */
    std::vector<int> vote[2];   /* per thread: its predicate of a __syncthreads_or/and, by the parity of its calls */
    std::vector<unsigned> votes_cast;
    std::vector<bool (*)(const void *)> until; /* per thread in WAIT_UNTIL: its condition and argument */
    std::vector<const void *> until_arg;
    int n, current;
    cta_emu_dim3 block;
    void *fn;
    void (*call)(void *fn);
};
inline Cta *&active()
{
    static Cta *c;
    return c;
}
inline int tid() { return active()->current; }
inline int lane() { return tid() % 32; }

inline void wait(State s)
{
    Cta *c = active();
    c->state[c->current] = s;
    emu_switch::leave(&c->th[c->current], &c->sched);
}

/* Blocks the thread until ready(arg) holds (at once if it does; idle: only when nothing else can run). */
inline void wait_until(bool (*ready)(const void *), const void *arg, bool idle = false)
{
    Cta *c = active();
    if (!idle && ready(arg))
        return;
    c->until[c->current] = ready, c->until_arg[c->current] = arg;
    wait(idle ? WAIT_IDLE : WAIT_UNTIL);
}

/* Lets every other runnable thread run first (a scheduling point). */
inline void yield()
{
    wait_until([](const void *) { return true; }, nullptr, true);
}

/* Every lane publishes up to 8 words; after the call, peek(l, k) reads lane l's word k until the
 * closing barrier (done()). */
inline void publish(const uint64_t *w, int k)
{
    Cta *c = active();
    memcpy(&c->xchg[(size_t)c->current * 8], w, (size_t)k * 8);
    wait(WAIT_WARP);
}
inline uint64_t peek(int l, int k)
{
    Cta *c = active();
    return c->xchg[(size_t)((c->current / 32) * 32 + l) * 8 + k];
}
inline void done() { wait(WAIT_WARP); }

template <class T> __attribute__((noinline)) T swap_with(T v, int src)
{
    uint64_t raw = 0;
    memcpy(&raw, &v, sizeof v);
    publish(&raw, 1);
    raw = peek(src, 0);
    done();
    T out;
    memcpy(&out, &raw, sizeof out);
    return out;
}

[[noreturn]] inline void entry(void *)
{
    emu_switch::started();
    Cta *c = active();
    c->call(c->fn);
    c->state[c->current] = DONE;
    emu_switch::exit_to(&c->th[c->current], &c->sched);
}

/* Releases the barriers every participant has reached; false when nothing can run (finished or
 * deadlocked: *dead says which). */
inline bool release(Cta *c, bool *dead)
{
    bool any = false, all_done = true, all_cta = true;
    for (int t = 0; t < c->n; t++) {
        all_done = all_done && c->state[t] == DONE;
        all_cta = all_cta && c->state[t] == WAIT_CTA;
    }
    if (all_cta) {
        for (int t = 0; t < c->n; t++)
            c->state[t] = RUN;
        return true;
    }
    for (int t = 0; t < c->n; t++)
        if (c->state[t] == WAIT_UNTIL && c->until[t](c->until_arg[t]))
            c->state[t] = RUN, any = true;
    for (int w = 0; w < c->n / 32; w++) {
        bool all = true;
        for (int l = 0; l < 32; l++)
            all = all && c->state[w * 32 + l] == WAIT_WARP;
        if (all) {
            for (int l = 0; l < 32; l++)
                c->state[w * 32 + l] = RUN;
            any = true;
        }
    }
    bool idle_turn = !any; /* nothing else moves: the idle waiters' turn */
    for (int t = 0; idle_turn && t < c->n; t++)
        if (c->state[t] == WAIT_IDLE && c->until[t](c->until_arg[t]))
            c->state[t] = RUN, any = true;
    *dead = !any && !all_done;
    return any;
}

/* The order in which a round runs the runnable threads: by index, or (set) highest first — a
 * second schedule, under which a thread that skips a wait runs before the one it should wait for. */
inline bool &reverse_order()
{
    static bool r;
    return r;
}

/* reverse_order() for a scope, restored after it. */
struct OrderScope {
    bool was;
    explicit OrderScope(bool reverse) : was(reverse_order()) { reverse_order() = reverse; }
    ~OrderScope() { reverse_order() = was; }
};

/* Runs f() as every thread of one CTA of `threads` (a multiple of 32) with block index blk. */
template <class F> inline void run_cta(int threads, cta_emu_dim3 blk, F f)
{
    Cta c;
    c.n = threads, c.block = blk, c.current = 0;
    c.th.resize(threads);
    c.state.assign(threads, RUN);
    c.copies.resize(threads);
    c.xchg.assign((size_t)threads * 8, 0);
    c.vote[0].assign(threads, 0), c.vote[1].assign(threads, 0), c.votes_cast.assign(threads, 0);
    c.until.assign(threads, nullptr), c.until_arg.assign(threads, nullptr);
    c.fn = &f;
    c.call = [](void *fn) { (*static_cast<F *>(fn))(); };
    static std::vector<char> stack_room; /* kept for the next CTA: mapping it anew costs more than the run */
    if (stack_room.size() < (size_t)threads * kStack)
        stack_room.resize((size_t)threads * kStack);
    memset(fc_cuda::cta_emu_smem, 0xFF, sizeof fc_cuda::cta_emu_smem); /* NaN everywhere: nothing may be read unwritten */
    active() = &c;
    for (int t = 0; t < threads; t++)
        emu_switch::make(&c.th[t], stack_room.data() + (size_t)t * kStack, kStack, entry, nullptr);
    for (bool dead = false;;) {
        for (int x = 0; x < threads; x++) {
            const int t = reverse_order() ? threads - 1 - x : x;
            if (c.state[t] == RUN) {
                c.current = t;
                emu_switch::enter(&c.sched, &c.th[t]);
            }
        }
        if (!release(&c, &dead)) {
            if (dead) {
                fprintf(stderr, "cta_emu: deadlock in block (%u, %u): threads wait at different barriers\n", blk.x, blk.y);
                for (int t = 0; t < threads; t++)
                    if (c.state[t] != DONE)
                        fprintf(stderr, "  thread %d: %s\n", t,
                                c.state[t] == WAIT_WARP ? "warp barrier" : c.state[t] == WAIT_CTA ? "CTA barrier" : "a condition (mbarrier, named barrier, warpgroup, registers)");
                abort();
            }
            break;
        }
    }
    active() = nullptr;
}

inline cta_emu_dim3 thread_idx() { return cta_emu_dim3{(unsigned)tid(), 0, 0}; }
inline cta_emu_dim3 block_idx() { return active()->block; }

/* cp.async: queued; retired groups copy `bytes` and zero the rest of the 16. */
inline void retire(Copies &q, size_t keep)
{
    while (q.groups.size() > keep) {
        for (const Copy &x : q.groups.front()) {
            if (x.bytes)
                memcpy(x.dst, x.src, (size_t)x.bytes);
            memset(static_cast<char *>(x.dst) + x.bytes, 0, (size_t)(16 - x.bytes));
        }
        q.groups.pop_front();
    }
}

} // namespace cta_emu

#define threadIdx (cta_emu::thread_idx())
#define blockIdx (cta_emu::block_idx())

inline void __syncthreads() { cta_emu::wait(cta_emu::WAIT_CTA); }
/* __syncthreads_or / _and: a CTA barrier that also reduces the threads' predicates.  A thread can
 * be one such barrier ahead of another that has not yet read the last one's votes, never two, so
 * two vote slots alternate. */
namespace cta_emu {
template <bool OR> inline int sync_vote(int pred)
{
    Cta *c = active();
    const int me = c->current, slot = (int)(c->votes_cast[me]++ & 1u);
    c->vote[slot][me] = pred != 0;
    wait(WAIT_CTA);
    int r = OR ? 0 : 1;
    for (int t = 0; t < c->n; t++)
        r = OR ? (r | c->vote[slot][t]) : (r & c->vote[slot][t]);
    return r;
}
} // namespace cta_emu
inline int __syncthreads_or(int pred) { return cta_emu::sync_vote<true>(pred); }
inline int __syncthreads_and(int pred) { return cta_emu::sync_vote<false>(pred); }
inline void __syncwarp(unsigned = 0xffffffffu) { cta_emu::wait(cta_emu::WAIT_WARP); }
template <class T> inline T __shfl_sync(unsigned, T v, int src) { return cta_emu::swap_with(v, src & 31); }
template <class T> inline T __shfl_up_sync(unsigned, T v, unsigned d)
{
    const int me = cta_emu::lane(), src = me - (int)d;
    return cta_emu::swap_with(v, src < 0 ? me : src);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) { return cta_emu::swap_with(v, (cta_emu::lane() ^ m) & 31); }
inline unsigned __ballot_sync(unsigned, int pred)
{
    const uint64_t w = pred != 0;
    cta_emu::publish(&w, 1);
    unsigned mask = 0;
    for (int l = 0; l < 32; l++)
        mask |= (unsigned)cta_emu::peek(l, 0) << l;
    cta_emu::done();
    return mask;
}
inline bool __all_sync(unsigned, int pred) { return __ballot_sync(0xffffffffu, pred) == 0xffffffffu; }
inline bool __any_sync(unsigned, int pred) { return __ballot_sync(0xffffffffu, pred) != 0; }
inline int __ffs(int x) { return __builtin_ffs(x); }

/* Atomics (shared or global memory alike) and fences: see the file comment. */
/* One read-modify-write: the emulator runs one thread at a time, so every atomic is *p = f(old). */
template <class T, class F> inline T emu_rmw(T *p, F f)
{
    const T old = *p;
    *p = f(old);
    return old;
}
template <class T> inline T atomicAdd(T *p, T v) { return emu_rmw(p, [v](T o) { return o + v; }); }
template <class T> inline T atomicMin(T *p, T v) { return emu_rmw(p, [v](T o) { return v < o ? v : o; }); }
template <class T> inline T atomicMax(T *p, T v) { return emu_rmw(p, [v](T o) { return v > o ? v : o; }); }
template <class T> inline T atomicExch(T *p, T v) { return emu_rmw(p, [v](T) { return v; }); }
template <class T> inline T atomicOr(T *p, T v) { return emu_rmw(p, [v](T o) { return o | v; }); }
template <class T> inline T atomicCAS(T *p, T cmp, T v) { return emu_rmw(p, [cmp, v](T o) { return o == cmp ? v : o; }); }
inline void __threadfence() {}
inline void __nanosleep(unsigned) {}
inline void __trap() { abort(); }
inline void __threadfence_block() {}
inline void __threadfence_system() {}
/* Cache-hinted loads and stores: plain ones. */
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline void __stcg(T *p, T v) { *p = v; }
/* The device min / max of integers and floats. */
template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline float __uint_as_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline uint32_t __float_as_uint(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The 16-bit element types (the storage and conversions the kernels use). */
struct __half {
    uint16_t x;
    __half() = default;
    __half(float f) : x(fc_f32_to_f16_inline(f)) {}
    operator float() const { return fc_f16_to_f32_inline(x); }
};
struct __nv_bfloat16 {
    uint16_t x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : x(fc_f32_to_bf16_inline(f)) {}
    operator float() const { return fc_bf16_to_f32_inline(x); }
};
struct __half2 {
    __half x, y;
};
inline __half __float2half_rn(float f) { return __half(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __half2float(__half h) { return float(h); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline __half __ushort_as_half(unsigned short u)
{
    __half h;
    h.x = u;
    return h;
}
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
/* fp16 a − b rounded once: the fp32 difference of two fp16 values rounds to the same fp16. */
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2{__half(float(a.x) - float(b.x)), __half(float(a.y) - float(b.y))}; }

#define FC_CUDA_PTX_CUH /* src/cuda/ptx.cuh's vocabulary, emulated: */
namespace fc_cuda {

__attribute__((noinline)) inline void cp_async16(void *dst, const void *src, int bytes)
{
    cta_emu::active()->copies[cta_emu::tid()].open.push_back(cta_emu::Copy{dst, src, bytes});
}
inline void cp_async_commit()
{
    cta_emu::Copies &q = cta_emu::active()->copies[cta_emu::tid()];
    q.groups.push_back(q.open);
    q.open.clear();
}
inline void cp_async_wait_all() { cta_emu::retire(cta_emu::active()->copies[cta_emu::tid()], 0); }
template <int N> inline void cp_async_wait() { cta_emu::retire(cta_emu::active()->copies[cta_emu::tid()], N); }

/* ldmatrix .x4: lanes 8j..8j+7 address the rows of matrix j; lane l receives word l%4 of row l/4
 * of each (.trans: the two elements of column l/4 in rows 2(l%4), 2(l%4) + 1). */
template <bool TRANS> __attribute__((noinline)) void ldsm_emu(uint32_t r[4], const void *p)
{
    const uint64_t a = (uint64_t)(uintptr_t)p;
    cta_emu::publish(&a, 1);
    const int l = cta_emu::lane();
    for (int j = 0; j < 4; j++) {
        if (!TRANS) {
            memcpy(&r[j], (const char *)(uintptr_t)cta_emu::peek(8 * j + l / 4, 0) + (l % 4) * 4, 4);
        } else {
            uint16_t lo, hi;
            memcpy(&lo, (const char *)(uintptr_t)cta_emu::peek(8 * j + 2 * (l % 4), 0) + (l / 4) * 2, 2);
            memcpy(&hi, (const char *)(uintptr_t)cta_emu::peek(8 * j + 2 * (l % 4) + 1, 0) + (l / 4) * 2, 2);
            r[j] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    }
    cta_emu::done();
}
inline void ldsm_x4(uint32_t r[4], const void *p) { ldsm_emu<false>(r, p); }
inline void ldsm_x4_t(uint32_t r[4], const void *p) { ldsm_emu<true>(r, p); }

/* max.NaN.f32: NaN if either is, +0 over −0. */
inline float max_nan(float a, float b)
{
    if (a != a || b != b)
        return NAN;
    return a > b || (a == b && !signbit(a)) ? a : b;
}

/* movmatrix .trans: lane l receives the halves (l/4) % 2 of lanes 8(l%4) + l/8 and 8(l%4) + 4 + l/8. */
__attribute__((noinline)) inline uint32_t movm_t(uint32_t x)
{
    const uint64_t w = x;
    cta_emu::publish(&w, 1);
    const int l = cta_emu::lane(), sh = 16 * ((l / 4) % 2);
    const uint32_t lo = (uint32_t)cta_emu::peek(8 * (l % 4) + l / 8, 0), hi = (uint32_t)cta_emu::peek(8 * (l % 4) + 4 + l / 8, 0);
    cta_emu::done();
    return (lo >> sh & 0xFFFFu) | (hi >> sh & 0xFFFFu) << 16;
}

template <typename T> struct Elem;
template <> struct Elem<__half> {
    static constexpr fc_dtype dtype = FC_F16;
    static uint32_t pack(float a, float b) { return (uint32_t)__half(a).x | (uint32_t)__half(b).x << 16; }
    static float load(const void *p) { return float(*(const __half *)p); }
    static float word(uint32_t w, int k) { return fc_f16_to_f32_inline((uint16_t)(w >> (16 * k))); }
};
template <> struct Elem<__nv_bfloat16> {
    static constexpr fc_dtype dtype = FC_BF16;
    static uint32_t pack(float a, float b) { return (uint32_t)__nv_bfloat16(a).x | (uint32_t)__nv_bfloat16(b).x << 16; }
    static float load(const void *p) { return float(*(const __nv_bfloat16 *)p); }
    static float word(uint32_t w, int k) { return fc_bf16_to_f32_inline((uint16_t)(w >> (16 * k))); }
};

/* mma.sync m16n8k16 row.col, fp32 accumulators.  Lane l holds A[l/4 (+8)][2(l%4) (+8) + {0,1}]
 * (a0: rows 0–7 cols 0–7, a1: rows 8–15, a2: cols 8–15, a3: both), B[2(l%4) (+8) + {0,1}][l/4]
 * (b0, b1) and D[l/4 (+8)][2(l%4) + {0,1}]. */
/* (noinline: the kernels' unrolled loops call these hundreds of times) */
template <typename T> __attribute__((noinline)) void mma16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    const uint64_t w[6] = {a[0], a[1], a[2], a[3], b0, b1};
    cta_emu::publish(w, 6);
    /* this lane's rows r, r + 8 of A (from lanes 4r..4r + 3) and columns c, c + 1 of B (from lanes
     * 4c.., 4(c + 1)..) */
    const int l = cta_emu::lane(), r = l / 4, c = 2 * (l % 4);
    float A[2][16], B[2][16];
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < 2; k++) {
            const int x = 4 * r + q;
            A[0][2 * q + k] = Elem<T>::word((uint32_t)cta_emu::peek(x, 0), k);
            A[1][2 * q + k] = Elem<T>::word((uint32_t)cta_emu::peek(x, 1), k);
            A[0][2 * q + 8 + k] = Elem<T>::word((uint32_t)cta_emu::peek(x, 2), k);
            A[1][2 * q + 8 + k] = Elem<T>::word((uint32_t)cta_emu::peek(x, 3), k);
            for (int n = 0; n < 2; n++) {
                const int y = 4 * (c + n) + q;
                B[n][2 * q + k] = Elem<T>::word((uint32_t)cta_emu::peek(y, 4), k);
                B[n][2 * q + 8 + k] = Elem<T>::word((uint32_t)cta_emu::peek(y, 5), k);
            }
        }
    cta_emu::done();
    for (int e = 0; e < 4; e++) {
        float s = d[e];
        for (int k = 0; k < 16; k++)
            s += A[e / 2][k] * B[e % 2][k];
        d[e] = s;
    }
}

template <> struct Elem<float> {
    static constexpr fc_dtype dtype = FC_F32;
    static float load(const void *p) { return *(const float *)p; }
};

/* cvt.rna.tf32.f32: x rounded to 10 fraction bits, to nearest with ties away from zero, in a
 * 32-bit container with the 13 bits below them zero (subnormals round at the same bit; a value
 * past tf32's largest rounds to ±inf).  What a NaN gives is not pinned down; the emulator takes
 * the worst case, its payload cut to the kept bits, so that a NaN whose payload lies only in the
 * low 13 bits comes out as ±inf and a kernel that trusts cvt with NaN fails here. */
inline uint32_t tf32_rna(float x)
{
    const uint32_t u = __float_as_uint(x);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu))
        return u & 0xFFFFE000u;
    return (u + 0x1000u) & 0xFFFFE000u; /* sign–magnitude: adding half a step to the magnitude rounds ties away */
}

/* mma.sync m16n8k8 row.col .f32.tf32.tf32.f32: lane l holds A[l/4][l%4] (a0), A[l/4 + 8][l%4] (a1),
 * A[l/4][l%4 + 4] (a2), A[l/4 + 8][l%4 + 4] (a3), B[l%4][l/4] (b0), B[l%4 + 4][l/4] (b1) and D as
 * m16n8k16's.  An operand word with any of its low 13 bits set is no tf32 value (the kernel must
 * round it, cvt.rna.tf32.f32): its products become NaN here, so a kernel that feeds raw fp32 fails. */
__attribute__((noinline)) inline void mma1688_tf32(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    const uint64_t w[6] = {a[0], a[1], a[2], a[3], b0, b1};
    cta_emu::publish(w, 6);
    const int l = cta_emu::lane(), r = l / 4, c = 2 * (l % 4);
    auto tf32 = [](uint64_t word) { return word & 0x1FFFu ? NAN : __uint_as_float((uint32_t)word); };
    float A[2][8], B[2][8]; /* this lane's rows r, r + 8 of A (from lanes 4r..4r + 3), columns c, c + 1 of B */
    for (int q = 0; q < 4; q++) {
        A[0][q] = tf32(cta_emu::peek(4 * r + q, 0)), A[1][q] = tf32(cta_emu::peek(4 * r + q, 1));
        A[0][q + 4] = tf32(cta_emu::peek(4 * r + q, 2)), A[1][q + 4] = tf32(cta_emu::peek(4 * r + q, 3));
        for (int n = 0; n < 2; n++) {
            B[n][q] = tf32(cta_emu::peek(4 * (c + n) + q, 4));
            B[n][q + 4] = tf32(cta_emu::peek(4 * (c + n) + q, 5));
        }
    }
    cta_emu::done();
    for (int e = 0; e < 4; e++) {
        float s = d[e];
        for (int k = 0; k < 8; k++)
            s += A[e / 2][k] * B[e % 2][k];
        d[e] = s;
    }
}

/* mma.sync m16n8k32 row.col .s32.s8.{s8,u8}.s32 (PTX ISA, the m16n8k32 integer fragments): lane l
 * holds A[l/4][4(l%4) + i] in byte i of a0, A[l/4 + 8][..] in a1, A[l/4][4(l%4) + 16 + i] in a2,
 * A[l/4 + 8][4(l%4) + 16 + i] in a3; B[4(l%4) + i][l/4] in byte i of b0, B[4(l%4) + 16 + i][l/4] in
 * b1; D as m16n8k16's.  A's bytes are signed, B's signed (.s8) or unsigned (.u8, BU); the s32 sums
 * are exact (wrapping past 32 bits). */
template <bool BU> __attribute__((noinline)) void mma16832_i8(int d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    const uint64_t w[6] = {a[0], a[1], a[2], a[3], b0, b1};
    cta_emu::publish(w, 6);
    const int l = cta_emu::lane(), r = l / 4, c = 2 * (l % 4);
    auto sbyte = [](uint64_t word, int i) { return (int)(int8_t)(uint8_t)(word >> (8 * i)); };
    auto bbyte = [](uint64_t word, int i) { return BU ? (int)(uint8_t)(word >> (8 * i)) : (int)(int8_t)(uint8_t)(word >> (8 * i)); };
    int A[2][32], B[2][32]; /* this lane's rows r, r + 8 of A (from lanes 4r..4r + 3), columns c, c + 1 of B */
    for (int q = 0; q < 4; q++)
        for (int i = 0; i < 4; i++) {
            const int x = 4 * r + q;
            A[0][4 * q + i] = sbyte(cta_emu::peek(x, 0), i), A[1][4 * q + i] = sbyte(cta_emu::peek(x, 1), i);
            A[0][4 * q + 16 + i] = sbyte(cta_emu::peek(x, 2), i), A[1][4 * q + 16 + i] = sbyte(cta_emu::peek(x, 3), i);
            for (int n = 0; n < 2; n++) {
                const int y = 4 * (c + n) + q;
                B[n][4 * q + i] = bbyte(cta_emu::peek(y, 4), i), B[n][4 * q + 16 + i] = bbyte(cta_emu::peek(y, 5), i);
            }
        }
    cta_emu::done();
    for (int e = 0; e < 4; e++) {
        uint32_t s = (uint32_t)d[e];
        for (int k = 0; k < 32; k++)
            s += (uint32_t)(A[e / 2][k] * B[e % 2][k]);
        d[e] = (int)s;
    }
}
inline void mma16832_s8(int d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) { mma16832_i8<false>(d, a, b0, b1); }
inline void mma16832_s8u8(int d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) { mma16832_i8<true>(d, a, b0, b1); }

inline float fast_exp2(float x) { return exp2f(x); }

/* prmt.b32, default mode: byte k of the result is byte (sel >> 4k) & 7 of {b, a} (a: bytes 0–3),
 * or that byte's sign bit in all 8 bits when bit 3 of the nibble is set. */
inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel)
{
    const uint64_t pair = (uint64_t)b << 32 | a;
    uint32_t r = 0;
    for (int k = 0; k < 4; k++) {
        const unsigned nib = (sel >> (4 * k)) & 15u, byte = (unsigned)(pair >> (8 * (nib & 7u))) & 0xFFu;
        r |= (nib & 8u ? (byte & 0x80u ? 0xFFu : 0u) : byte) << (8 * k);
    }
    return r;
}

inline float load_any(const char *p, fc_dtype dt)
{
    switch (dt) {
    case FC_F16: return float(*(const __half *)p);
    case FC_BF16: return float(*(const __nv_bfloat16 *)p);
    default: return *(const float *)p;
    }
}
inline void store_any(char *p, fc_dtype dt, float x)
{
    switch (dt) {
    case FC_F16: *(__half *)p = __half(x); break;
    case FC_BF16: *(__nv_bfloat16 *)p = __nv_bfloat16(x); break;
    default: *(float *)p = x;
    }
}

} // namespace fc_cuda

#endif /* FLASHC_TESTS_UNIT_CTA_EMU_H */
