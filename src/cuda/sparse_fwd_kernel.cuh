/*
 * The sparse forward (SparseFlashAttention, semantics §5.3–§5.4) on mma.sync: one CTA = one query
 * token (b, i) × one kv head × up to 16 query heads of its group (sparse_plan.h), WARPS warps.
 * Warp 0 walks the token's index row (sparse_select.cuh) one tile of BN selected positions ahead
 * and looks up each position's key, value and key-rope rows (strided, packed or paged); all
 * threads gather those rows into a two-stage shared ring with cp.async (empty slots and features
 * past the ends zero-filled).  Per tile: each warp computes S = Q·Kᵀ for its BN / WARPS keys over
 * all query/key features (rope included), the logits go through shared memory, and every warp runs
 * the same online-softmax step over the whole tile (identical sums, so the warps agree on m and l
 * bit for bit) and O += P·V for its DV / WARPS value features.  Every output row is written by one
 * CTA, its positions summed in selection order: results repeat bit for bit.
 */
#ifndef FC_CUDA_SPARSE_FWD_KERNEL_CUH
#define FC_CUDA_SPARSE_FWD_KERNEL_CUH

#include <float.h>

#include "sparse_plan.h"
#include "sparse_select.cuh"
#include "tile.cuh"

namespace fc_cuda {

/* What the host decided about a launch beyond the problem itself. */
struct SfaLaunch {
    int head_tiles;                      /* CTAs per kv head along the group (grid.y = Nkv · head_tiles) */
    int rope_at;                         /* first rope feature in the query/key tile */
    bool vec_q, vec_k, vec_v, vec_qr, vec_kr; /* 16-byte rows, unit feature stride: cp.async */
    bool pair_out;                       /* the output has unit feature stride and 4-byte aligned rows */
};

/* Tiles per class (sparse_plan.h): BN selected positions per step, 4 warps (BN / 4 keys each for
 * S, DV / 4 value features each for O).  MLA takes 32-position steps so that the two-stage ring
 * (Q 18 KiB, K 72, V 64) fits sm_80's 163 KiB of shared memory. */
template <int C> struct SfaShape {
    static constexpr int DK = C, DV = C, BN = 64, WARPS = 4;
};
template <> struct SfaShape<FC_SFA_MLA_DK> {
    static constexpr int DK = FC_SFA_MLA_DK, DV = FC_SFA_MLA_DV, BN = 32, WARPS = 4;
};

/* Shared memory (all of it dynamic): Q [16][DK], K [2][BN][DK], V [2][BN][DV] (swizzled), the
 * logits [16][BN + 4], the row addresses [2][3][BN] (key, value, key rope of each slot; NULL =
 * nothing to load) and the positions per stage [2]. */
template <int DK, int DV, int BN> struct SfaSmem {
    static constexpr size_t q = (size_t)FC_SFA_HEADS * DK * 2, k = (size_t)2 * BN * DK * 2, v = (size_t)2 * BN * DV * 2;
    static constexpr size_t s = (size_t)FC_SFA_HEADS * (BN + 4) * sizeof(float), rows = (size_t)2 * 3 * BN * sizeof(void *);
    static constexpr size_t bytes = q + k + v + s + rows + 2 * sizeof(int);
};

/* The row of position pos of a key/value view, or NULL when a block-table entry that covers it is
 * out of range (the run's check refuses such tables before launching; this keeps a bad entry from
 * being dereferenced all the same). */
__device__ __forceinline__ const char *sfa_kv_row(const fc_view &v, int64_t b, int64_t tok, int64_t n2, int64_t pos)
{
    if (v.pages.table) {
        const int64_t blk = v.pages.table[b * v.pages.table_stride + pos / v.pages.block_size];
        if (blk < 0 || blk >= v.pages.blocks)
            return nullptr;
    }
    return fc_view_row(&v, 2, b, tok, n2, pos);
}

/* One 16-byte chunk (8 features from f) of a row part of `valid` features at `src` (NULL: zeros). */
template <typename T>
__device__ __forceinline__ void sfa_chunk(T *dst, const char *src, int64_t se, int f, int valid, bool vec)
{
    if (!src || f >= valid) {
        *reinterpret_cast<int4 *>(dst) = make_int4(0, 0, 0, 0);
    } else if (vec) { /* whole chunks: vec implies valid % 8 == 0 */
        cp_async16(dst, src + (int64_t)f * 2, 16);
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            dst[k] = f + k < valid ? *(const T *)(src + (int64_t)(f + k) * se * 2) : T(0.0f);
    }
}

/* Rows [0, ROWS) of a [ROWS][D] swizzled tile from per-row addresses: features [0, valid) from
 * main[r], and (rope) features [rope_at, rope_at + rvalid) from rope[r]. */
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void sfa_load_rows(T *tile, const char *const *main, int64_t se, int valid, bool vec,
                                              const char *const *rope, int64_t rse, int rope_at, int rvalid, bool rvec)
{
    constexpr int C = D / 8;
#pragma unroll 2
    for (int x = threadIdx.x; x < ROWS * C; x += THREADS) {
        const int r = x / C, c = x % C, f = c * 8;
        T *dst = tile + swz<D>(r, c);
        if (f < rope_at)
            sfa_chunk<T>(dst, main[r], se, f, valid, vec);
        else
            sfa_chunk<T>(dst, rope ? rope[r] : nullptr, rse, f - rope_at, rvalid, rvec);
    }
}

/* The next tile of the walk (warp 0; lane x owns slots x, x + 32): each slot's key, value and key
 * rope rows into rows[0 .. 3·BN) (NULL = nothing to load); returns the count (every lane). */
template <int BN>
__device__ __forceinline__ int sfa_walk_rows(const fc_problem &p, int64_t b, int64_t kv_tok, int64_t n2, int dr, const char *ind,
                                             int64_t thr, SelCursor &cur, int lane, const char **rows)
{
    int pos[2];
    const int n = sel_next<BN>(p.sparse, ind, thr, cur, lane, pos);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int x = lane + 32 * h;
        if (x >= BN)
            break;
        const bool in = pos[h] >= 0;
        rows[x] = in ? sfa_kv_row(p.k, b, kv_tok, n2, pos[h]) : nullptr;
        rows[BN + x] = in ? sfa_kv_row(p.v, b, kv_tok, n2, pos[h]) : nullptr;
        rows[2 * BN + x] = in && dr > 0 ? sfa_kv_row(p.k_rope, b, kv_tok, n2, pos[h]) : nullptr;
    }
    return n;
}

/* A stage's key and value tiles ([BN][DK], [BN][DV], swizzled) from the walk's row addresses. */
template <typename T, int DK, int DV, int BN, int THREADS>
__device__ __forceinline__ void sfa_load_kv(const fc_problem &p, const SfaLaunch &L, T *k_tile, T *v_tile, const char *const *rows)
{
    const int dr = (int)p.Dr;
    sfa_load_rows<T, DK, BN, THREADS>(k_tile, rows, p.k.se, (int)p.Dqk, L.vec_k, dr > 0 ? rows + 2 * BN : nullptr, p.k_rope.se,
                                      L.rope_at, dr, L.vec_kr);
    sfa_load_rows<T, DV, BN, THREADS>(v_tile, rows + BN, p.v.se, (int)p.Dv, L.vec_v, nullptr, 0, DV, 0, false);
}

/* What the forward and the dQ kernel know of their CTA: its token (b, i) (grid row blockIdx.x),
 * kv head n2, first query head g0 and how many of the 16 it has (grid column blockIdx.y:
 * sparse_plan.h), and the walk over the token's selected blocks (padding rows of a padded batch
 * select nothing; ind is read only while the walk is live). */
struct SfaCta {
    int64_t b, i, n2, g0, thr;
    int heads;
    bool live;
    const char *ind;
    SelCursor cur;

    /* whether head h of the 16 is the group's, of a real token; its query head's index */
    __device__ __forceinline__ bool has(int h) const { return live && h < heads; }
    __device__ __forceinline__ int64_t q_head(const fc_problem &p, int h) const { return n2 * p.G + g0 + h; }
};

__device__ __forceinline__ SfaCta sfa_cta(const fc_problem &p, int head_tiles)
{
    SfaCta c;
    fc_sfa_token(p.batch, p.B, blockIdx.x, &c.b, &c.i);
    c.n2 = blockIdx.y / head_tiles, c.g0 = (int64_t)(blockIdx.y % head_tiles) * FC_SFA_HEADS;
    c.heads = (int)(p.G - c.g0 < FC_SFA_HEADS ? p.G - c.g0 : FC_SFA_HEADS);
    const fc_batch &bt = p.batch[c.b];
    c.live = c.i < bt.sq;
    c.thr = fc_sparse_threshold(&p.sparse, &bt, c.i);
    c.ind = fc_sparse_row(&p.sparse, &bt, c.b, c.i, c.n2);
    c.cur = sel_start(c.live, c.thr);
    return c;
}

/* The next tile's positions → row addresses of stage st (warp 0's lanes), their count in s_n[st]. */
template <int BN>
__device__ __forceinline__ void sfa_walk_stage(const fc_problem &p, SfaCta &c, int lane, const char **sRow, int *s_n, int st)
{
    const int n = sfa_walk_rows<BN>(p, c.b, p.batch[c.b].kv_tok, c.n2, (int)p.Dr, c.ind, c.thr, c.cur, lane, sRow + st * 3 * BN);
    if (lane == 0)
        s_n[st] = n;
}

/* Row h of the CTA's heads in a query-side view (nullptr past the group and for an empty token). */
__device__ __forceinline__ const char *sfa_head_row(const fc_problem &p, const fc_view &v, const SfaCta &c, int h)
{
    return c.has(h) ? fc_view_row(&v, 2, c.b, p.batch[c.b].q_tok, c.q_head(p, h), c.i) : nullptr;
}

template <typename T, int DK, int DV, int BN, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) sparse_fwd_kernel(const __grid_constant__ fc_problem p, const SfaLaunch L)
{
    constexpr int THREADS = 32 * WARPS, KW = BN / WARPS, DVW = DV / WARPS, NT = BN / 8, DT = DVW / 8, H = FC_SFA_HEADS;
    static_assert(BN <= 64 && BN % 16 == 0, "the walk fills up to 64 slots; P·V takes 16 keys a step");
    static_assert(KW == 8 || KW == 16, "each warp's keys: one or two n-tiles");
    static_assert(KW == 16 || DK % 32 == 0, "one-n-tile warps load two k-steps of keys at a time");
    static_assert(DVW % 16 == 0 && DK % 16 == 0, "value features in pairs of n-tiles per warp");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    using S = SfaSmem<DK, DV, BN>;
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = reinterpret_cast<T *>(smem_raw + S::q);
    T *sV = reinterpret_cast<T *>(smem_raw + S::q + S::k);
    float *sS = reinterpret_cast<float *>(smem_raw + S::q + S::k + S::v);
    const char **sRow = reinterpret_cast<const char **>(smem_raw + S::q + S::k + S::v + S::s);
    int *s_n = reinterpret_cast<int *>(smem_raw + S::q + S::k + S::v + S::s + S::rows);

    SfaCta c = sfa_cta(p, L.head_tiles);
    const fc_batch &bt = p.batch[c.b];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int dqk = (int)p.Dqk, dr = (int)p.Dr, dv = (int)p.Dv;

    /* a stage's tiles (sfa_walk_stage found their rows) */
    auto load_kv = [&](int st) { sfa_load_kv<T, DK, DV, BN, THREADS>(p, L, sK + st * BN * DK, sV + st * BN * DV, sRow + st * 3 * BN); };

    /* Q: the group's heads g0.. of token i (rows past the group, and every row of an empty token,
     * zeros); addresses through the logits' room, which is free until the first tile. */
    const char **qrow = reinterpret_cast<const char **>(sS);
    if (tid < H) {
        qrow[tid] = sfa_head_row(p, p.q, c, tid);
        qrow[H + tid] = dr > 0 ? sfa_head_row(p, p.q_rope, c, tid) : nullptr;
    }
    if (warp == 0)
        sfa_walk_stage<BN>(p, c, lane, sRow, s_n, 0);
    __syncthreads();
    sfa_load_rows<T, DK, H, THREADS>(sQ, qrow, p.q.se, dqk, L.vec_q, qrow + H, p.q_rope.se, L.rope_at, dr, L.vec_qr);
    cp_async_commit();
    int n = s_n[0];
    if (n > 0)
        load_kv(0);
    cp_async_commit();
    __syncthreads(); /* the Q addresses are read before the logits take their room */

    /* Rows of this thread: r(h) = lane/4 + 8h, the same in every warp. */
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, acc[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    const float scale = p.scale, cap = p.softcap;

    int st = 0;
    while (n > 0) {
        if (warp == 0)
            sfa_walk_stage<BN>(p, c, lane, sRow, s_n, st ^ 1);
        __syncthreads();
        const int n_next = s_n[st ^ 1];
        if (n_next > 0)
            load_kv(st ^ 1); /* behind this tile's math */
        cp_async_commit();
        cp_async_wait<1>(); /* this tile (and Q) arrived */
        __syncthreads();

        /* S = Q·Kᵀ for this warp's keys [kw0, kw0 + KW), as logits into the shared tile. */
        const T *k_st = sK + st * BN * DK, *v_st = sV + st * BN * DV;
        const int kw0 = warp * KW;
        float s[KW / 8][4];
#pragma unroll
        for (int nt = 0; nt < KW / 8; nt++)
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
        if constexpr (KW == 16) {
#pragma unroll 4
            for (int ks = 0; ks < DK / 16; ks++) {
                uint32_t a[4], bk[4];
                ldsm_x4(a, sQ + swz<DK>(lane % 16, ks * 2 + lane / 16));
                ldsm_x4(bk, k_st + swz<DK>(kw0 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
                mma16816<T>(s[0], a, bk[0], bk[1]);
                mma16816<T>(s[1], a, bk[2], bk[3]);
            }
        } else {
#pragma unroll 4
            for (int ks = 0; ks < DK / 16; ks += 2) { /* one ldmatrix: 8 keys × two k-steps */
                uint32_t a0[4], a1[4], bk[4];
                ldsm_x4(a0, sQ + swz<DK>(lane % 16, ks * 2 + lane / 16));
                ldsm_x4(a1, sQ + swz<DK>(lane % 16, ks * 2 + 2 + lane / 16));
                ldsm_x4(bk, k_st + swz<DK>(kw0 + lane % 8, ks * 2 + lane / 8));
                mma16816<T>(s[0], a0, bk[0], bk[1]);
                mma16816<T>(s[0], a1, bk[2], bk[3]);
            }
        }
#pragma unroll
        for (int nt = 0; nt < KW / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = lane / 4 + 8 * (e / 2), c = kw0 + nt * 8 + (lane % 4) * 2 + e % 2;
                float x = s[nt][e] * scale;
                if (cap > 0.0f)
                    x = cap * tanhf(x / cap);
                sS[r * (BN + 4) + c] = c < n ? x : -INFINITY;
            }
        __syncthreads();

        /* The online-softmax step over the whole tile, in every warp alike (a quad shares a row). */
        float x[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float2 v = *reinterpret_cast<const float2 *>(sS + (lane / 4 + 8 * h) * (BN + 4) + nt * 8 + (lane % 4) * 2);
                x[nt][2 * h] = v.x, x[nt][2 * h + 1] = v.y;
            }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float tmx = -INFINITY;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
                tmx = max_nan(tmx, max_nan(x[nt][2 * h], x[nt][2 * h + 1]));
            tmx = max_nan(tmx, __shfl_xor_sync(0xffffffffu, tmx, 1));
            tmx = max_nan(tmx, __shfl_xor_sync(0xffffffffu, tmx, 2));
            const float mx = max_nan(m[h], tmx);
            const float ref2 = (mx == -INFINITY ? 0.0f : mx) * kLog2e;
            const float alpha = fast_exp2(m[h] * kLog2e - ref2);
            m[h] = mx;
            float sum = 0.0f;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    float &e = x[nt][2 * h + c];
                    e = fast_exp2(fmaf(e, kLog2e, -ref2));
                    sum += e;
                }
            l[h] = fmaf(l[h], alpha, sum);
#pragma unroll
            for (int d = 0; d < DT; d++)
                acc[d][2 * h] *= alpha, acc[d][2 * h + 1] *= alpha;
        }

        /* O += P·V for this warp's value features: two adjacent n-tiles of P are one k-step's A. */
#pragma unroll
        for (int ks = 0; ks < BN / 16; ks++) {
            uint32_t a[4];
            a[0] = Elem<T>::pack(x[2 * ks][0], x[2 * ks][1]);
            a[1] = Elem<T>::pack(x[2 * ks][2], x[2 * ks][3]);
            a[2] = Elem<T>::pack(x[2 * ks + 1][0], x[2 * ks + 1][1]);
            a[3] = Elem<T>::pack(x[2 * ks + 1][2], x[2 * ks + 1][3]);
#pragma unroll
            for (int d = 0; d < DT; d += 2) {
                uint32_t bv[4];
                const int row = ks * 16 + lane % 8 + ((lane / 8) % 2) * 8;
                ldsm_x4_t(bv, v_st + swz<DV>(row, warp * DT + d + lane / 16));
                mma16816<T>(acc[d], a, bv[0], bv[1]);
                mma16816<T>(acc[d + 1], a, bv[2], bv[3]);
            }
        }
        __syncthreads(); /* stage st, its addresses and the logits are free again */
        st ^= 1;
        n = n_next;
    }
    cp_async_wait_all();

    /* One division per row, then O (each warp its features) and the statistics (warp 0):
     * semantics §5.4 — a row that selected nothing is 0 with −FLT_MAX / +FLT_MAX. */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = lane / 4 + 8 * h;
        float sum = l[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        if (r >= c.heads)
            continue;
        const int64_t n1 = c.q_head(p, r);
        const bool empty = sum == 0.0f; /* a NaN sum (NaN or +inf logit) leaves the row NaN (§0.3) */
        const float f = empty ? 0.0f : 1.0f / sum;
        char *row = fc_view_row(&p.out, 2, c.b, bt.q_tok, n1, c.i);
#pragma unroll
        for (int d = 0; d < DT; d++) {
            const int e = warp * DVW + d * 8 + (lane % 4) * 2;
            const float x0 = empty ? 0.0f : acc[d][2 * h] * f, x1 = empty ? 0.0f : acc[d][2 * h + 1] * f;
            if (e >= dv)
                break;
            if (L.pair_out && e + 1 < dv) {
                *(uint32_t *)(row + e * 2) = Elem<T>::pack(x0, x1);
            } else {
                *(T *)(row + e * p.out.se * 2) = T(x0);
                if (e + 1 < dv)
                    *(T *)(row + (e + 1) * p.out.se * 2) = T(x1);
            }
        }
        if (warp == 0 && p.stats.max && lane % 4 == 0)
            fc_stat_store(&p.stats, fc_stat_offset(&p, &bt, n1, c.i), empty ? -FLT_MAX : m[h], empty ? FLT_MAX : sum);
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_SPARSE_FWD_KERNEL_CUH */
