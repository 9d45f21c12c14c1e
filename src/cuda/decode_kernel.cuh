/*
 * The decode kernels (flash-decoding on CUDA cores, fp32 FMA): a few query rows per batch
 * against a long KV cache is memory-bound, so the work is organised around reading the cache once
 * at full bandwidth.
 *
 * dec_split_kernel: one CTA = one kv head n2 of one batch × one slice (split) of the batch's
 * visible kv range, serving all R = G·QR query rows of that kv head (the G query heads of the
 * group × up to QR positions) from one read of the cache.  K and V tiles of TN positions stream
 * into shared memory through a kStages-deep cp.async pipeline (16-byte loads, several tiles in
 * flight); a row's address is looked up once per tile (block table for paged storage, list base
 * for per-batch tensors), so the layouts differ only there.  Per tile: S = q·kᵀ (each position
 * spread over DC/8 lanes, 8 features per lane, reduced by shuffles), the score terms, an online
 * softmax step per row, O += P·V.  int8 K/V are dequantised per feature in registers.  The CTA
 * leaves its (O, m, l) in a workspace slot.
 *
 * dec_merge_kernel: per (batch, kv head), combines the split slots in split order (and the sink)
 * by their log-sum-exp, divides once and writes the rows in the output dtype (int8 quantised,
 * semantics §4.6) with the statistics.  No atomics touch the arithmetic: results repeat bit for bit.
 *
 * Block tables: every entry that covers a position below the batch's kv length is checked on the
 * GPU by the split kernel; a bad one is recorded in the run's fault word (in its workspace), and
 * the merge kernel of that run then writes nothing (the outputs keep their contents) and reports
 * the entry to host-mapped memory, where the next run of the plan reads it (decode.cu).
 */
#ifndef FC_CUDA_DECODE_KERNEL_CUH
#define FC_CUDA_DECODE_KERNEL_CUH

#include "decode_common.cuh"
#include "forward_kernel.cuh"

namespace fc_cuda {

constexpr int kDecThreads = 128, kDecStages = 3, kDecMaxRows = 64;

/* What the host decided about a launch beyond the problem itself. */
struct DecLaunch {
    float *partial;                 /* [B][Nkv][nsplit][slot] */
    unsigned long long *fault;      /* the run's fault word (dec_fault), zeroed by the run */
    DecReport *report;              /* host-mapped */
    const int64_t *kv_lens;         /* the run's kv lengths (device), or NULL (dec_batch) */
    int nsplit, rows, qr, slot;     /* rows = G·qr per CTA; slot = rows·(DC + 2) floats */
    bool vec_k, vec_v, terms;
    const char *k_list[kDecMaxList], *v_list[kDecMaxList]; /* tensor-list storage: per-batch bases */
};

/* Tile shape per element size and head-dim class: TN positions make a 16 KiB K+V stage. */
template <typename KT, int DC> struct DecShape {
    static constexpr int ES = (int)sizeof(KT), TN = 4096 / DC * (2 / ES), L = DC / 8, P = kDecThreads / L;
    static constexpr int CR = DC * ES / 16; /* 16-byte chunks per row */
    static constexpr size_t stage = (size_t)2 * TN * DC * ES;
};

/* Shared memory of a split CTA serving `rows` rows. */
template <typename KT, int DC> __host__ __device__ constexpr size_t dec_smem_bytes(int rows)
{
    using S = DecShape<KT, DC>;
    return kDecStages * S::stage + (size_t)rows * DC * 4 /* Q */ + (size_t)rows * S::TN * 5 /* S, hidden */ +
           (size_t)kDecStages * 2 * S::TN * sizeof(void *) + (size_t)rows * (sizeof(int4) + 5 * sizeof(float));
}

/* The 8 features [8c, 8c + 8) of a row in shared memory as fp32, int8 through the affine map. */
template <typename KT> struct DecLoad {
    static __device__ __forceinline__ void run(const KT *row, int c, const float *, const float *, float (&x)[8])
    {
        const uint4 w = *reinterpret_cast<const uint4 *>(row + 8 * c);
        const KT *h = reinterpret_cast<const KT *>(&w);
#pragma unroll
        for (int e = 0; e < 8; e++)
            x[e] = (float)h[e];
    }
};
template <> struct DecLoad<int8_t> {
    static __device__ __forceinline__ void run(const int8_t *row, int c, const float *scale, const float *offset,
                                               float (&x)[8])
    {
        const uint2 w = *reinterpret_cast<const uint2 *>(row + 8 * c);
        const int8_t *h = reinterpret_cast<const int8_t *>(&w);
#pragma unroll
        for (int e = 0; e < 8; e++)
            x[e] = ((float)h[e] + offset[e]) * scale[e];
    }
};

/* Whether the explicit mask hides (n1, i, j) of the batch. */
__device__ __forceinline__ bool dec_masked(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int64_t j)
{
    return p.mask.data[bt.mask_base + n1 * p.mask.sn + i * p.mask.si + j * p.mask.sj] != 0;
}

/* The per-element score terms, kept out of line: only problems with pse, ALiBi, softcap or a mask
 * call it, and inlined four times over it would crowd the unrolled loop. */
__device__ __noinline__ float dec_terms(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int j, float x, int4 span,
                                        float slope, float apos)
{
    return score_terms(p, bt, n1, i, j, x, span, slope, apos);
}

/* Sums RB values over the LN lanes of a group (LN ≥ RB, powers of two) with RB − 1 + log2(LN/RB)
 * shuffles instead of RB·log2(LN): at each halving step a lane keeps one half of its values and
 * trades the other half with its partner, so lane c ends with the full sum of value c / (LN/RB).
 * A fixed order: the same bits every run. */
template <int RB, int LN> __device__ __forceinline__ float reduce_rows(float (&v)[RB], int c)
{
    int off = LN / 2;
#pragma unroll
    for (int n = RB; n > 1; n /= 2, off /= 2) {
        const bool upper = (c & off) != 0;
#pragma unroll
        for (int k = 0; k < n / 2; k++) {
            const float send = upper ? v[k] : v[k + n / 2], keep = upper ? v[k + n / 2] : v[k];
            v[k] = keep + __shfl_xor_sync(0xffffffffu, send, off);
        }
    }
#pragma unroll
    for (; off > 0; off /= 2)
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], off);
    return v[0];
}

/* scale[e], offset[e] of features [8c, 8c + 8) of head n (zeros past d). */
__device__ __forceinline__ void dec_affine(const fc_affine_view &a, int64_t n, int c, int d, float (&scale)[8], float (&offset)[8])
{
    const int es = (int)fc_dtype_bytes(a.dtype);
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const int f = c * 8 + e;
        const int64_t at = (n * a.sn + (int64_t)f * a.se) * es;
        scale[e] = f < d ? load_any(a.scale + at, a.dtype) : 0.0f;
        offset[e] = f < d && a.offset ? load_any(a.offset + at, a.dtype) : 0.0f;
    }
}

template <typename KT, int DC, int RB>
__global__ void __launch_bounds__(kDecThreads, RB == 4 ? 3 : 1) dec_split_kernel(const __grid_constant__ fc_problem p,
                                                                const __grid_constant__ DecLaunch L)
{
    using Sh = DecShape<KT, DC>;
    constexpr int TN = Sh::TN, LN = Sh::L, P = Sh::P, ES = Sh::ES, CR = Sh::CR;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const int R = L.rows;
    unsigned char *stages = smem_raw;
    float *sQ = reinterpret_cast<float *>(smem_raw + kDecStages * Sh::stage);
    float *sS = sQ + R * DC;
    const char **sPtr = reinterpret_cast<const char **>(sS + R * TN); /* [stage][K, V][TN] */
    int4 *sSpan = reinterpret_cast<int4 *>(sPtr + kDecStages * 2 * TN);
    float *sSlope = reinterpret_cast<float *>(sSpan + R), *sApos = sSlope + R, *sM = sApos + R, *sL = sM + R,
          *sAlpha = sL + R;
    unsigned char *sHid = reinterpret_cast<unsigned char *>(sAlpha + R); /* [R][TN] */
    __shared__ int s_lo, s_hi;
    __shared__ fc_batch sBt;

    const int64_t b = blockIdx.z, n2 = blockIdx.y;
    const int split = blockIdx.x, tid = threadIdx.x;
    const fc_batch &bt = sBt;
    const char *k_base = p.k.batch_data ? L.k_list[b] : nullptr, *v_base = p.v.batch_data ? L.v_list[b] : nullptr;
    if (tid == 0 && !dec_batch(p, L.kv_lens, b, &sBt))
        dec_fault(L.fault, p, 2, b, 0); /* a run length out of range: nothing is written */
    __syncthreads();

    /* Every block-table entry the batch covers, spread over the batch's CTAs of kv head 0. */
    if (n2 == 0)
        dec_check_table(L.fault, p, b, bt.skv, split * kDecThreads + tid, L.nsplit * kDecThreads);

    /* Rows r = g·qr + i (query head n2·G + g, position i): spans, ALiBi frame, softmax state. */
    if (tid == 0)
        s_lo = INT_MAX, s_hi = 0;
    __syncthreads();
    for (int r = tid; r < R; r += kDecThreads) {
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        double aoff;
        const int4 sp = row_frame(p, bt, b, n1, i, i < bt.q_rows, sSlope[r], sApos[r], aoff);
        if (sp.y > sp.x || sp.w > sp.z) {
            atomicMin(&s_lo, sp.y > sp.x ? sp.x : sp.z);
            atomicMax(&s_hi, sp.w > sp.z ? sp.w : sp.y);
        }
        sSpan[r] = sp, sM[r] = -INFINITY, sL[r] = 0.0f;
    }
    /* The query rows as fp32 (zeros past Dqk and for rows that do not exist). */
    const int qes = (int)fc_dtype_bytes(p.q.dtype);
    for (int x = tid; x < R * DC; x += kDecThreads) {
        const int r = x / DC, e = x % DC;
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        sQ[x] = i < bt.sq && e < p.Dqk ? load_any(fc_view_row(&p.q, qes, b, bt.q_tok, n1, i) + (int64_t)e * p.q.se * qes, p.q.dtype)
                                       : 0.0f;
    }
    __syncthreads();

    /* This split's slice [a, z) of the visible range, in whole tiles counted from its start. */
    const int lo = s_lo, hi = s_hi;
    const int64_t len = hi > lo ? hi - lo : 0;
    const int64_t chunk = ((len + L.nsplit - 1) / L.nsplit + TN - 1) / TN * TN;
    const int64_t a = lo + split * chunk, z = a + chunk < hi ? a + chunk : hi;
    const int n_tiles = z > a ? (int)((z - a + TN - 1) / TN) : 0;

    /* Thread roles in the products: feature chunk c, row group rg (RB rows), position class pp. */
    int pr = 1;
    while (pr * RB < R)
        pr *= 2;
    const int pp_count = P / pr, c = tid % LN, rg = (tid / LN) % pr, pp = tid / LN / pr;
    float q[RB][8], acc[RB][8];
#pragma unroll
    for (int k = 0; k < RB; k++)
#pragma unroll
        for (int e = 0; e < 8; e++) {
            const int r = rg * RB + k;
            q[k][e] = r < R ? sQ[r * DC + c * 8 + e] : 0.0f;
            acc[k][e] = 0.0f;
        }
    float ksc[8], kof[8], vsc[8], vof[8]; /* int8: the thread's features' dequantisation */
    if (ES == 1) {
        dec_affine(p.k.dequant, n2, c, (int)p.Dqk, ksc, kof);
        dec_affine(p.v.dequant, n2, c, (int)p.Dv, vsc, vof);
    }

    /* Row addresses of tile t into its stage's pointer slots (NULL: not loaded, zeros). */
    auto addresses = [&](int t) {
        const char **ptr = sPtr + (t % kDecStages) * 2 * TN;
        for (int x = tid; x < 2 * TN; x += kDecThreads) {
            const int which = x / TN;
            const int64_t s = a + (int64_t)t * TN + x % TN;
            ptr[x] = t < n_tiles && s < z ? dec_row(which ? p.v : p.k, which ? v_base : k_base, ES, b, bt.kv_tok, n2, s) : nullptr;
        }
    };
    auto issue = [&](int t) {
        if (t < n_tiles) {
            const char *const *ptr = sPtr + (t % kDecStages) * 2 * TN;
            unsigned char *dst0 = stages + (t % kDecStages) * Sh::stage;
            for (int x = tid; x < 2 * TN * CR; x += kDecThreads) {
                const int which = x / (TN * CR), row = x / CR % TN, ch = x % CR;
                const char *src = ptr[which * TN + row];
                const int dvalid = (int)(which ? p.Dv : p.Dqk) * ES;
                unsigned char *dst = dst0 + (size_t)which * TN * DC * ES + (size_t)row * DC * ES + ch * 16;
                if (which ? L.vec_v : L.vec_k) {
                    const int bytes = src && ch * 16 < dvalid ? 16 : 0;
                    cp_async16(dst, bytes ? src + ch * 16 : (const char *)L.partial, bytes);
                } else { /* any strides: element loads */
                    const int64_t se = which ? p.v.se : p.k.se;
                    for (int k = 0; k < 16 / ES; k++) {
                        const int e = ch * (16 / ES) + k;
                        reinterpret_cast<KT *>(dst)[k] = src && e * ES < dvalid ? *(const KT *)(src + e * se * ES) : KT(0);
                    }
                }
            }
        }
        cp_async_commit();
    };

    for (int t = 0; t < kDecStages; t++)
        addresses(t);
    __syncthreads();
    for (int t = 0; t < kDecStages - 1; t++)
        issue(t);

    const float scale = p.scale;
    for (int t = 0; t < n_tiles; t++) {
        cp_async_wait<kDecStages - 2>();
        __syncthreads(); /* tile t arrived; every thread is done with tile t − 1 */
        issue(t + kDecStages - 1);
        const KT *sK = reinterpret_cast<const KT *>(stages + (t % kDecStages) * Sh::stage), *sV = sK + TN * DC;
        const int64_t j0 = a + (int64_t)t * TN;

        /* S = q·kᵀ for the thread's rows at its positions, reduced over the LN lanes of a position;
         * four positions at a time (a multiple of four per thread: TN / pp_count = TN·pr / P). */
        for (int jj0 = pp; jj0 < TN; jj0 += 4 * pp_count) {
            float dot[4][RB], x[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                float kx[8];
                DecLoad<KT>::run(sK + (jj0 + u * pp_count) * DC, c, ksc, kof, kx);
#pragma unroll
                for (int k = 0; k < RB; k++) {
                    dot[u][k] = 0.0f;
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        dot[u][k] = fmaf(q[k][e], kx[e], dot[u][k]);
                }
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                x[u] = reduce_rows<RB, LN>(dot[u], c); /* row rg·RB + c / (LN / RB), complete */
            const int r = rg * RB + c / (LN / RB);
            if (c % (LN / RB) == 0 && r < R)
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const int jj = jj0 + u * pp_count;
                    const int64_t j = j0 + jj;
                    bool hidden = j >= z || !span_has(sSpan[r], (int)j);
                    if (!hidden && p.mask.data)
                        hidden = dec_masked(p, bt, n2 * p.G + r / L.qr, r % L.qr, j);
                    sHid[r * TN + jj] = hidden;
                    sS[r * TN + jj] = hidden    ? -INFINITY
                                      : L.terms ? dec_terms(p, bt, n2 * p.G + r / L.qr, r % L.qr, (int)j, x[u], sSpan[r], sSlope[r], sApos[r])
                                                : x[u] * scale;
                }
        }
        addresses(t + kDecStages);
        __syncthreads();

        /* The online-softmax step, one warp per row: P = exp(x − m) (hidden: −0, skipped by P·V). */
        const int warp = tid / 32, lane = tid % 32;
        for (int r = warp; r < R; r += kDecThreads / 32) {
            float mx = -INFINITY;
            for (int jj = lane; jj < TN; jj += 32)
                mx = max_nan(mx, sS[r * TN + jj]);
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                mx = max_nan(mx, __shfl_xor_sync(0xffffffffu, mx, off));
            const float m_old = sM[r], m_new = max_nan(m_old, mx);
            const float ref2 = (m_new == -INFINITY ? 0.0f : m_new) * kLog2e;
            float sum = 0.0f;
            for (int jj = lane; jj < TN; jj += 32) {
                float &x = sS[r * TN + jj];
                x = sHid[r * TN + jj] ? -0.0f : exp2f(fmaf(x, kLog2e, -ref2));
                sum += x;
            }
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                sum += __shfl_xor_sync(0xffffffffu, sum, off);
            if (lane == 0) {
                const float alpha = exp2f(m_old * kLog2e - ref2);
                sM[r] = m_new, sAlpha[r] = alpha, sL[r] = fmaf(sL[r], alpha, sum);
            }
        }
        __syncthreads();

        /* O = O·alpha + P·V. */
#pragma unroll
        for (int k = 0; k < RB; k++) {
            const int r = rg * RB + k;
            const float al = r < R ? sAlpha[r] : 1.0f;
#pragma unroll
            for (int e = 0; e < 8; e++)
                acc[k][e] *= al;
        }
        for (int jj0 = pp; jj0 < TN; jj0 += 4 * pp_count) {
            float vx[4][8], pv[4][RB];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int jj = jj0 + u * pp_count;
                DecLoad<KT>::run(sV + jj * DC, c, vsc, vof, vx[u]);
#pragma unroll
                for (int k = 0; k < RB; k++)
                    pv[u][k] = rg * RB + k < R ? sS[(rg * RB + k) * TN + jj] : -0.0f;
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int k = 0; k < RB; k++) {
                    if (__float_as_uint(pv[u][k]) == 0x80000000u) /* hidden: its value takes no part */
                        continue;
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        acc[k][e] = fmaf(pv[u][k], vx[u][e], acc[k][e]);
                }
        }
    }
    cp_async_wait_all();
    __syncthreads();

    /* The slot: O summed over the position classes in class order, then m and l. */
    float *slot = L.partial + (((int64_t)b * p.Nkv + n2) * L.nsplit + split) * L.slot;
    float *red = reinterpret_cast<float *>(stages); /* [pp_count][R][DC] */
#pragma unroll
    for (int k = 0; k < RB; k++) {
        const int r = rg * RB + k;
        if (r < R)
#pragma unroll
            for (int e = 0; e < 8; e++)
                red[((size_t)pp * R + r) * DC + c * 8 + e] = acc[k][e];
    }
    __syncthreads();
    for (int x = tid; x < R * DC; x += kDecThreads) {
        float o = red[x];
        for (int k = 1; k < pp_count; k++)
            o += red[(size_t)k * R * DC + x];
        slot[x] = o;
    }
    for (int r = tid; r < R; r += kDecThreads)
        slot[R * DC + r] = sM[r], slot[R * DC + R + r] = sL[r];
}

/* Combines the split slots of one (batch, kv head) and writes its rows.  Shared memory: the
 * weights [nsplit][R] and per row 1/l and whether it is empty. */
__global__ void __launch_bounds__(kDecThreads) dec_merge_kernel(const __grid_constant__ fc_problem p,
                                                                const __grid_constant__ DecLaunch L)
{
    extern __shared__ float sW[];
    const int R = L.rows, DC = (L.slot / R) - 2, tid = threadIdx.x;
    float *sInv = sW + L.nsplit * R, *sEmpty = sInv + R;
    const unsigned long long fault = *L.fault;
    if (fault >> 32) { /* a bad block-table entry or run length: nothing is written */
        if (blockIdx.x == 0 && blockIdx.y == 0 && tid == 0)
            dec_report(L.report, p, L.kv_lens, fault, true);
        return;
    }
    const int64_t b = blockIdx.y, n2 = blockIdx.x;
    __shared__ fc_batch sBt;
    if (tid == 0)
        dec_batch(p, L.kv_lens, b, &sBt);
    __syncthreads();
    const fc_batch &bt = sBt;
    const float *slots = L.partial + ((int64_t)b * p.Nkv + n2) * L.nsplit * L.slot;
    for (int r = tid; r < R; r += kDecThreads) {
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        const bool real = i < bt.sq;
        double aoff = 0.0;
        if (p.alibi.slopes) {
            float ap;
            fc_alibi_frame(&bt, i, p.alibi.slopes[b * p.alibi.sb + n1 * p.alibi.sn], p.alibi.sqrt_distance, &ap, &aoff);
        }
        float m = -INFINITY;
        for (int s = 0; s < L.nsplit; s++)
            m = max_nan(m, slots[(int64_t)s * L.slot + R * DC + r]);
        const float ref2 = (m == -INFINITY ? 0.0f : m) * kLog2e;
        float l = 0.0f;
        for (int s = 0; s < L.nsplit; s++) {
            const float *sl = slots + (int64_t)s * L.slot;
            const float w = exp2f(fmaf(sl[R * DC + r], kLog2e, -ref2));
            sW[s * R + r] = w;
            l = fmaf(sl[R * DC + R + r], w, l);
        }
        /* the sink: one more logit of the row, folded in once (fc_fold_sink); −inf = none; NaN or
         * +inf make the row NaN */
        const float sink = real && p.sink ? fc_sink_at(&p, n1) : -INFINITY;
        const fc_sink_fold fd = fc_fold_sink(sink, m, aoff, l);
        l = fd.l;
        const bool empty = l == 0.0f;
        sInv[r] = empty ? 0.0f : fd.w / l, sEmpty[r] = empty;
        if (p.stats.max && i < bt.q_rows)
            fc_stat_store(&p.stats, fc_stat_offset(&p, &bt, n1, i), empty ? -FLT_MAX : fd.sink_max ? sink : (float)(m + aoff),
                          empty ? FLT_MAX : l);
    }
    __syncthreads();
    const int Dv = (int)p.Dv;
    const int64_t oes = fc_dtype_bytes(p.out.dtype);
    for (int x = tid; x < R * Dv; x += kDecThreads) {
        const int r = x / Dv, e = x % Dv;
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        if (i >= bt.q_rows)
            continue;
        float o = 0.0f;
        for (int s = 0; s < L.nsplit; s++) {
            o = fmaf(slots[(int64_t)s * L.slot + r * DC + e], sW[s * R + r], o);
        }
        const bool empty = sEmpty[r] != 0.0f;
        dec_store(p, fc_view_row(&p.out, oes, b, bt.q_tok, n1, i), n1, e, empty ? 0.0f : o * sInv[r], empty);
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_KERNEL_CUH */
