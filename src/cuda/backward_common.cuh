/*
 * Pieces of the CUDA backward shared by its kernels (semantics §3.3): the launch facts, each query
 * row's facts (visible spans, ALiBi frame, the given statistics in the exp2 frame, D), the
 * gradient of one score element, and the two small kernels around the tiled ones — D = rowsum(dO ∘ O)
 * per query row and the sink gradient.  Every sum here runs in a fixed order (no atomics).
 */
#ifndef FC_CUDA_BACKWARD_COMMON_CUH
#define FC_CUDA_BACKWARD_COMMON_CUH

#include "../core/dtype.h"
#include "features.cuh"
#include "tf32.cuh"
#include "nonfinite.cuh"

namespace fc_cuda {

/* What the host decided about a backward launch beyond the problem itself. */
struct BwdLaunch {
    const int2 *items;    /* (batch, tile) in launch order: query tiles (D, dQ) or kv tiles (dK/dV) */
    int n_items;
    int parts;            /* dK/dV: feature parts per kv tile (CTAs that split the accumulators) */
    const int64_t *row0;  /* per batch: query rows of the batches before it (the D workspace) */
    float *dsum;          /* workspace: D of (n1, row) at dsum[n1·rows + row0[b] + i] */
    int64_t rows;         /* Σ q_rows */
    bool vec_q, vec_k, vec_v, vec_do; /* cp.async-loadable rows (launch.h) */
    bool terms;           /* pse, ALiBi, softcap, a mask or dropout: the per-element path */
    /* the fused kernel's ordered dQ accumulation (backward_dq.cuh), in the zeroed workspace: */
    float *dq_acc;        /* fp32 dQ of (n1, accumulator row r) at dq_acc[(n1·arows + r)·dq_ld] */
    const int64_t *arow0; /* per batch: accumulator rows of the batches before it (whole query tiles) */
    int64_t arows;        /* accumulator rows per query head */
    int dq_ld;            /* floats per accumulator row: the head-dim class */
    unsigned *turns;      /* per (n1, query tile, part): how many kv tiles have added (dq_order.h) */
    unsigned *ticket;     /* the next unit of work to claim */
    int units;            /* units of work: kv tiles × kv heads × parts */
    int dq_sync;          /* fused: how an adder publishes its tile (kDqSync*, backward_dq.cuh) */
};

/* A query row's facts, in shared memory beside its tile. */
struct RowFacts {
    int4 span;          /* visible columns (visibility.h) */
    float slope, apos;  /* ALiBi frame (terms.h) */
    float mlog2, linv;  /* the given statistics: (max − frame offset)·log2 e and 1/sum; 0 for rows past sq */
    float dsum;         /* D */
    int cover;          /* set when every column of the current kv tile is visible (or the row is not live) */
};

/* The facts of query row i of head n1 (live: a row of the batch, i < sq); cover for columns
 * [a, z). */
__device__ __forceinline__ void row_facts(const fc_problem &p, const BwdLaunch &L, const fc_batch &bt, int64_t b, int64_t n1,
                                          int64_t i, int a, int z, RowFacts &f)
{
    const bool live = i < bt.sq;
    double aoff;
    const int4 s = row_frame(p, bt, b, n1, i, live, f.slope, f.apos, aoff);
    f.span = s;
    f.mlog2 = f.linv = f.dsum = 0.0f;
    if (live) {
        const int64_t at = fc_stat_offset(&p, &bt, n1, i);
        f.mlog2 = (float)(p.stats.max[at] - aoff) * kLog2e; /* into the rows' logit frame, as the CPU */
        if (f.mlog2 == -INFINITY) /* −FLT_MAX (a row seeing only −∞ logits) overflowed: keep exp(−∞ − m) = 0 */
            f.mlog2 = -FLT_MAX;
        f.linv = 1.0f / p.stats.sum[at];
        f.dsum = L.dsum[n1 * L.rows + L.row0[b] + i];
    }
    f.cover = !live || (s.x <= a && z <= s.y) || (s.z <= a && z <= s.w);
}

/* A warp's register tile of one m-tile, seen as the [MT = 1] tile of tile.cuh's helpers. */
template <int NT> __device__ __forceinline__ float (&one_mt(float (&t)[NT][4]))[1][NT][4]
{
    return reinterpret_cast<float(&)[1][NT][4]>(t);
}

/* acc[16 × 8·NT] = A·Bᵀ over D features: A = the warp's 16 rows of the swizzled tile a, B = the
 * 8·NT rows of tile b (ldmatrix, mma.sync; fp32 tiles, kFeatF32: 3×TF32, tf32.cuh). */
template <typename T, int D, int NT, int UNROLL = 8>
__device__ __forceinline__ void tile_abt(float (&acc)[NT][4], const T *a, const T *b, int warp, int lane)
{
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
        acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    if constexpr (sizeof(T) == 4) {
        qk_3xtf32<D, 1, NT>(one_mt(acc), a, b, warp, lane);
    } else {
#pragma unroll UNROLL /* 8: fully at D ≤ 128; at D = 256 a full unroll's hoisted loads spill on sm_90a */
        for (int ks = 0; ks < D / 16; ks++) {
            uint32_t fa[4];
            ldsm_x4(fa, a + swz<D>(warp * 16 + lane % 16, ks * 2 + lane / 16));
#pragma unroll
            for (int nt = 0; nt < NT; nt += 2) {
                uint32_t fb[4];
                ldsm_x4(fb, b + swz<D>(nt * 8 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
                mma16816<T>(acc[nt], fa, fb[0], fb[1]);
                mma16816<T>(acc[nt + 1], fa, fb[2], fb[3]);
            }
        }
    }
}

/* acc[16 × 8·DT] += P·B over B's features from f0 for fp32 tiles (kFeatF32; tile_acc_ab's product
 * as 3×TF32): P = a register tile [16 × K] staged through the warp's rows of the scratch tile sS
 * [·][K + 8], B = K rows of the swizzled fp32 tile b. */
template <int D, int K, int DT>
__device__ __forceinline__ void tile_acc_ab_f32(float (&acc)[DT][4], float (&pm)[K / 8][4], float *sS, const float *b, int f0,
                                                int warp, int lane)
{
    pv_3xtf32<D, 1, K / 8, K, DT>(one_mt(acc), one_mt(pm), sS, b, warp, lane, f0);
}

/* acc[16 × 8·DT] += P·B: P = a register tile [16 × K] (the accumulators of two adjacent n-tiles
 * are the A fragment of one k-step, rounded to T), B = K rows of the swizzled tile b from feature
 * chunk c0 (ldmatrix.trans). */
template <typename T, int D, int K, int DT>
__device__ __forceinline__ void tile_acc_ab(float (&acc)[DT][4], const float (&pm)[K / 8][4], const T *b, int c0, int lane)
{
#pragma unroll
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t fa[4];
        fa[0] = Elem<T>::pack(pm[2 * ks][0], pm[2 * ks][1]), fa[1] = Elem<T>::pack(pm[2 * ks][2], pm[2 * ks][3]);
        fa[2] = Elem<T>::pack(pm[2 * ks + 1][0], pm[2 * ks + 1][1]), fa[3] = Elem<T>::pack(pm[2 * ks + 1][2], pm[2 * ks + 1][3]);
#pragma unroll
        for (int d = 0; d < DT; d += 2) {
            uint32_t fb[4];
            ldsm_x4_t(fb, b + swz<D>(ks * 16 + lane % 8 + ((lane / 8) % 2) * 8, c0 + d + lane / 16));
            mma16816<T>(acc[d], fa, fb[0], fb[1]);
            mma16816<T>(acc[d + 1], fa, fb[2], fb[3]);
        }
    }
}

/* The gradient of score element (i, j) of head n1: in s the raw score q·k, out Pd = P·keep/kp
 * (for dV); in dp the raw dP = dO·v, out dS = P∘(dPd − D)∘softcap′ (for dQ and dK).  Hidden
 * elements give 0 and 0; a visible −∞ logit is arithmetic like any other (P = 0·(1/l), NaN with
 * a NaN statistic: semantics §0.3).  TERMS: pse, softcap, ALiBi, masks and dropout per element;
 * else scale and visibility only (full: every element of the tile is visible). */
template <bool TERMS, int FEAT = 0>
__device__ __forceinline__ void grad_at(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int j,
                                        const RowFacts &f, bool full, float &s, float &dp)
{
    float gcap = 1.0f, keep = 1.0f, x;
    if (!(TERMS ? sees(p, bt, n1, f.span, i, j) : full || span_has(f.span, j))) {
        s = dp = 0.0f;
        return;
    }
    if (TERMS)
        x = score_terms(p, bt, n1, i, j, s, f.span, f.slope, f.apos, &gcap);
    else
        x = s * p.scale;
    const float P = fast_exp2(fmaf(x, kLog2e, -f.mlog2)) * f.linv;
    if (TERMS && drops<FEAT>(p))
        keep = keeps<FEAT>(p, bt, n1, i, j) ? 1.0f / p.keep_prob : 0.0f;
    s = P * keep;
    dp = P * (dp * keep - f.dsum) * gcap;
}

/* (Pd, dS) over a warp's register tiles s and dp [16 × 8·NT] (grad_at): at(r, x, i, j, f) gives
 * element (tile row r, tile column x)'s query row i, kv column j and row facts f.  The score terms
 * go through the scratch tiles sA, sB (not unrolled); the plain path stays in registers. */
template <int NT, int FEAT = 0, typename At>
__device__ __forceinline__ void grad_tile(const fc_problem &p, const fc_batch &bt, const BwdLaunch &L, int64_t n1, bool full,
                                          float (&s)[NT][4], float (&dp)[NT][4], float *sA, float *sB, int warp, int lane, At at)
{
    int64_t i;
    int j;
    const RowFacts *f;
    if (L.terms) {
        through_scratch2<1, NT, 8 * NT>(one_mt(s), one_mt(dp), sA, sB, warp, lane, [&](float &a, float &g, int r, int x) {
            at(r, x, i, j, f);
            grad_at<true, FEAT>(p, bt, n1, i, j, *f, false, a, g);
        });
        return;
    }
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int x = 0; x < 2; x++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                at(warp * 16 + lane / 4 + 8 * h, nt * 8 + (lane % 4) * 2 + x, i, j, f);
                grad_at<false>(p, bt, n1, i, j, *f, full, s[nt][2 * h + x], dp[nt][2 * h + x]);
            }
}

/* f(b, n1, batch facts, i, lane) for each query row i < q_rows of the BM rows of one (item, head)
 * of a launch over L.items × Nq: a warp per row, its lanes beside each other. */
template <int BM, typename F> __device__ __forceinline__ void each_query_row(const fc_problem &p, const BwdLaunch &L, F f)
{
    const int nq = (int)p.Nq; /* 32-bit index math: the grid fits an int */
    const int2 item = L.items[blockIdx.x / nq];
    const int64_t b = item.x, n1 = blockIdx.x % nq;
    const fc_batch &bt = p.batch[b];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t m0 = (int64_t)item.y * BM, rows = m0 + BM < bt.q_rows ? m0 + BM : bt.q_rows;
    for (int64_t i = m0 + warp; i < rows; i += kWarps)
        f(b, n1, bt, i, lane);
}

/* D = Σ_e dO[i,e]·O[i,e] for the BM query rows of one (item, head): lanes over the features, a
 * fixed shuffle tree.  Rows past sq get 0.  eo, eg: bytes per element of O and dO; ld(x, dtype)
 * reads one. */
template <int BM, typename Ld>
__device__ __forceinline__ void dsum_rows(const fc_problem &p, const BwdLaunch &L, int64_t eo, int64_t eg, Ld ld)
{
    each_query_row<BM>(p, L, [&](int64_t b, int64_t n1, const fc_batch &bt, int64_t i, int lane) {
        float d = 0.0f;
        if (i < bt.sq) {
            const char *o = fc_view_row(&p.out, eo, b, bt.q_tok, n1, i), *g = fc_view_row(&p.dout, eg, b, bt.q_tok, n1, i);
            for (int64_t e = lane; e < p.Dv; e += 32)
                d = fmaf(ld(g + e * p.dout.se * eg, p.dout.dtype), ld(o + e * p.out.se * eo, p.out.dtype), d);
#pragma unroll
            for (int k = 16; k > 0; k /= 2)
                d += __shfl_xor_sync(0xffffffffu, d, k);
        }
        if (lane == 0)
            L.dsum[n1 * L.rows + L.row0[b] + i] = d;
    });
}

/* D with O and dO in the operands' dtype T. */
template <typename T, int BM>
__global__ void __launch_bounds__(kThreads) bwd_dsum_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    dsum_rows<BM>(p, L, 2, 2, [](const char *x, fc_dtype) { return Elem<T>::load(x); });
}

/* D with O and dO of any float dtypes (the kFeatF32 launches). */
template <int BM>
__global__ void __launch_bounds__(kThreads) bwd_dsum_any_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    dsum_rows<BM>(p, L, fc_dtype_bytes(p.out.dtype), fc_dtype_bytes(p.dout.dtype),
                  [](const char *x, fc_dtype dt) { return load_any(x, dt); });
}

constexpr int kSinkThreads = 256;

#ifndef FC_CUDA_BWD_SINK_ELSEWHERE /* the sm_90a backward's files include these pieces; backward.cu has the kernel */
/* dsink[n1] = −Σ_b Σ_i exp(sink − m_i)/l_i · D_i (semantics §3.3): one CTA per head, each thread
 * a fixed stride of the rows in double, then a fixed tree. */
__global__ void __launch_bounds__(kSinkThreads) bwd_dsink_kernel(const __grid_constant__ fc_problem p, const BwdLaunch L)
{
    __shared__ double part[kSinkThreads];
    const int64_t n1 = blockIdx.x;
    const double sink = fc_sink_at(&p, n1);
    double acc = 0.0;
    int64_t b = 0;
    for (int64_t r = threadIdx.x; r < L.rows; r += kSinkThreads) {
        while (b + 1 < p.B && L.row0[b + 1] <= r)
            b++;
        const fc_batch &bt = p.batch[b];
        const int64_t i = r - L.row0[b];
        if (i >= bt.sq)
            continue;
        const int64_t at = fc_stat_offset(&p, &bt, n1, i);
        const double ps = exp(sink - (double)p.stats.max[at]) / (double)p.stats.sum[at];
        if (ps != 0.0)
            acc -= ps * (double)L.dsum[n1 * L.rows + r];
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int k = kSinkThreads / 2; k > 0; k /= 2) {
        if ((int)threadIdx.x < k)
            part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        p.dsink[n1] = (float)part[0];
}
#endif

/* Stores row `row` of a gradient: scale·acc over the features of this thread's pairs of the 8-wide
 * column tiles d (first feature e0 + 8·d + 2·(lane mod 4)), those below n only. */
template <int DT>
__device__ __forceinline__ void store_grad_row(char *row, const fc_view &v, int64_t n, int e0, const float (&acc)[DT][4], int h,
                                               int lane, float scale)
{
    const int64_t es = fc_dtype_bytes(v.dtype);
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const int64_t e = e0 + d * 8 + (lane % 4) * 2 + c;
            if (e < n)
                store_any(row + e * v.se * es, v.dtype, acc[d][2 * h + c] * scale);
        }
}

/* store_grad_row over the features [lo, hi) of the tile's columns only, feature e at e − lo, in
 * the operands' dtype T (the rope kernels' gradients have it: fc_cuda_bwd_unsupported). */
template <typename T, int DT>
__device__ __forceinline__ void store_grad_part(char *row, const fc_view &v, int lo, int hi, int e0, const float (&acc)[DT][4], int h,
                                                int lane, float scale)
{
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const int e = e0 + d * 8 + (lane % 4) * 2 + c;
            if (e >= lo && e < hi)
                *(T *)(row + (int64_t)(e - lo) * v.se * 2) = T(acc[d][2 * h + c] * scale);
        }
}

/* Row i of head n of a query or key gradient g (batch b, token offset tok) from a tile of the
 * joint features (kFeatRope; first feature e0, as store_grad_row): the columns below Dqk go to g,
 * the next Dr to the rope gradient gr (rope_split.h's two ranges), one part after the other. */
template <typename T, int DT>
__device__ __forceinline__ void store_rope_grad_row(const fc_problem &p, const fc_view &g, const fc_view &gr, int64_t b, int64_t tok,
                                                    int64_t n, int64_t i, int e0, const float (&acc)[DT][4], int h, int lane,
                                                    float scale)
{
    const int dqk = (int)p.Dqk;
    store_grad_part<T, DT>(fc_view_row(&g, 2, b, tok, n, i), g, 0, dqk, e0, acc, h, lane, scale);
    store_grad_part<T, DT>(fc_view_row(&gr, 2, b, tok, n, i), gr, dqk, dqk + (int)p.Dr, e0, acc, h, lane, scale);
}

} // namespace fc_cuda

#endif /* FC_CUDA_BACKWARD_COMMON_CUH */
