/*
 * The Hopper (sm_90a) vocabulary for the CTA emulator (cta_emu.h): the kernels of src/cuda/hopper/
 * run on the host, unchanged, with their CuTe GMMA atoms, so that a test can check them against the
 * reference without a GPU.  Include it after cta_emu.h and before the device headers; it replaces
 * src/cuda/hopper/sync.cuh (defines its guard) and hooks CuTe at two points: the GMMA traits'
 * mma_unpack (a more specialised overload, found by argument-dependent lookup, that hands every
 * wgmma to the emulator instead of the atoms' inline asm) and warpgroup_arrive / _commit_batch /
 * _wait (CuTe's definitions renamed away while its headers are read, the emulator's put in their
 * place).  Everything below is spelled out from the PTX ISA's definitions, not from the kernels or
 * from CuTe's layout code:
 *
 *   mbarrier      init (count), arrive, arrive.expect_tx, try_wait.parity as a blocking point: a
 *                 phase completes when its pending arrivals and its transaction count are both
 *                 zero; the pending count then restarts at the init count (an early arrival counts
 *                 towards the next phase).  try_wait.parity(P) holds when the current phase's parity
 *                 is not P — with its aliasing: a waiter two phases late blocks, as on the GPU.
 *                 A bulk copy on a barrier whose init was not followed by fence.mbarrier_init is
 *                 an error.
 *   TMA           the encoder (cuTensorMapEncodeTiled's inputs, checked as the driver checks them,
 *                 kept in the map's 128 opaque bytes) and cp.async.bulk.tensor 4-D tile loads: the
 *                 box's bytes complete on the barrier when issued, the destination is poisoned
 *                 (0xFF: NaN) then, and the data lands at the latest legal time — when some thread
 *                 first sees a completed phase of that barrier — so a kernel that reads a tile
 *                 before waiting, or lets a copy overwrite a tile still being read, reads NaN.
 *                 Out-of-bounds elements are zeros (OOB fill NONE; the NaN fill is refused); the
 *                 shared-memory image is the box row-major (innermost dimension first) with the
 *                 swizzle applied to the shared address: 16-byte chunk bits [4, 7) XOR bits
 *                 [7, 10) (128B), [4, 6) XOR [7, 9) (64B), bit 4 XOR bit 7 (32B).
 *   wgmma         .m64nNk16 with fp32 accumulators, fp16 / bf16 operands, A from shared memory or
 *                 registers, B from shared memory, either major-ness, ScaleIn ±1, scale-d.  Each
 *                 thread's issue deposits its operands (descriptors, the addresses of its A
 *                 registers and accumulators); the accumulators are poisoned (NaN) at issue.  The
 *                 product is formed when wgmma.wait_group retires the commit group — all 128
 *                 threads of the warpgroup meet there — from the operands as they are then (shared
 *                 memory, A registers: what the GPU may read until then), and the accumulators are
 *                 written back; the operands must still hold what they held at issue (checked: a
 *                 digest of the shared-memory operands, the A registers' words), else the kernel
 *                 raced the tensor cores — a tile read before its copy landed, a buffer released or
 *                 overwritten too early — and the emulator aborts.  A kernel that reads
 *                 accumulators before the wait computes with NaN.  Descriptors: start address, LBO, SBO
 *                 (encoded >> 4), base offset (must be 0: the patterns here start on their period),
 *                 swizzle mode (32/64/128B; the interleaved no-swizzle mode is refused).  K-major:
 *                 row r, column k at start + (r/8)·SBO + (r%8)·W + (k/8)·16 + (k%8)·2 (W the
 *                 swizzle width; LBO unused); MN-major: start + (r/(W/2))·LBO + (r%(W/2))·2 +
 *                 (k/8)·SBO + (k%8)·W; then the swizzle above.  Fragments (per warp w of the
 *                 warpgroup, lane l, g = l/4, q = l%4): D value i at row 16w + g + 8·((i/2)%2),
 *                 column 8·(i/4) + 2q + i%2; A register j at row 16w + g + 8·(j%2), columns
 *                 8·(j/2) + 2q + {0, 1} (low half first).  A wgmma needs a wgmma.fence
 *                 (warpgroup_arrive) by its thread since that thread's last wait; shapes other
 *                 than these stop the build (static_assert) or abort.
 *   TMA stores    cp.async.bulk.tensor 4-D tile stores (shared::cta → global, .bulk_group), with
 *                 cp.async.bulk.commit_group and cp.async.bulk.wait_group[.read] N.  A store reads
 *                 its source at issue — the earliest legal time, so a store issued before the
 *                 writes it should carry reads what was there before — through the async proxy's
 *                 view of shared memory (below), un-swizzled as the loads swizzle; the box's
 *                 elements inside the tensor reach global memory when a wait_group retires the
 *                 group, those outside it are not written (clipped, whatever the coordinates'
 *                 sign).  From issue until a wait_group.read retires the group the source must not
 *                 change (the GPU may read it at any moment until then): a change is an error (the
 *                 wait lets every other thread run first, so a buffer released before it is
 *                 overwritten before it), as
 *                 is a CTA that ends with stores whose reads nobody waited for, or with stores
 *                 outside a committed group.
 *   async proxy   what TMA stores read: a second image of shared memory, poisoned at the CTA's start,
 *                 written by the TMA loads as they land and brought up to date with the generic
 *                 image (ordinary stores) by fence.proxy.async.  A write that no fence follows
 *                 before the store is issued stays invisible to it.  The emulator does not know
 *                 which thread wrote a byte, so any thread's fence publishes every write so far:
 *                 a kernel where no writer fences fails, one where only some do may not.  (wgmma
 *                 operands are still read from the generic image.)
 *   named bars    bar.sync / bar.arrive with id (1–15; 0 is __syncthreads) and thread count.
 *   setmaxnreg    the warpgroups' registers: .inc waits until the others' allocations leave
 *                 room in the 64 K register file (as the GPU's does), .dec gives them back; each
 *                 warpgroup starts at the launch's share.
 *   the rest      fence.proxy.async, prefetch.tensormap (checks the map), gridDim, and the
 *                 backward's dQ turn counters (plain loads and stores; a wait for a turn that has
 *                 not come is an error, since the CTAs run one at a time).
 * Not modelled: the proxy split for wgmma operands (only TMA stores read the async image), the
 * multicast and cluster forms, TMA reductions and im2col (the kernels use none), the timing.
 */
#ifndef FLASHC_TESTS_UNIT_CTA_EMU_SM90_H
#define FLASHC_TESTS_UNIT_CTA_EMU_SM90_H

#include "cta_emu.h"
#include "emu_sm90/cuComplex.h"
#include "emu_sm90/cuda_bf16.h"
#include "emu_sm90/cuda_fp16.h"
#include "emu_sm90/cuda_runtime.h"
#include "emu_sm90/vector_types.h"

#include <map>

/* The Hopper kernels' `extern __shared__ char smem_raw[]` (namespace fc_hopper); run_cta below
 * poisons it before every CTA. */
namespace fc_hopper {
CTA_EMU_SMEM(char);
}

inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

namespace cta_emu_sm90 {
[[noreturn]] inline void fail(const char *what)
{
    fprintf(stderr, "cta_emu_sm90: %s (thread %d)\n", what, cta_emu::active() ? cta_emu::tid() : -1);
    abort();
}
/* The shared-state-space address of p (its offset in the CTA's shared memory). */
inline uint32_t shared_addr(const void *p)
{
    const uintptr_t a = (uintptr_t)p, base = (uintptr_t)fc_hopper::cta_emu_smem;
    if (a < base || a >= base + kCtaEmuSmem)
        fail("a shared-memory address outside the CTA's shared memory");
    return (uint32_t)(a - base);
}
inline unsigned char *shared_at(uint32_t a)
{
    if (a >= kCtaEmuSmem)
        fail("a shared address past the CTA's shared memory");
    return (unsigned char *)fc_hopper::cta_emu_smem + a;
}
/* The swizzle of the TMA and wgmma 32/64/128-byte modes on a shared address (mode: the width). */
inline uint32_t swizzle(uint32_t a, int width)
{
    const uint32_t mask = width == 128 ? 7u : width == 64 ? 3u : width == 32 ? 1u : 0u;
    return a ^ (((a >> 7) & mask) << 4);
}
} // namespace cta_emu_sm90

/* CuTe's cast_smem_ptr_to_uint (GMMA descriptors' start addresses) through the emulator. */
inline size_t __cvta_generic_to_shared(const void *p) { return cta_emu_sm90::shared_addr(p); }
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1

/* CuTe's warpgroup synchronisation, renamed away while its headers are read (replaced below). */
#define warpgroup_arrive cta_emu_cute_warpgroup_arrive_unused
#define warpgroup_wait cta_emu_cute_warpgroup_wait_unused
#define warpgroup_commit_batch cta_emu_cute_warpgroup_commit_batch_unused
#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/tensor.hpp>
#undef warpgroup_arrive
#undef warpgroup_wait
#undef warpgroup_commit_batch

namespace cta_emu_sm90 {

/* --- per-CTA state ------------------------------------------------------------------------- */

/* A queued TMA load: its map, coordinates and destination, and the barrier phase it completes. */
struct TmaLoad {
    CUtensorMap map;
    int c[4];
    uint32_t dst;
    uint32_t phase;
};
/* A TMA store in flight: the bytes it read at issue (the box, innermost dimension first) and the
 * source as the generic image held it then (it must hold it until a wait_group.read). */
struct TmaStore {
    CUtensorMap map;
    int c[4];
    uint32_t src;
    std::vector<unsigned char> data, source;
};
struct ThreadBulk {
    std::vector<TmaStore> open;
    std::deque<std::vector<TmaStore>> groups;
};
struct Mbar {
    uint32_t count, pending, phase;
    int64_t tx;
    bool fenced;
    int init_by;
    std::vector<TmaLoad> loads;
};
/* One thread's part of one wgmma: its operands as issued. */
struct Deposit {
    int n, elem; /* N; FC_F16 or FC_BF16 */
    bool a_regs, a_mn, b_mn, scale_d;
    float sa, sb;
    uint64_t a_desc, b_desc;
    const uint32_t *a_reg[4];
    uint32_t a_val[4];     /* the A registers at issue */
    uint64_t dig_a, dig_b; /* the shared-memory operands at issue (the warpgroup's thread 0) */
    float *acc[128];
};
struct ThreadMma {
    std::vector<Deposit> open;
    std::deque<std::vector<Deposit>> groups;
    std::map<float *, float> shadow; /* accumulators in flight: their value as the wgmma sees it */
    bool fenced = false;
};
struct Rendezvous {
    int arrived = 0, n = -1;
    unsigned gen = 0;
};
struct NamedBar {
    int count = 0, arrived = 0;
    unsigned gen = 0;
};
struct Waiter { /* a blocked thread's condition */
    const void *obj;
    uint32_t value;
};
struct State {
    std::map<const void *, Mbar> bars;
    std::vector<ThreadMma> mma;
    std::vector<ThreadBulk> bulk;
    std::vector<unsigned char> async_view; /* shared memory as the async proxy sees it */
    uint64_t tma_stores; /* issued, over every CTA run (for tests: a variant stored through the TMA) */
    Rendezvous wg_wait[8];
    NamedBar named[16];
    int regs[8];     /* per warpgroup: setmaxnreg's allocation */
    int n_wg, threads;
    std::vector<Waiter> waiting;
    cta_emu_dim3 grid;
};
inline State &st()
{
    static State s;
    return s;
}

/* --- TMA maps -------------------------------------------------------------------------------- */

constexpr uint32_t kMapMagic = 0x544d4150u;
struct Map { /* what cuTensorMapEncodeTiled was given (rank 4 at most) */
    uint32_t magic, rank, es, swizzle, oob;
    uint32_t box[4];
    const char *base;
    uint64_t dim[4], stride[4]; /* stride[0]: the element size */
};
static_assert(sizeof(Map) <= sizeof(CUtensorMap), "the map's facts fit its opaque bytes");
inline const Map &map_of(const CUtensorMap *m)
{
    const Map *f = reinterpret_cast<const Map *>(m);
    if (f->magic != kMapMagic)
        fail("a tensor map the encoder did not write");
    return *f;
}

/* Every element of a box at coordinates c: f(shared address (swizzled, from base), global address,
 * inside the tensor) in the box's order, innermost dimension first. */
template <class F> inline void box_each(const Map &m, const int *c, uint32_t base, F f)
{
    const uint32_t pitch = m.box[0] * m.es, width = m.swizzle == CU_TENSOR_MAP_SWIZZLE_128B  ? 128
                                                    : m.swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                                                    : m.swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32
                                                                                             : 0;
    uint32_t at = 0;
    for (uint32_t i3 = 0; i3 < (m.rank > 3 ? m.box[3] : 1); i3++)
        for (uint32_t i2 = 0; i2 < (m.rank > 2 ? m.box[2] : 1); i2++)
            for (uint32_t i1 = 0; i1 < (m.rank > 1 ? m.box[1] : 1); i1++, at += pitch)
                for (uint32_t i0 = 0; i0 < m.box[0]; i0++) {
                    const int64_t g[4] = {(int64_t)c[0] + i0, (int64_t)c[1] + i1, (int64_t)c[2] + i2, (int64_t)c[3] + i3};
                    bool in = true;
                    const char *gp = m.base;
                    for (uint32_t d = 0; d < m.rank; d++) {
                        in = in && g[d] >= 0 && (uint64_t)g[d] < m.dim[d];
                        gp += g[d] * (int64_t)m.stride[d];
                    }
                    f(swizzle(base + at + i0 * m.es, width), gp, in);
                }
}

/* The shared-memory side of a 4-D tensor copy through m: its shared address (128-byte aligned, the
 * whole box inside the CTA's shared memory) and *bytes. */
inline uint32_t box_at(const Map &m, const void *p, uint32_t *bytes)
{
    if (m.rank != 4)
        fail("a 4-D bulk copy through a map of another rank");
    const uint32_t at = shared_addr(p);
    if (at % 128)
        fail("a bulk tensor copy's shared memory not 128-byte aligned");
    *bytes = m.box[0] * m.box[1] * m.box[2] * m.box[3] * m.es;
    shared_addr((const char *)p + *bytes - 1);
    return at;
}

/* Lands one queued load: the box from global memory (zeros out of bounds), swizzled, in both
 * images of shared memory (the async proxy wrote it). */
inline void land(const TmaLoad &ld)
{
    const Map &m = map_of(&ld.map);
    box_each(m, ld.c, ld.dst, [&](uint32_t sa, const char *gp, bool in) {
        unsigned char *dst = shared_at(sa);
        if (in)
            memcpy(dst, gp, m.es);
        else
            memset(dst, 0, m.es);
        memcpy(&st().async_view[sa], dst, m.es);
    });
}

/* Retires thread t's bulk groups but the newest n: each store's source unchanged since issue, its
 * elements inside the tensor written to global memory. */
inline void bulk_retire(int t, int n)
{
    ThreadBulk &b = st().bulk[(size_t)t];
    while (b.groups.size() > (size_t)n) {
        for (const TmaStore &s : b.groups.front()) {
            if (memcmp(shared_at(s.src), s.source.data(), s.source.size()) != 0)
                fail("the source of a TMA store changed before a cp.async.bulk.wait_group.read retired it (the staging "
                     "buffer reused too early, or written after the store was issued)");
            const Map &m = map_of(&s.map);
            size_t at = 0;
            box_each(m, s.c, s.src, [&](uint32_t, const char *gp, bool in) {
                if (in)
                    memcpy(const_cast<char *>(gp), &s.data[at], m.es);
                at += m.es;
            });
        }
        b.groups.pop_front();
    }
}

/* --- mbarriers -------------------------------------------------------------------------------- */

inline Mbar &bar(const void *p)
{
    auto it = st().bars.find(p);
    if (it == st().bars.end())
        fail("an mbarrier operation on a barrier nobody initialised");
    return it->second;
}
inline void try_complete(Mbar &b)
{
    if (b.pending == 0 && b.tx == 0)
        b.phase++, b.pending = b.count;
}
inline bool phase_done(const void *w)
{
    const Waiter &x = *static_cast<const Waiter *>(w);
    return (bar(x.obj).phase & 1u) != x.value;
}
inline Waiter &my_waiter() { return st().waiting[(size_t)cta_emu::tid()]; }

} // namespace cta_emu_sm90

/* CuTe's warpgroup synchronisation (wgmma.fence, commit_group, wait_group), emulated. */
namespace cta_emu_sm90 {
void wgmma_wait(int n);
}
namespace cute {
inline void warpgroup_arrive() { cta_emu_sm90::st().mma[(size_t)cta_emu::tid()].fenced = true; }
inline void warpgroup_commit_batch()
{
    cta_emu_sm90::ThreadMma &t = cta_emu_sm90::st().mma[(size_t)cta_emu::tid()];
    t.groups.push_back(t.open);
    t.open.clear();
}
template <int N> inline void warpgroup_wait()
{
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group: N in [0, 7]");
    cta_emu_sm90::wgmma_wait(N);
}
} // namespace cute

namespace cta_emu_sm90 {

/* --- wgmma ------------------------------------------------------------------------------------ */

inline uint64_t operand_digest(uint64_t desc, bool mn_major, int rows);
inline void issue(const Deposit &d)
{
    ThreadMma &t = st().mma[(size_t)cta_emu::tid()];
    if (!t.fenced)
        fail("wgmma.mma_async without a wgmma.fence (warpgroup_arrive) since the thread's last wait");
    for (int i = 0; i < d.n / 2; i++) {
        float *p = d.acc[i];
        if (!t.shadow.count(p))
            t.shadow[p] = *p;
        *p = NAN; /* the registers belong to the wgmma until its group retires */
    }
    t.open.push_back(d);
    Deposit &e = t.open.back();
    for (int j = 0; e.a_regs && j < 4; j++)
        e.a_val[j] = *e.a_reg[j];
    if (cta_emu::tid() % 128 == 0) { /* what the operands hold now: they must hold it until the wgmma retires */
        e.dig_b = operand_digest(e.b_desc, e.b_mn, e.n);
        e.dig_a = e.a_regs ? 0 : operand_digest(e.a_desc, e.a_mn, 64);
    }
}

/* One 16-bit operand element's bits (row r of M or N, column k < 16) through a matrix descriptor. */
inline uint16_t operand_bits(uint64_t desc, bool mn_major, int r, int k)
{
    const uint32_t start = (uint32_t)(desc & 0x3FFF) << 4, lbo = (uint32_t)((desc >> 16) & 0x3FFF) << 4,
                   sbo = (uint32_t)((desc >> 32) & 0x3FFF) << 4, base = (uint32_t)(desc >> 49) & 7u, mode = (uint32_t)(desc >> 62);
    if (mode == 0)
        fail("a wgmma descriptor in the interleaved (no-swizzle) mode: not modelled");
    if (base != 0)
        fail("a wgmma descriptor with a nonzero base offset: not modelled");
    const int W = mode == 1 ? 128 : mode == 2 ? 64 : 32, E = W / 2; /* bytes and 16-bit elements per swizzle row */
    const uint32_t a = mn_major ? start + (uint32_t)(r / E) * lbo + (uint32_t)(r % E) * 2 + (uint32_t)(k / 8) * sbo + (uint32_t)(k % 8) * W
                                : start + (uint32_t)(r / 8) * sbo + (uint32_t)(r % 8) * W + (uint32_t)(k / 8) * 16 + (uint32_t)(k % 8) * 2;
    uint16_t h;
    memcpy(&h, shared_at(swizzle(a, W)), 2);
    return h;
}
inline float operand(uint64_t desc, bool mn_major, int r, int k, int elem)
{
    const uint16_t h = operand_bits(desc, mn_major, r, k);
    return elem == FC_BF16 ? fc_bf16_to_f32_inline(h) : fc_f16_to_f32_inline(h);
}
/* A digest of an operand's rows × 16 elements (FNV-1a over the bits). */
inline uint64_t operand_digest(uint64_t desc, bool mn_major, int rows)
{
    uint64_t h = 1469598103934665603ull;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < 16; k++)
            h = (h ^ operand_bits(desc, mn_major, r, k)) * 1099511628211ull;
    return h;
}

/* The product of one wgmma, from the 128 threads' deposits of it (dep[t]: thread t of the warpgroup). */
inline void compute(const Deposit *const *dep)
{
    const Deposit &d0 = *dep[0];
    const int n = d0.n;
    for (int t = 1; t < 128; t++) {
        const Deposit &d = *dep[t];
        if (d.n != n || d.elem != d0.elem || d.a_regs != d0.a_regs || d.a_mn != d0.a_mn || d.b_mn != d0.b_mn || d.b_desc != d0.b_desc ||
            (!d.a_regs && d.a_desc != d0.a_desc) || d.scale_d != d0.scale_d)
            fail("the threads of a warpgroup issued different wgmmas");
    }
    for (int t = 0; t < 128; t++)
        for (int j = 0; d0.a_regs && j < 4; j++)
            if (*dep[t]->a_reg[j] != dep[t]->a_val[j])
                fail("an A register of a wgmma changed before the wgmma retired");
    if (operand_digest(d0.b_desc, d0.b_mn, n) != d0.dig_b || (!d0.a_regs && operand_digest(d0.a_desc, d0.a_mn, 64) != d0.dig_a))
        fail("a shared-memory operand of a wgmma changed between its issue and its retirement (a missing wait, or a buffer "
             "released or written too early)");
    static thread_local float A[64][16], B[256][16];
    for (int t = 0; t < 128; t++) /* A from registers: thread t's four words */
        for (int j = 0; d0.a_regs && j < 4; j++) {
            const int w = t / 32, l = t % 32, row = 16 * w + l / 4 + 8 * (j % 2), col = 8 * (j / 2) + 2 * (l % 4);
            const uint32_t word = *dep[t]->a_reg[j];
            for (int h = 0; h < 2; h++) {
                const uint16_t x = (uint16_t)(word >> (16 * h));
                A[row][col + h] = d0.elem == FC_BF16 ? fc_bf16_to_f32_inline(x) : fc_f16_to_f32_inline(x);
            }
        }
    for (int r = 0; !d0.a_regs && r < 64; r++)
        for (int k = 0; k < 16; k++)
            A[r][k] = operand(d0.a_desc, d0.a_mn, r, k, d0.elem);
    for (int r = 0; r < n; r++)
        for (int k = 0; k < 16; k++)
            B[r][k] = operand(d0.b_desc, d0.b_mn, r, k, d0.elem);
    for (int t = 0; t < 128; t++) {
        ThreadMma &tm = st().mma[(size_t)(cta_emu::tid() / 128 * 128 + t)];
        const int w = t / 32, l = t % 32;
        for (int i = 0; i < n / 2; i++) {
            const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
            float &acc = tm.shadow.at(dep[t]->acc[i]);
            float s = d0.scale_d ? acc : 0.0f;
            for (int k = 0; k < 16; k++)
                s += (d0.sa * A[row][k]) * (d0.sb * B[col][k]);
            acc = s;
        }
    }
}

inline bool wg_ready(const void *w)
{
    const Waiter &x = *static_cast<const Waiter *>(w);
    const Rendezvous &rv = *static_cast<const Rendezvous *>(x.obj);
    return rv.gen != x.value || rv.arrived == 128;
}

/* wgmma.wait_group N: the warpgroup's 128 threads meet, and once nothing else in the CTA can run
 * (the latest time the kernel leaves the tensor cores) the first of them retires every group but
 * the newest N of each thread, in order, and writes back the accumulators no pending wgmma holds. */
inline void wgmma_wait(int n)
{
    State &s = st();
    const int me = cta_emu::tid(), wg = me / 128;
    s.mma[(size_t)me].fenced = false;
    Rendezvous &rv = s.wg_wait[wg];
    if (rv.arrived > 0 && rv.n != n)
        fail("the threads of a warpgroup wait for different wgmma group counts");
    rv.n = n, rv.arrived++;
    const unsigned gen = rv.gen;
    my_waiter() = Waiter{&rv, gen};
    cta_emu::wait_until(wg_ready, &my_waiter(), true);
    if (rv.gen != gen)
        return; /* another thread of the warpgroup retired the groups */
    ThreadMma *tm[128];
    for (int t = 0; t < 128; t++)
        tm[t] = &s.mma[(size_t)(wg * 128 + t)];
    while (tm[0]->groups.size() > (size_t)n) {
        const Deposit *dep[128];
        for (int t = 0; t < 128; t++)
            if (tm[t]->groups.size() != tm[0]->groups.size() || tm[t]->groups.front().size() != tm[0]->groups.front().size())
                fail("the threads of a warpgroup committed different wgmma groups");
        for (size_t j = 0; j < tm[0]->groups.front().size(); j++) {
            for (int t = 0; t < 128; t++)
                dep[t] = &tm[t]->groups.front()[j];
            compute(dep);
        }
        for (int t = 0; t < 128; t++)
            tm[t]->groups.pop_front();
    }
    for (int t = 0; t < 128; t++) { /* write back what no wgmma still in flight holds */
        std::map<float *, float> keep;
        auto hold = [&](const Deposit &d) {
            for (int i = 0; i < d.n / 2; i++)
                keep[d.acc[i]] = 0.0f;
        };
        for (const auto &g : tm[t]->groups)
            for (const Deposit &d : g)
                hold(d);
        for (const Deposit &d : tm[t]->open)
            hold(d);
        for (auto it = tm[t]->shadow.begin(); it != tm[t]->shadow.end();)
            if (!keep.count(it->first))
                *it->first = it->second, it = tm[t]->shadow.erase(it);
            else
                ++it;
    }
    rv.arrived = 0, rv.gen++;
}

inline bool named_released(const void *w)
{
    const Waiter &x = *static_cast<const Waiter *>(w);
    return static_cast<const NamedBar *>(x.obj)->gen != x.value;
}
inline NamedBar &named(int id, int threads)
{
    if (id <= 0 || id >= 16 || threads <= 0 || threads % 32 || threads > st().threads)
        fail("a named barrier with an id outside 1..15 or a thread count that is no multiple of 32");
    NamedBar &b = st().named[id];
    if (b.arrived > 0 && b.count != threads)
        fail("a named barrier's participants give different thread counts");
    b.count = threads;
    return b;
}
/* One arrival; true when it completed the barrier. */
inline bool named_arrive_one(NamedBar &b)
{
    if (++b.arrived < b.count)
        return false;
    b.arrived = 0, b.gen++;
    return true;
}

inline bool regs_fit(const void *w)
{
    const Waiter &x = *static_cast<const Waiter *>(w);
    int sum = (int)x.value;
    for (int g = 0; g < st().n_wg; g++)
        sum += g == (int)(intptr_t)x.obj ? 0 : st().regs[g];
    return 128 * sum <= 65536;
}

/* Runs one CTA of a grid of `grid` CTAs (threads: whole warpgroups) with the Hopper state fresh. */
template <class F> inline void run_cta(int threads, cta_emu_dim3 blk, unsigned grid, F f)
{
    State &s = st();
    if (threads % 128 || threads > 1024)
        fail("a CTA of whole warpgroups expected");
    s.bars.clear();
    s.mma.assign((size_t)threads, ThreadMma{});
    s.bulk.assign((size_t)threads, ThreadBulk{});
    s.async_view.assign(kCtaEmuSmem, 0xFF); /* poison: what no fence published */
    s.waiting.assign((size_t)threads, Waiter{});
    for (Rendezvous &r : s.wg_wait)
        r = Rendezvous{};
    for (NamedBar &b : s.named)
        b = NamedBar{};
    s.n_wg = threads / 128, s.threads = threads;
    for (int g = 0; g < 8; g++) /* the launch's share: 64 K registers over the threads, in units of 8 */
        s.regs[g] = 65536 / threads / 8 * 8;
    s.grid = cta_emu_dim3{grid, 1, 1};
    memset(fc_hopper::cta_emu_smem, 0xFF, sizeof fc_hopper::cta_emu_smem); /* as cta_emu::run_cta fc_cuda's */
    cta_emu::run_cta(threads, blk, f);
    for (const ThreadMma &t : s.mma)
        if (!t.groups.empty() || !t.open.empty())
            fail("a thread exited with wgmmas in flight");
    for (const ThreadBulk &b : s.bulk) {
        if (!b.open.empty())
            fail("a CTA ended with TMA stores outside a committed bulk group");
        if (!b.groups.empty())
            fail("a CTA ended with TMA stores whose reads of shared memory no cp.async.bulk.wait_group.read waited for");
    }
}

inline cta_emu_dim3 grid_dim() { return st().grid; }

} // namespace cta_emu_sm90

#define gridDim (cta_emu_sm90::grid_dim())

/* The hook: GMMA atoms' mma_unpack, more specialised than CuTe's (MMA_Traits of an op template
 * with its four parameters), deposits the wgmma with the emulator. */
namespace cute {
namespace SM90 {
namespace GMMA {
template <template <Major, Major, ScaleIn, ScaleIn> class Op, Major tA, Major tB, ScaleIn sA, ScaleIn sB, class TD, class DLayout, class TA,
          class ALayout, class TB, class BLayout, class TC, class CLayout>
inline void mma_unpack(MMA_Traits<Op<tA, tB, sA, sB>> const &traits, Tensor<TD, DLayout> &D, Tensor<TA, ALayout> const &A,
                       Tensor<TB, BLayout> const &B, Tensor<TC, CLayout> const &)
{
    using Traits = MMA_Traits<Op<tA, tB, sA, sB>>;
    using MmaOp = Op<tA, tB, sA, sB>;
    using RegA = typename remove_extent<typename MmaOp::ARegisters>::type;
    using RegC = typename remove_extent<typename MmaOp::CRegisters>::type;
    using VA = typename Traits::ValTypeA;
    constexpr int M = decltype(size<0>(typename Traits::Shape_MNK{}))::value, N = decltype(size<1>(typename Traits::Shape_MNK{}))::value,
                  K = decltype(size<2>(typename Traits::Shape_MNK{}))::value;
    static_assert(M == 64 && K == 16 && N % 8 == 0 && N <= 256, "cta_emu_sm90: wgmma .m64nNk16 only");
    static_assert(is_same<RegC, float>::value, "cta_emu_sm90: fp32 accumulators only");
    static_assert(is_same<VA, half_t>::value || is_same<VA, bfloat16_t>::value, "cta_emu_sm90: fp16 / bf16 operands only");
    static_assert(is_same<typename Traits::ValTypeB, VA>::value, "cta_emu_sm90: A and B of one type");
    constexpr bool a_regs = is_same<RegA, uint32_t>::value;
    static_assert(a_regs || is_same<RegA, uint64_t>::value, "cta_emu_sm90: A as 4 registers or a descriptor");
    Tensor rA = recast<RegA>(A);
    Tensor rB = recast<uint64_t>(B);
    Tensor rC = recast<float>(D);
    cta_emu_sm90::Deposit d;
    memset(&d, 0, sizeof d);
    d.n = N, d.elem = is_same<VA, half_t>::value ? FC_F16 : FC_BF16;
    d.a_regs = a_regs, d.a_mn = tA == Major::MN, d.b_mn = tB == Major::MN;
    d.sa = sA == ScaleIn::Neg ? -1.0f : 1.0f, d.sb = sB == ScaleIn::Neg ? -1.0f : 1.0f;
    d.scale_d = traits.accumulate_ == ScaleOut::One;
    if constexpr (a_regs) {
        static_assert(decltype(size(rA))::value == 4, "four A registers");
        for (int j = 0; j < 4; j++)
            d.a_reg[j] = &rA(j);
    } else {
        d.a_desc = uint64_t(rA(0));
    }
    d.b_desc = uint64_t(rB(0));
    static_assert(decltype(size(rC))::value == N / 2, "N/2 accumulators per thread");
    for (int i = 0; i < N / 2; i++)
        d.acc[i] = &rC(i);
    cta_emu_sm90::issue(d);
}
} // namespace GMMA
} // namespace SM90
} // namespace cute

/* src/cuda/hopper/sync.cuh's vocabulary, emulated (see the file comment). */
#define FC_CUDA_HOPPER_SYNC_CUH
namespace fc_hopper {

inline uint32_t smem_u32(const void *p) { return cta_emu_sm90::shared_addr(p); }

inline void mbar_init(uint64_t *b, uint32_t count)
{
    cta_emu_sm90::shared_addr(b);
    if (count == 0 || count >= (1u << 20))
        cta_emu_sm90::fail("mbarrier.init with a count outside [1, 2^20)");
    cta_emu_sm90::st().bars[b] = cta_emu_sm90::Mbar{count, count, 0, 0, false, cta_emu::tid(), {}};
}
inline void mbar_init_fence()
{
    for (auto &kv : cta_emu_sm90::st().bars)
        if (kv.second.init_by == cta_emu::tid())
            kv.second.fenced = true;
}
inline void mbar_arrive_tx(uint64_t *b, uint32_t bytes)
{
    cta_emu_sm90::Mbar &m = cta_emu_sm90::bar(b);
    m.tx += bytes;
    m.pending--;
    cta_emu_sm90::try_complete(m);
}
inline void mbar_arrive(uint64_t *b)
{
    cta_emu_sm90::Mbar &m = cta_emu_sm90::bar(b);
    m.pending--;
    cta_emu_sm90::try_complete(m);
}
/* try_wait.parity in its retry loop: blocks until the phase of that parity has completed, then
 * lands the bulk copies of the barrier's completed phases and lets the other threads run first
 * (so that what the waiter does next comes late: a thread that should have waited for it, but did
 * not, runs before it). */
inline void mbar_wait(uint64_t *b, uint32_t phase)
{
    cta_emu_sm90::bar(b);
    cta_emu_sm90::Waiter &w = cta_emu_sm90::my_waiter();
    w = cta_emu_sm90::Waiter{b, phase & 1u};
    cta_emu::wait_until(cta_emu_sm90::phase_done, &w);
    cta_emu_sm90::Mbar &m = cta_emu_sm90::bar(b);
    std::vector<cta_emu_sm90::TmaLoad> keep;
    for (const cta_emu_sm90::TmaLoad &ld : m.loads)
        if (ld.phase < m.phase)
            cta_emu_sm90::land(ld);
        else
            keep.push_back(ld);
    m.loads.swap(keep);
    cta_emu::yield();
}

/* cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes */
inline void tma_load_4d(const CUtensorMap *map, uint64_t *b, void *dst, int c0, int c1, int c2, int c3)
{
    const cta_emu_sm90::Map &m = cta_emu_sm90::map_of(map);
    cta_emu_sm90::Mbar &bar = cta_emu_sm90::bar(b);
    if (!bar.fenced)
        cta_emu_sm90::fail("a bulk copy completes on an mbarrier whose init no fence.mbarrier_init followed");
    uint32_t bytes;
    const uint32_t at = cta_emu_sm90::box_at(m, dst, &bytes);
    memset(dst, 0xFF, bytes); /* poison until the data lands */
    cta_emu_sm90::TmaLoad ld;
    memcpy(&ld.map, map, sizeof ld.map);
    ld.c[0] = c0, ld.c[1] = c1, ld.c[2] = c2, ld.c[3] = c3, ld.dst = at, ld.phase = bar.phase;
    bar.loads.push_back(ld);
    bar.tx -= bytes; /* complete_tx */
    cta_emu_sm90::try_complete(bar);
}

inline void tma_prefetch_map(const CUtensorMap *map) { cta_emu_sm90::map_of(map); }

/* fence.proxy.async.shared::cta: the generic writes so far become visible to the async proxy (every
 * thread's: see the file comment). */
inline void fence_async_smem() { memcpy(cta_emu_sm90::st().async_view.data(), fc_hopper::cta_emu_smem, kCtaEmuSmem); }

/* cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group: reads the box at src through the async
 * proxy now, writes it when a wait_group retires its group. */
inline void tma_store_4d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3)
{
    const cta_emu_sm90::Map &m = cta_emu_sm90::map_of(map);
    uint32_t bytes;
    const uint32_t at = cta_emu_sm90::box_at(m, src, &bytes);
    cta_emu_sm90::TmaStore s;
    memcpy(&s.map, map, sizeof s.map);
    s.c[0] = c0, s.c[1] = c1, s.c[2] = c2, s.c[3] = c3, s.src = at;
    s.source.assign(cta_emu_sm90::shared_at(at), cta_emu_sm90::shared_at(at) + bytes);
    const std::vector<unsigned char> &view = cta_emu_sm90::st().async_view;
    cta_emu_sm90::box_each(m, s.c, at, [&](uint32_t sa, const char *, bool) { s.data.insert(s.data.end(), &view[sa], &view[sa] + m.es); });
    cta_emu_sm90::st().bulk[(size_t)cta_emu::tid()].open.push_back(std::move(s));
    cta_emu_sm90::st().tma_stores++;
}
/* cp.async.bulk.commit_group: the thread's uncommitted bulk stores become one group. */
inline void bulk_commit()
{
    cta_emu_sm90::ThreadBulk &b = cta_emu_sm90::st().bulk[(size_t)cta_emu::tid()];
    b.groups.push_back(std::move(b.open));
    b.open.clear();
}
/* cp.async.bulk.wait_group.read N: all but the newest N groups have read their sources (and here
 * written global memory too) — as late as the kernel allows: every other thread runs first, so
 * whatever the kernel lets touch a source before this wait (a buffer released early) does. */
template <int N> inline void bulk_wait_read()
{
    static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group: N in [0, 63]");
    cta_emu::yield();
    cta_emu_sm90::bulk_retire(cta_emu::tid(), N);
}

inline void named_sync(int id, int threads)
{
    cta_emu_sm90::NamedBar &b = cta_emu_sm90::named(id, threads);
    const unsigned gen = b.gen;
    if (cta_emu_sm90::named_arrive_one(b))
        return;
    cta_emu_sm90::Waiter &w = cta_emu_sm90::my_waiter();
    w = cta_emu_sm90::Waiter{&b, gen};
    cta_emu::wait_until(cta_emu_sm90::named_released, &w);
}
inline void named_arrive(int id, int threads) { cta_emu_sm90::named_arrive_one(cta_emu_sm90::named(id, threads)); }

/* setmaxnreg: the warpgroup's allocation (.inc waits for room). */
template <int N> inline void regs_grow()
{
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: a multiple of 8 in [24, 256]");
    const int wg = cta_emu::tid() / 128;
    cta_emu_sm90::State &s = cta_emu_sm90::st();
    if (N < s.regs[wg])
        cta_emu_sm90::fail("setmaxnreg.inc below the warpgroup's allocation");
    cta_emu_sm90::Waiter &w = cta_emu_sm90::my_waiter();
    w = cta_emu_sm90::Waiter{(const void *)(intptr_t)wg, (uint32_t)N};
    cta_emu::wait_until(cta_emu_sm90::regs_fit, &w);
    s.regs[wg] = N;
}
template <int N> inline void regs_shrink()
{
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: a multiple of 8 in [24, 256]");
    const int wg = cta_emu::tid() / 128;
    if (N > cta_emu_sm90::st().regs[wg])
        cta_emu_sm90::fail("setmaxnreg.dec above the warpgroup's allocation");
    cta_emu_sm90::st().regs[wg] = N;
}

} // namespace fc_hopper

/* The backward's dQ turn counters (backward_dq.cuh): plain reads and writes.  The emulator runs a
 * grid's CTAs one at a time, each to its end, so a turn that has not come when a CTA waits for it
 * never will: an error, not a wait (run the grid in turn order, or on one persistent CTA). */
#define FC_CUDA_DQ_SYNC_EMULATED
namespace fc_cuda {
inline unsigned ld_relaxed_gpu(const unsigned *p) { return *p; }
inline void st_release_gpu(unsigned *p, unsigned v) { *p = v; }
inline void fence_acq_rel_gpu() {}
inline void wait_turn(const unsigned *ctr, unsigned turn, unsigned, bool)
{
    if (*ctr != turn)
        cta_emu_sm90::fail("a dQ turn wait that no CTA run before this one satisfies");
}
} // namespace fc_cuda

/* cuTensorMapEncodeTiled, emulated: the driver's checks on the inputs the kernels' maps use, the
 * facts kept in the map. */
inline CUresult cta_emu_tensor_map_encode(CUtensorMap *map, CUtensorMapDataType dt, cuuint32_t rank, void *base, const cuuint64_t *dim,
                                          const cuuint64_t *stride, const cuuint32_t *box, const cuuint32_t *estride,
                                          CUtensorMapInterleave il, CUtensorMapSwizzle swz, CUtensorMapL2promotion,
                                          CUtensorMapFloatOOBfill oob)
{
    cta_emu_sm90::Map m;
    memset(&m, 0, sizeof m);
    m.es = dt == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || dt == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 || dt == CU_TENSOR_MAP_DATA_TYPE_UINT16 ? 2
           : dt == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 || dt == CU_TENSOR_MAP_DATA_TYPE_INT32 || dt == CU_TENSOR_MAP_DATA_TYPE_UINT32 ? 4
                                                                                                                                : 0;
    if (!m.es || rank < 1 || rank > 4 || (uintptr_t)base % 16 || il != CU_TENSOR_MAP_INTERLEAVE_NONE ||
        oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        return CUDA_ERROR_INVALID_VALUE; /* (other forms are not modelled) */
    const uint32_t width = swz == CU_TENSOR_MAP_SWIZZLE_128B ? 128 : swz == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : swz == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : 0;
    for (cuuint32_t d = 0; d < rank; d++) {
        if (dim[d] == 0 || dim[d] > ((cuuint64_t)1 << 32) || box[d] == 0 || box[d] > 256 || estride[d] != 1)
            return CUDA_ERROR_INVALID_VALUE;
        if (d > 0 && (stride[d - 1] % 16 || stride[d - 1] >= ((cuuint64_t)1 << 40)))
            return CUDA_ERROR_INVALID_VALUE;
        m.dim[d] = dim[d], m.box[d] = box[d], m.stride[d] = d ? stride[d - 1] : m.es;
    }
    if ((box[0] * m.es) % 16 || (width && box[0] * m.es > width))
        return CUDA_ERROR_INVALID_VALUE;
    m.magic = cta_emu_sm90::kMapMagic, m.rank = rank, m.swizzle = swz, m.oob = oob, m.base = (const char *)base;
    memset(map, 0, sizeof *map);
    memcpy(map, &m, sizeof m);
    return CUDA_SUCCESS;
}

#endif /* FLASHC_TESTS_UNIT_CTA_EMU_SM90_H */
