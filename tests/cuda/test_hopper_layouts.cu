/*
 * The facts the sm_90a forward kernel relies on about CuTe's layouts, checked on the host (no GPU
 * needed, so CI runs it):
 *   - the shared-memory layouts of Q, K and V are what the bulk tensor copies write: chunk c of 64
 *     features of row r at element c·rows·64 + r·64 + e mod 64, XOR-swizzled in 16-byte units by
 *     the row's position in its 8-row block (the TMA's 128-byte mode over a 1024-aligned base);
 *   - V read as P·V's B operand (features × kv rows) addresses the same elements as V;
 *   - the wgmma accumulators of S and O and the A operand of P·V hold, for thread t and value
 *     i = c + 2h + 4k, row 64·(t / 128) + 16·(t / 32 mod 4) + (t mod 32) / 4 + 8h and column
 *     8k + 2·(t mod 4) + c — the formulas the kernel uses for masks, rows and stores.
 */
#include <stdio.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/hopper/fwd_traits.cuh"

using namespace cute;

static int failures = 0;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond) && failures++ < 10) {                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* Where the TMA's 128-byte swizzle puts element x (16-bit) of a 1024-aligned region. */
static int tma_swizzled(int x) { return x ^ (((x >> 6) & 7) << 3); }

/* The element offset of (coordinates) in a tensor of `layout` over a 1024-aligned shared-memory
 * pointer: CuTe applies the swizzle to the pointer's address bits, as the hardware does. */
template <class Tr, class Layout, class... C> static int offset_of(const Layout &layout, C... c)
{
    alignas(1024) static typename Tr::E base[1];
    Tensor t = make_tensor(make_smem_ptr(base), layout);
    return (int)(&t(c...) - base);
}

template <class Tr> static void smem_layouts(const char *name)
{
    constexpr int BM = Tr::BM, BN = Tr::BN, D = Tr::D, ST = Tr::STAGES;
    typename Tr::LayoutQ lq;
    typename Tr::LayoutKV lkv;
    typename Tr::LayoutVt lvt;
    for (int r = 0; r < BM; r++)
        for (int e = 0; e < D; e++) {
            const int want = tma_swizzled((e / 64) * BM * 64 + r * 64 + e % 64), got = offset_of<Tr>(lq, r, e);
            CHECK(got == want, "%s: Q(%d, %d) at %d, the TMA writes %d", name, r, e, got, want);
        }
    for (int st = 0; st < ST; st++)
        for (int j = 0; j < BN; j++)
            for (int e = 0; e < D; e++) {
                const int want = st * BN * D + tma_swizzled((e / 64) * BN * 64 + j * 64 + e % 64);
                const int k = offset_of<Tr>(lkv, j, e, st), v = offset_of<Tr>(lvt, e, j, st);
                CHECK(k == want, "%s: K/V(%d, %d, stage %d) at %d, the TMA writes %d", name, j, e, st, k, want);
                CHECK(v == want, "%s: Vt(%d, %d, stage %d) at %d, V at %d", name, e, j, st, v, want);
            }
}

/* Row and column of value i of consumer thread t (the kernel's formulas). */
static int row_of(int t, int i) { return 64 * (t / 128) + 16 * ((t / 32) % 4) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
static int col_of(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + i % 2; }

template <class Tr> static void fragments(const char *name)
{
    constexpr int BM = Tr::BM, BN = Tr::BN, D = Tr::D;
    typename Tr::MmaQK qk;
    typename Tr::MmaPV pv;
    for (int t = 0; t < Tr::MMA_THREADS; t++) {
        auto tq = qk.get_thread_slice(t);
        auto tp = pv.get_thread_slice(t);
        Tensor cs = tq.partition_C(make_identity_tensor(Shape<Int<BM>, Int<BN>>{}));
        Tensor co = tp.partition_C(make_identity_tensor(Shape<Int<BM>, Int<D>>{}));
        Tensor ap = tp.partition_A(make_identity_tensor(Shape<Int<BM>, Int<BN>>{}));
        CHECK(size(cs) == BN / 2 && size(ap) == BN / 2 && size(co) == D / 2, "%s: fragment sizes %d %d %d", name, (int)size(cs),
              (int)size(ap), (int)size(co));
        for (int i = 0; i < size(cs); i++) {
            CHECK((int)get<0>(cs(i)) == row_of(t, i) && (int)get<1>(cs(i)) == col_of(t, i), "%s: S value %d of thread %d at (%d, %d)",
                  name, i, t, (int)get<0>(cs(i)), (int)get<1>(cs(i)));
            CHECK((int)get<0>(ap(i)) == row_of(t, i) && (int)get<1>(ap(i)) == col_of(t, i),
                  "%s: P (A of P·V) value %d of thread %d at (%d, %d)", name, i, t, (int)get<0>(ap(i)), (int)get<1>(ap(i)));
        }
        for (int i = 0; i < size(co); i++)
            CHECK((int)get<0>(co(i)) == row_of(t, i) && (int)get<1>(co(i)) == col_of(t, i), "%s: O value %d of thread %d at (%d, %d)",
                  name, i, t, (int)get<0>(co(i)), (int)get<1>(co(i)));
    }
}

template <class T, int D, int WG = 2> static void check(const char *name)
{
    using Tr = fc_hopper::FwdTraits<T, D, WG>;
    smem_layouts<Tr>(name);
    fragments<Tr>(name);
    printf("%s: BM %d, BN %d, stages %d, %zu bytes of shared memory\n", name, Tr::BM, Tr::BN, Tr::STAGES, Tr::SMEM);
}

int main()
{
    check<__half, 64>("f16 d64");
    check<__half, 128>("f16 d128");
    check<__half, 256>("f16 d256");
    check<__nv_bfloat16, 64>("bf16 d64");
    check<__nv_bfloat16, 128>("bf16 d128");
    check<__nv_bfloat16, 256>("bf16 d256");
    check<__half, 64, 3>("f16 d64, three warpgroups");
    check<__nv_bfloat16, 64, 3>("bf16 d64, three warpgroups");
    printf("test_hopper_layouts: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
