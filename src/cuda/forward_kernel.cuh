/*
 * The forward kernel (FlashAttention-2 on mma.sync): one CTA = one query head × one tile of BM
 * query rows of one batch; WARPS warps, each owning 16·MT rows.  Per visible kv tile of BN columns:
 * S = Q·Kᵀ on tensor cores, the score terms (scale, pse, softcap, ALiBi, visibility, mask), an
 * online-softmax step in fp32 with exp2, dropout, O += P·V; one division at the end.  K and V
 * stream through shared memory with cp.async, each load overlapping the other's math (the
 * FlashAttention-2 pipeline).  Tiles no row can see are never loaded: the visibility model
 * (core/visibility.h, compiled here for the device) gives each row its spans.  Every output row
 * is produced by exactly one CTA in a fixed order, so results repeat bit for bit.
 */
#ifndef FC_CUDA_FORWARD_KERNEL_CUH
#define FC_CUDA_FORWARD_KERNEL_CUH

#include <float.h>

#include "features.cuh"
#include "tf32.cuh"
#include "nonfinite.cuh"
#include "decode_plan.h"
#include "vec_rule.h"

namespace fc_cuda {

/* What the host decided about a launch beyond the problem itself. */
struct FwdLaunch {
    const int2 *items; /* (batch, query tile) in launch order, heaviest first */
    int n_items;
    bool vec_q, vec_k, vec_v; /* rows are 16-byte aligned with unit feature stride: cp.async */
    bool terms;               /* pse, ALiBi, softcap or a mask: the per-element score path */
    bool pair_out;            /* the output takes two features per store (vec_rule.h fc_cuda_pair_fits) */
};

/* The launch of a kernel with kFeatPaged: the run's block-table fault word (its check kernel's,
 * decode_common.cuh dec_fault) and host-mapped report, and a tensor list's per-batch bases (they
 * travel with the launch, as the decode's do). */
struct FwdPagedLaunch : FwdLaunch {
    const unsigned long long *fault;
    DecReport *report;
    const char *k_list[kDecMaxList], *v_list[kDecMaxList];
};
/* How the forward kernels may touch the problem's views (cp.async rows, paired output stores) and
 * whether scores take the per-element path: the plan's rule, which the emulated tests take too. */
inline void fwd_launch_views(const fc_problem &p, FwdLaunch &L)
{
    const int es = p.q.dtype == FC_F32 ? 4 : 2; /* fp32 problems run fp32 tiles (kFeatF32), the rest 16-bit ones */
    L.vec_q = fc_cuda_vec_qk_fits(&p, &p.q, &p.q_rope, es);
    L.vec_k = p.k.batch_data ? fc_dec_vec_ok(&p.k, p.Dqk, es, p.B) : fc_cuda_vec_qk_fits(&p, &p.k, &p.k_rope, es);
    L.vec_v = p.k.batch_data ? fc_dec_vec_ok(&p.v, p.Dv, es, p.B) : fc_cuda_vec_fits(&p.v, p.Dv, es);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f;
    L.pair_out = fc_cuda_pair_fits(&p.out, es);
}

template <int FEAT> struct FwdArgsOf {
    using type = FwdLaunch;
};
template <> struct FwdArgsOf<kFeatPaged> {
    using type = FwdPagedLaunch;
};
template <> struct FwdArgsOf<kFeatPaged | kFeatF32> {
    using type = FwdPagedLaunch;
};

/* ES: bytes per operand element (2; 4 for fp32 operands). */
template <int D, int BM, int BN, int ES = 2> struct FwdSmem {
    static constexpr size_t q = (size_t)BM * D * ES, kv = (size_t)BN * D * ES;
    static constexpr size_t bytes = q + 2 * kv + (size_t)BM * (sizeof(int4) + 2 * sizeof(float));
    static constexpr size_t scratch = (size_t)BM * (BN + 8) * sizeof(float); /* + when terms or dropout */
};

/* One CTA's work.  PLAIN: no score terms and no dropout (the common case), compiled without their
 * code so that it costs no registers; FEAT: the features of features.cuh (never with PLAIN); T =
 * float with kFeatF32: fp32 operands and output, products as 3×TF32 (tf32.cuh). */
template <typename T, int D, int BM, int BN, int WARPS, bool PLAIN, int FEAT>
__device__ __forceinline__ void fwd_tile(const fc_problem &p, const typename FwdArgsOf<FEAT>::type &L)
{
    constexpr int MT = BM / (16 * WARPS), NT = BN / 8, DT = D / 8, THREADS = 32 * WARPS, ES = (int)sizeof(T);
    constexpr bool F32 = (FEAT & kFeatF32) != 0;
    static_assert(F32 == (ES == 4) && !(F32 && (FEAT & kFeatRope)), "fp32 operands are the kFeatF32 kernels' (no rope)");
    static_assert(BM % (16 * WARPS) == 0 && BM <= THREADS, "each warp owns whole 16-row slices; a thread per row");
    using Sm = FwdSmem<D, BM, BN, ES>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sK = reinterpret_cast<T *>(smem_raw + Sm::q);
    T *sV = reinterpret_cast<T *>(smem_raw + Sm::q + Sm::kv);
    int4 *sSpan = reinterpret_cast<int4 *>(smem_raw + Sm::q + 2 * Sm::kv);
    float *sSlope = reinterpret_cast<float *>(sSpan + BM), *sApos = sSlope + BM, *sS = sApos + BM;
    __shared__ int s_kv_lo, s_kv_hi, s_full_lo, s_full_hi, s_gaps, s_poisoned;
    __shared__ uint32_t sPoison[BM * D / 16]; /* poison_mark's table (tile.cuh), zeroed when first used */

    if constexpr ((FEAT & kFeatPaged) != 0) { /* a bad block-table entry (the check kernel's word): nothing is written */
        const unsigned long long fault = p.k.pages.table || p.v.pages.table ? *L.fault : 0ull;
        if (fault >> 32) {
            if (blockIdx.x == 0 && threadIdx.x == 0)
                dec_report(L.report, p, nullptr, fault, true);
            return;
        }
    }
    const int2 item = L.items[blockIdx.x / p.Nq];
    const int64_t b = item.x, n1 = blockIdx.x % p.Nq, n2 = n1 / p.G;
    const fc_batch &bt = p.batch[b]; /* read where used: a register copy would crowd the tile */
    const int m0 = item.y * BM;
    const int rows_here = clamp_rows(BM, bt.q_rows - m0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    /* Each row's visible spans (and ALiBi frame); the CTA's kv range is their union.  When every
     * row sees one run of columns (no prefix gap), the tiles every row sees whole are one range
     * [s_full_lo, s_full_hi) too, and the loop needs no per-tile votes; rows with a gap between
     * their two spans (s_gaps) make the CTA vote per tile which tiles to visit and which are whole. */
    if (tid == 0)
        s_kv_lo = INT_MAX, s_kv_hi = 0, s_full_lo = 0, s_full_hi = INT_MAX, s_gaps = 0, s_poisoned = 0;
    __syncthreads();
    if (tid < BM) {
        float slope, apos;
        double aoff;
        const int4 sp = row_frame(p, bt, b, n1, m0 + tid, tid < rows_here, slope, apos, aoff);
        if (tid < rows_here) { /* rows past the batch's last query are never written: they count as whole */
            const bool seen = sp.x < sp.y || sp.z < sp.w;
            const bool one = sp.y <= sp.x || sp.w <= sp.z || sp.y == sp.z; /* one run of columns */
            const int a = sp.y > sp.x ? sp.x : sp.z, z = sp.w > sp.z ? sp.w : sp.y;
            if (seen) {
                atomicMin(&s_kv_lo, a);
                atomicMax(&s_kv_hi, z);
            }
            if (!one)
                s_gaps = 1;
            atomicMax(&s_full_lo, seen ? (a + BN - 1) / BN : INT_MAX);
            atomicMin(&s_full_hi, seen ? z / BN : 0);
        }
        sSpan[tid] = sp, sSlope[tid] = slope, sApos[tid] = apos;
    }
    const int q_valid = clamp_rows(BM, bt.sq - m0);
    load_qk<FEAT, T, D, BM, THREADS>(sQ, p, p.q, fc_view_row(&p.q, ES, b, bt.q_tok, n1, 0), p.q_rope, b, bt.q_tok, n1, m0, q_valid,
                                     L.vec_q);
    cp_async_commit();
    __syncthreads();
    const int kv_lo = s_kv_lo, kv_hi = s_kv_hi, full_lo = s_full_lo, full_hi = s_full_hi;
    const bool votes = s_gaps != 0;

    /* Whether some row sees a column of tile t; tiles no row sees are skipped unloaded. */
    auto touches = [&](int t) {
        const int4 s = sSpan[tid];
        const int a = t * BN, z = a + BN;
        return tid < rows_here && ((s.x < z && a < s.y) || (s.z < z && a < s.w));
    };
    auto covers = [&](int t) { /* every written row sees every column of tile t */
        const int4 s = sSpan[tid];
        const int a = t * BN, z = a + BN;
        return tid >= rows_here || tid >= BM || (s.x <= a && z <= s.y) || (s.z <= a && z <= s.w);
    };
    const int t_end = kv_lo < kv_hi ? (kv_hi + BN - 1) / BN : 0;
    auto next_tile = [&](int t) { /* without gaps every tile of [kv_lo, kv_hi) is seen by some row */
        while (votes && t < t_end && !__syncthreads_or(tid < BM && touches(t)))
            t++;
        return t;
    };

    /* Rows of this thread: r(mt, h) = warp·16·MT + mt·16 + lane/4 + 8h. */
    float m[MT][2], l[MT][2], acc[MT][DT][4];
    const float scale = p.scale;
    const bool fold_scale = (PLAIN || !L.terms) && scale > 0.0f; /* the score terms path applies the scale itself */
    const float xmul = fold_scale ? scale : 1.0f, xmul_log2e = xmul * kLog2e;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            m[mt][h] = -INFINITY, l[mt][h] = 0.0f; /* the sink joins at the end (fc_fold_sink) */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int d = 0; d < DT; d++)
            acc[mt][d][0] = acc[mt][d][1] = acc[mt][d][2] = acc[mt][d][3] = 0.0f;

    const int64_t skv = bt.skv;
    const char *k_row0 = kv_row0<FEAT>(p.k, L, false, ES, b, bt.kv_tok, n2), *v_row0 = kv_row0<FEAT>(p.v, L, true, ES, b, bt.kv_tok, n2);
    int t = next_tile(kv_lo / BN);
    if constexpr ((FEAT & kFeatPaged) != 0) {
        if (t < t_end)
            load_kv<FEAT, T, D, BN, THREADS>(sK, p.k, k_row0, b, n2, (int64_t)t * BN, clamp_rows(BN, skv - (int64_t)t * BN),
                                             (int)p.Dqk, L.vec_k);
    } else if (t < t_end)
        load_qk<FEAT, T, D, BN, THREADS>(sK, p, p.k, k_row0, p.k_rope, b, bt.kv_tok, n2, (int64_t)t * BN,
                                         clamp_rows(BN, skv - t * BN), L.vec_k);
    cp_async_commit();

    while (t < t_end) {
        const int j0 = t * BN, kv_valid = clamp_rows(BN, skv - j0);
        cp_async_wait_all();
        __syncthreads(); /* K(t) (and Q) arrived; every warp is done with V(t − 1) */
        if constexpr ((FEAT & kFeatPaged) != 0)
            load_kv<FEAT, T, D, BN, THREADS>(sV, p.v, v_row0, b, n2, j0, kv_valid, (int)p.Dv, L.vec_v);
        else
            load_tile<T, D, BN, THREADS>(sV, p.v, v_row0, j0, kv_valid, (int)p.Dv, L.vec_v);
        cp_async_commit();

        float s[MT][NT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
                s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
        if constexpr (F32)
            qk_3xtf32<D, MT, NT>(s, sQ, sK, warp, lane);
        else {
#pragma unroll
            for (int ks = 0; ks < D / 16; ks++) {
                uint32_t a[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    const int row = warp * 16 * MT + mt * 16 + lane % 16;
                    ldsm_x4(a[mt], sQ + swz<D>(row, ks * 2 + lane / 16));
                }
#pragma unroll
                for (int nt = 0; nt < NT; nt += 2) {
                    uint32_t bk[4];
                    const int row = nt * 8 + lane % 8 + (lane / 16) * 8;
                    ldsm_x4(bk, sK + swz<D>(row, ks * 2 + (lane / 8) % 2));
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        mma16816<T>(s[mt][nt], a[mt], bk[0], bk[1]);
                        mma16816<T>(s[mt][nt + 1], a[mt], bk[2], bk[3]);
                    }
                }
            }
        }

        cp_async_wait_all();
        /* V(t) arrived; K(t) is free */
        const bool full = votes ? __syncthreads_and(tid >= BM || covers(t)) : (__syncthreads(), t >= full_lo && t < full_hi);
        /* a tile that hides pairs checks its values (the CTA's threads each their share) and takes
         * the non-finite ones out of P·V (poison_mark; s_poisoned as last written before a barrier) */
        if ((!full || (!PLAIN && p.mask.data)) && __syncthreads_or(tile_nonfinite<T, D, BN, THREADS>(sV, tid))) {
            if (!s_poisoned) {
#pragma unroll 1
                for (int x = tid; x < BM * D / 16; x += THREADS)
                    sPoison[x] = 0u;
                __syncthreads();
            }
            poison_mark<T, D, BN, THREADS>(sV, sPoison, rows_here, tid, [&](int r, int j) {
                return span_has(sSpan[r], j0 + j) && (PLAIN || !mask_hides(p, bt, n1, m0 + r, j0 + j));
            });
            if (tid == 0)
                s_poisoned = 1;
            __syncthreads();
        }
        const int t_next = next_tile(t + 1);
        if constexpr ((FEAT & kFeatPaged) != 0) {
            if (t_next < t_end)
                load_kv<FEAT, T, D, BN, THREADS>(sK, p.k, k_row0, b, n2, (int64_t)t_next * BN,
                                                 clamp_rows(BN, skv - (int64_t)t_next * BN), (int)p.Dqk, L.vec_k);
        } else if (t_next < t_end)
            load_qk<FEAT, T, D, BN, THREADS>(sK, p, p.k, k_row0, p.k_rope, b, bt.kv_tok, n2, (int64_t)t_next * BN,
                                             clamp_rows(BN, skv - (int64_t)t_next * BN), L.vec_k);
        cp_async_commit();

        /* Score terms: the plain path (scale, visibility) in registers; pse, softcap, ALiBi and
         * masks per element through the warp's rows of a shared scratch tile, so that their code
         * is not unrolled over the register tile. */
        if (!PLAIN && L.terms) {
            through_scratch<MT, NT, BN>(s, sS, warp, lane, [&](float v, int r, int x) {
                return score_terms(p, bt, n1, m0 + r, j0 + x, v, sSpan[r], sSlope[r], sApos[r]);
            });
        } else {
            /* A positive scale keeps the order of the maximum, so it is folded into the exponent
             * below (one FFMA per element instead of an FMUL more); any other is applied here. */
            if (!fold_scale) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            s[mt][nt][e] *= scale;
            }
            if (!full) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int4 sp = sSpan[warp * 16 * MT + mt * 16 + lane / 4 + 8 * h];
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int c = 0; c < 2; c++) {
                                float &x = s[mt][nt][2 * h + c];
                                x = span_has(sp, j0 + nt * 8 + (lane % 4) * 2 + c) ? x : -INFINITY;
                            }
                    }
            }
        }

        /* The online-softmax step per row (a quad of lanes shares a row): P = exp2((x − m)·log2 e).
         * The plain path leaves a positive scale to this step (xmul). */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float tmx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    tmx = max_nan(tmx, max_nan(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
                tmx = max_nan(tmx, __shfl_xor_sync(0xffffffffu, tmx, 1));
                tmx = max_nan(tmx, __shfl_xor_sync(0xffffffffu, tmx, 2));
                const float mx = max_nan(m[mt][h], tmx * xmul);
                const float ref2 = (mx == -INFINITY ? 0.0f : mx) * kLog2e;
                const float alpha = fast_exp2(m[mt][h] * kLog2e - ref2);
                m[mt][h] = mx;
                float sum = 0.0f;
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int c = 0; c < 2; c++) {
                        float &x = s[mt][nt][2 * h + c];
                        x = fast_exp2(fmaf(x, xmul_log2e, -ref2));
                        sum += x;
                    }
                l[mt][h] = fmaf(l[mt][h], alpha, sum);
#pragma unroll
                for (int d = 0; d < DT; d++)
                    acc[mt][d][2 * h] *= alpha, acc[mt][d][2 * h + 1] *= alpha;
            }

        /* Dropped probabilities leave the sum (semantics §2.7) but not O.  Rows past the batch's
         * last query (a partial tile) have no keep bits: they are never written, so skip them. */
        if (!PLAIN && drops<FEAT>(p))
            through_scratch<MT, NT, BN>(s, sS, warp, lane, [&](float v, int r, int x) {
                return v != 0.0f && r < rows_here && !keeps<FEAT>(p, bt, n1, m0 + r, j0 + x) ? 0.0f : v;
            });

        /* O += P·V: the score accumulators of two adjacent n-tiles are the A fragment of one k-step. */
        if constexpr (F32)
            pv_3xtf32<D, MT, NT, BN>(acc, s, sS, sV, warp, lane);
        else {
#pragma unroll
            for (int ks = 0; ks < BN / 16; ks++) {
                uint32_t a[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    a[mt][0] = Elem<T>::pack(s[mt][2 * ks][0], s[mt][2 * ks][1]);
                    a[mt][1] = Elem<T>::pack(s[mt][2 * ks][2], s[mt][2 * ks][3]);
                    a[mt][2] = Elem<T>::pack(s[mt][2 * ks + 1][0], s[mt][2 * ks + 1][1]);
                    a[mt][3] = Elem<T>::pack(s[mt][2 * ks + 1][2], s[mt][2 * ks + 1][3]);
                }
#pragma unroll
                for (int d = 0; d < DT; d += 2) {
                    uint32_t bv[4];
                    const int row = ks * 16 + lane % 8 + ((lane / 8) % 2) * 8;
                    ldsm_x4_t(bv, sV + swz<D>(row, d + lane / 16));
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        mma16816<T>(acc[mt][d], a[mt], bv[0], bv[1]);
                        mma16816<T>(acc[mt][d + 1], a[mt], bv[2], bv[3]);
                    }
                }
            }
        }
        t = t_next;
    }
    cp_async_wait_all();

    /* One division per row, then O and the statistics (semantics §2.6, §2.8). */
    const float inv_keep = drops<FEAT>(p) ? 1.0f / p.keep_prob : 1.0f;
    const bool poison = s_poisoned != 0;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = warp * 16 * MT + mt * 16 + lane / 4 + 8 * h;
            float sum = l[mt][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            if (r >= rows_here)
                continue;
            const int64_t i = m0 + r;
            auto row_aoff = [&] { /* the row's ALiBi frame (terms.h) */
                double aoff = 0.0;
                if (p.alibi.slopes) {
                    float ap;
                    fc_alibi_frame(&bt, i, sSlope[r], p.alibi.sqrt_distance, &ap, &aoff);
                }
                return aoff;
            };
            fc_sink_fold fd = {sum, 1.0f, false};
            if (p.sink && i < bt.sq) /* the frame is made here and again for the statistics (no double stays live) */
                fd = fc_fold_sink(fc_sink_at(&p, n1), m[mt][h], row_aoff(), sum);
            sum = fd.l;
            const bool empty = sum == 0.0f; /* a NaN sum (NaN or +inf logit or sink) leaves the row NaN (§0.3) */
            const float f = empty ? 0.0f : fd.w * inv_keep / sum;
            if (poison && empty && lane % 4 == 0)
                poison_clear_row<D>(sPoison, r);
            if (p.stats.max && lane % 4 == 0)
                fc_stat_store(&p.stats, fc_stat_offset(&p, &bt, n1, i),
                              empty ? -FLT_MAX : fd.sink_max ? fc_sink_at(&p, n1) : (float)(m[mt][h] + row_aoff()), empty ? FLT_MAX : sum);
            char *row = fc_view_row(&p.out, ES, b, bt.q_tok, n1, i);
#pragma unroll
            for (int d = 0; d < DT; d++) {
                const int e = d * 8 + (lane % 4) * 2;
                const float x0 = empty ? 0.0f : acc[mt][d][2 * h] * f, x1 = empty ? 0.0f : acc[mt][d][2 * h + 1] * f;
                if (e >= p.Dv)
                    break;
                if (L.pair_out && e + 1 < p.Dv) {
                    if constexpr (F32)
                        *(float2 *)(row + e * ES) = make_float2(x0, x1);
                    else
                        *(uint32_t *)(row + e * 2) = Elem<T>::pack(x0, x1);
                } else {
                    *(T *)(row + e * p.out.se * ES) = T(x0);
                    if (e + 1 < p.Dv)
                        *(T *)(row + (e + 1) * p.out.se * ES) = T(x1);
                }
            }
        }
    if (poison) { /* the values poison_mark took out of P·V, added to the stored outputs */
        __syncthreads();
        poison_outputs<T, D>(sPoison, rows_here, (int)p.Dv, fc_view_row(&p.out, ES, b, bt.q_tok, n1, m0), p.out.ss * ES, p.out.se, tid,
                             THREADS); /* the output is neither paged nor a list: rows lie ss apart */
    }
}

/* Tile shapes per head-dim class: rows BM (16·MT per warp) × kv columns BN, WARPS warps; BN_TERMS
 * the kv columns of the kernel with score terms or dropout (more code, more registers).  Chosen on
 * an H100 among shapes that ptxas fits without local-memory spills (docs/PERFORMANCE.md keeps the
 * variants tried and their rates).  Experiment builds try another shape for one class with
 * -DFC_FWD_TRY_D=<class> -DFC_FWD_TRY_BM=.. -DFC_FWD_TRY_BN=.. -DFC_FWD_TRY_WARPS=.. */
#ifndef FC_FWD_TRY_D
#define FC_FWD_TRY_D 0
#define FC_FWD_TRY_BM 0
#define FC_FWD_TRY_BN 0
#define FC_FWD_TRY_WARPS 0
#endif
template <int D, int BM_, int BN_, int BN_TERMS_, int WARPS_> struct FwdShapeOf {
    static constexpr bool tried = D == FC_FWD_TRY_D;
    static constexpr int BM = tried ? FC_FWD_TRY_BM : BM_, BN = tried ? FC_FWD_TRY_BN : BN_,
                         BN_TERMS = tried ? FC_FWD_TRY_BN : BN_TERMS_, WARPS = tried ? FC_FWD_TRY_WARPS : WARPS_;
};
template <int D> struct FwdShape;
template <> struct FwdShape<64> : FwdShapeOf<64, 128, 64, 64, 4> {};
template <> struct FwdShape<128> : FwdShapeOf<128, 64, 96, 64, 4> {};
template <> struct FwdShape<256> : FwdShapeOf<256, 64, 32, 16, 4> {};

template <typename T, int D, int BM, int BN, int WARPS, bool PLAIN>
__global__ void __launch_bounds__(32 * WARPS) fwd_kernel(const __grid_constant__ fc_problem p, const FwdLaunch L)
{
    fwd_tile<T, D, BM, BN, WARPS, PLAIN, 0>(p, L);
}

/* The same with the features FEAT (the kernels above keep their code); kFeatPaged's launch brings
 * more (FwdPagedLaunch). */
template <typename T, int D, int BM, int BN, int WARPS, int FEAT>
__global__ void __launch_bounds__(32 * WARPS)
    fwd_feat_kernel(const __grid_constant__ fc_problem p, const __grid_constant__ typename FwdArgsOf<FEAT>::type L)
{
    fwd_tile<T, D, BM, BN, WARPS, false, FEAT>(p, L);
}

/* A kFeatPaged run's block-table check, launched before its forward on the same stream (one CTA
 * of THREADS per batch): every key and value entry that covers the batch's kv positions, the bad
 * ones into the fault word (zeroed by the run), which the forward's CTAs read before they start.
 * (A template: a header's kernel is then defined once, in the files that launch it.) */
template <int THREADS>
__global__ void __launch_bounds__(THREADS) fwd_page_check_kernel(const __grid_constant__ fc_problem p, unsigned long long *fault)
{
    const int64_t b = blockIdx.x;
    dec_check_table(fault, p, b, p.batch[b].skv, threadIdx.x, THREADS);
}

} // namespace fc_cuda

#endif /* FC_CUDA_FORWARD_KERNEL_CUH */
