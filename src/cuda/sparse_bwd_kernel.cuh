/*
 * The sparse backward (SparseFlashAttentionGrad, semantics §5.5) on mma.sync, two kernels of four
 * warps.  P = exp(x − m)/l from the given statistics, dP = dO·vᵀ, dS = P·(dP − D), D = rowsum(dO∘O).
 *   sparse_dq_kernel: one CTA per query token × kv head × 16 query heads (the forward's grid and
 *     walk, sparse_fwd_kernel.cuh); per tile of BN selected positions half the warps form S = Q·Kᵀ
 *     and half dP = dO·Vᵀ (BN/2 keys each, through shared memory), every warp forms dS for the
 *     whole tile and dQ += dS·K for its DK/4 features.  It writes its rows' facts (m·log2 e, 1/l,
 *     D) for the other kernel.
 *   sparse_dkv_kernel: one CTA per FC_SFAG_KEYS kv rows of one selection block × kv head
 *     (sparse_plan.h); it steps through the (row, query head) pairs of the block's inverse-index
 *     bucket (sparse_index.cuh), FC_SFAG_PAIRS at a time, with the keys as the MMA's rows: half the
 *     warps form Sᵀ = K·Qᵀ, half dPᵀ = V·dOᵀ, every warp then dV += Pᵀ·dO and dK += dSᵀ·Q for its
 *     features.  Each dK/dV row has this one owner, summing its pairs in row order.
 * Both sum in fixed orders and write every output element of their rows once: bitwise repeatable.
 */
#ifndef FC_CUDA_SPARSE_BWD_KERNEL_CUH
#define FC_CUDA_SPARSE_BWD_KERNEL_CUH

#include "sparse_fwd_kernel.cuh"
#include "sparse_index.cuh"

namespace fc_cuda {

/* What the host decided about a launch beyond the problem itself. */
struct SfagLaunch {
    SfaLaunch f;   /* the forward's: head tiles, the rope offset, cp.async rows (pair_out unused) */
    bool vec_do;   /* the output gradient's rows take cp.async */
    int64_t rows;  /* query rows of the problem: the row facts are [N1][rows] */
    float *rowf;   /* per (head, row) 4 floats: m·log2 e, 1/l, D, 0 — written by the dQ kernel for the
                      dK/dV kernel */
    SfagIndex X;   /* the inverse index */
    int parts;     /* dK/dV CTAs per block (fc_sfag_parts) */
};

/* Tiles per class: BN selected positions per dQ step (the ring of two K and V stages, Q and dO
 * in sm_80's 163 KiB; class 64 takes 32, where 64 made ptxas spill around the walk's 64-bit
 * divisions). */
template <int C> struct SfagShape {
    static constexpr int DK = C, DV = C, BN = C == 128 ? 64 : 32;
};
template <> struct SfagShape<FC_SFA_MLA_DK> {
    static constexpr int DK = FC_SFA_MLA_DK, DV = FC_SFA_MLA_DV, BN = 16;
};

/* The dQ kernel's shared memory: Q [16][DK], dO [16][DV], K [2][BN][DK], V [2][BN][DV] (swizzled),
 * S and dP [2][16][BN + 4], the row addresses [2][3][BN], the positions per stage [2], and per
 * head row (m·log2 e, 1/l, D). */
template <int DK, int DV, int BN> struct SfagDqSmem {
    static constexpr size_t q = (size_t)FC_SFA_HEADS * DK * 2, o = (size_t)FC_SFA_HEADS * DV * 2;
    static constexpr size_t k = (size_t)2 * BN * DK * 2, v = (size_t)2 * BN * DV * 2;
    static constexpr size_t s = (size_t)2 * FC_SFA_HEADS * (BN + 4) * sizeof(float), rows = (size_t)2 * 3 * BN * sizeof(void *);
    static constexpr size_t bytes = q + o + k + v + s + rows + 2 * sizeof(int) + 3 * FC_SFA_HEADS * sizeof(float);
};

/* The dK/dV kernel's: K [16][DK], V [16][DV], Q [2][16][DK], dO [2][16][DV] (swizzled), Sᵀ and
 * dPᵀ [16][20] floats, Pᵀ and dSᵀ [16][24] in the operand type, the pairs' row addresses [2][3][16]
 * and facts [2][16] (m·log2 e, 1/l, D, causal threshold). */
template <int DK, int DV> struct SfagKvSmem {
    static constexpr int R = FC_SFAG_KEYS, M = FC_SFAG_PAIRS;
    static constexpr size_t k = (size_t)R * DK * 2, v = (size_t)R * DV * 2, q = (size_t)2 * M * DK * 2, o = (size_t)2 * M * DV * 2;
    static constexpr size_t s = (size_t)2 * R * (M + 4) * sizeof(float), pt = (size_t)2 * R * 24 * 2;
    static constexpr size_t rows = (size_t)2 * 3 * M * sizeof(void *), facts = (size_t)2 * M * (3 * sizeof(float) + sizeof(int64_t));
    static constexpr size_t bytes = k + v + q + o + s + pt + rows + facts;
};

/* Row (b, tok + s, head n) of a query-side view (query, query rope, output gradient): never paged,
 * and the run refuses tensor lists — fc_view_row's plain case, without the paged case's 64-bit
 * division (a subroutine call whose saved registers count as spills in the dK/dV loop). */
__device__ __forceinline__ const char *sfag_query_row(const fc_view &v, int64_t b, int64_t tok, int64_t n, int64_t s)
{
    return v.data + (b * v.sb + (tok + s) * v.ss + n * v.sn) * 2;
}

/* s += A·Bᵀ for 16 rows of A ([16][D] swizzled) and KW rows of B from b0 ([..][D] swizzled): one
 * warp's KW / 8 n-tiles over all D features. */
template <typename T, int D, int KW>
__device__ __forceinline__ void sfag_rows_dot(float (&s)[KW / 8][4], const T *a_tile, const T *b_tile, int b0, int lane)
{
    static_assert(KW == 8 || KW % 16 == 0, "8 keys, or pairs of n-tiles");
    if constexpr (KW == 8) {
        static_assert(D % 32 == 0, "one-n-tile warps take two k-steps per ldmatrix");
#pragma unroll 4
        for (int ks = 0; ks < D / 16; ks += 2) {
            uint32_t a0[4], a1[4], bk[4];
            ldsm_x4(a0, a_tile + swz<D>(lane % 16, ks * 2 + lane / 16));
            ldsm_x4(a1, a_tile + swz<D>(lane % 16, ks * 2 + 2 + lane / 16));
            ldsm_x4(bk, b_tile + swz<D>(b0 + lane % 8, ks * 2 + lane / 8));
            mma16816<T>(s[0], a0, bk[0], bk[1]);
            mma16816<T>(s[0], a1, bk[2], bk[3]);
        }
    } else {
#pragma unroll 2
        for (int ks = 0; ks < D / 16; ks++) {
            uint32_t a[4];
            ldsm_x4(a, a_tile + swz<D>(lane % 16, ks * 2 + lane / 16));
#pragma unroll
            for (int nt = 0; nt < KW / 8; nt += 2) {
                uint32_t bk[4];
                ldsm_x4(bk, b_tile + swz<D>(b0 + nt * 8 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
                mma16816<T>(s[nt], a, bk[0], bk[1]);
                mma16816<T>(s[nt + 1], a, bk[2], bk[3]);
            }
        }
    }
}

/* acc[d] += A·B over one 16-deep k-step: A fragments a, B = rows [0, 16) of a [..][D] swizzled
 * tile (the k dimension along its rows), this warp's DT n-tiles from feature chunk c0. */
template <typename T, int D, int DT>
__device__ __forceinline__ void sfag_step_into(float (&acc)[DT][4], const uint32_t (&a)[4], const T *tile, int row0, int c0, int lane)
{
#pragma unroll
    for (int d = 0; d < DT; d += 2) {
        uint32_t bv[4];
        ldsm_x4_t(bv, tile + swz<D>(row0 + lane % 8 + ((lane / 8) % 2) * 8, c0 + d + lane / 16));
        mma16816<T>(acc[d], a, bv[0], bv[1]);
        mma16816<T>(acc[d + 1], a, bv[2], bv[3]);
    }
}

/* The warp's (S or dP) tile into shared memory: rows lane/4 + 8h, columns c0 + 8nt + 2(lane%4) + c. */
template <int NT, int LD> __device__ __forceinline__ void sfag_stage(const float (&s)[NT][4], float *dst, int c0, int lane)
{
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            dst[(lane / 4 + 8 * (e / 2)) * LD + c0 + nt * 8 + (lane % 4) * 2 + e % 2] = s[nt][e];
}

/* One gradient row's features from a query/key-layout accumulator: features [0, dqk) to main,
 * [rope_at, rope_at + dr) to rope (when given); x[d][c]: feature f0 + 8d + c. */
template <typename T, int DT>
__device__ __forceinline__ void sfag_store_row(char *main, int64_t se, int dqk, char *rope, int64_t rse, int rope_at, int dr,
                                               int f0, const float (&x)[DT][2])
{
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const int f = f0 + d * 8 + c;
            if (f < dqk)
                *(T *)(main + f * se * 2) = T(x[d][c]);
            else if (rope && f >= rope_at && f - rope_at < dr)
                *(T *)(rope + (f - rope_at) * rse * 2) = T(x[d][c]);
        }
}

/* Rows lane/4 + 8h of a warp's accumulator (its features from f0), scaled, into rows addressed by
 * row_of(r) (NULL: not written) — the query/key layout (rope features to rope_of(r)). */
template <typename T, int DT, typename RowOf, typename RopeOf>
__device__ __forceinline__ void sfag_store_acc(const float (&acc)[DT][4], float scale, int f0, int lane, int64_t se, int dqk,
                                               int64_t rse, int rope_at, int dr, RowOf row_of, RopeOf rope_of)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = lane / 4 + 8 * h;
        char *row = row_of(r);
        if (!row)
            continue;
        float x[DT][2];
#pragma unroll
        for (int d = 0; d < DT; d++)
            x[d][0] = acc[d][2 * h] * scale, x[d][1] = acc[d][2 * h + 1] * scale;
        sfag_store_row<T, DT>(row, se, dqk, rope_of(r), rse, rope_at, dr, f0 + (lane % 4) * 2, x);
    }
}

template <typename T, int DK, int DV, int BN>
__global__ void __launch_bounds__(128) sparse_dq_kernel(const __grid_constant__ fc_problem p, const SfagLaunch L)
{
    constexpr int WARPS = 4, THREADS = 128, H = FC_SFA_HEADS, KW = BN / 2, NT = BN / 8, DKW = DK / WARPS, DT = DKW / 8;
    static_assert(BN % 16 == 0 && BN <= 64, "P·K takes 16 keys a step; the walk fills up to 64 slots");
    static_assert(DKW % 16 == 0, "query features in pairs of n-tiles per warp");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    using S = SfagDqSmem<DK, DV, BN>;
    T *sQ = reinterpret_cast<T *>(smem_raw);
    T *sO = reinterpret_cast<T *>(smem_raw + S::q);
    T *sK = reinterpret_cast<T *>(smem_raw + S::q + S::o);
    T *sV = reinterpret_cast<T *>(smem_raw + S::q + S::o + S::k);
    float *sS = reinterpret_cast<float *>(smem_raw + S::q + S::o + S::k + S::v), *sP = sS + H * (BN + 4);
    const char **sRow = reinterpret_cast<const char **>(smem_raw + S::q + S::o + S::k + S::v + S::s);
    int *s_n = reinterpret_cast<int *>(smem_raw + S::q + S::o + S::k + S::v + S::s + S::rows);
    float *sM = reinterpret_cast<float *>(s_n + 2), *sL = sM + H, *sD = sL + H;

    SfaCta c = sfa_cta(p, L.f.head_tiles);
    const fc_batch &bt = p.batch[c.b];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int dqk = (int)p.Dqk, dr = (int)p.Dr, dv = (int)p.Dv;

    auto load_kv = [&](int st) { sfa_load_kv<T, DK, DV, BN, THREADS>(p, L.f, sK + st * BN * DK, sV + st * BN * DV, sRow + st * 3 * BN); };

    /* Q, q rope and dO of the group's heads (zeros past the group and for an empty token), the
     * addresses through the logits' room; the given statistics and D per head. */
    const char **qrow = reinterpret_cast<const char **>(sS);
    if (tid < H) {
        const bool in = c.has(tid);
        const int64_t n1 = c.q_head(p, tid);
        qrow[tid] = sfa_head_row(p, p.q, c, tid);
        qrow[H + tid] = dr > 0 ? sfa_head_row(p, p.q_rope, c, tid) : nullptr;
        qrow[2 * H + tid] = sfa_head_row(p, p.dout, c, tid);
        float ml = 0.0f, li = 0.0f;
        if (in) {
            const int64_t at = fc_stat_offset(&p, &bt, n1, c.i);
            ml = p.stats.max[at] * kLog2e, li = 1.0f / p.stats.sum[at];
            float *f = L.rowf + (n1 * L.rows + blockIdx.x) * 4;
            f[0] = ml, f[1] = li, f[3] = 0.0f;
        }
        sM[tid] = ml, sL[tid] = li;
    }
#pragma unroll 1
    for (int r = warp; r < H; r += WARPS) { /* D = Σ_e dO·O in a fixed order: lanes, then a butterfly */
        const bool in = c.has(r);
        const int64_t n1 = c.q_head(p, r);
        const char *o = sfa_head_row(p, p.out, c, r), *g = sfa_head_row(p, p.dout, c, r);
        float d = 0.0f;
        for (int e = lane; in && e < dv; e += 32)
            d = fmaf(Elem<T>::load(g + e * p.dout.se * 2), Elem<T>::load(o + e * p.out.se * 2), d);
#pragma unroll
        for (int m = 16; m > 0; m /= 2)
            d += __shfl_xor_sync(0xffffffffu, d, m);
        if (lane == 0) {
            sD[r] = d;
            if (in)
                L.rowf[(n1 * L.rows + blockIdx.x) * 4 + 2] = d;
        }
    }
    if (warp == 0)
        sfa_walk_stage<BN>(p, c, lane, sRow, s_n, 0);
    __syncthreads();
    sfa_load_rows<T, DK, H, THREADS>(sQ, qrow, p.q.se, dqk, L.f.vec_q, qrow + H, p.q_rope.se, L.f.rope_at, dr, L.f.vec_qr);
    sfa_load_rows<T, DV, H, THREADS>(sO, qrow + 2 * H, p.dout.se, dv, L.vec_do, nullptr, 0, DV, 0, false);
    cp_async_commit();
    int n = s_n[0];
    if (n > 0)
        load_kv(0);
    cp_async_commit();
    __syncthreads(); /* the addresses are read before S and dP take their room */

    float acc[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    const float scale = p.scale;
    int st = 0;
    while (n > 0) {
        if (warp == 0)
            sfa_walk_stage<BN>(p, c, lane, sRow, s_n, st ^ 1);
        __syncthreads();
        const int n_next = s_n[st ^ 1];
        if (n_next > 0)
            load_kv(st ^ 1);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();

        /* warps 0, 1: S for keys [KW·w, KW·w + KW); warps 2, 3: dP for the same keys */
        const T *k_st = sK + st * BN * DK, *v_st = sV + st * BN * DV;
        float s[KW / 8][4];
#pragma unroll
        for (int nt = 0; nt < KW / 8; nt++)
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
        const int k0 = (warp % 2) * KW;
        if (warp < 2)
            sfag_rows_dot<T, DK, KW>(s, sQ, k_st, k0, lane);
        else
            sfag_rows_dot<T, DV, KW>(s, sO, v_st, k0, lane);
        sfag_stage<KW / 8, BN + 4>(s, warp < 2 ? sS : sP, k0, lane);
        __syncthreads();

        /* dS over the whole tile in every warp, then dQ += dS·K for this warp's features */
        uint32_t a[BN / 16][4];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = lane / 4 + 8 * h;
            const float ml = sM[r], li = sL[r], dd = sD[r];
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const int c = nt * 8 + (lane % 4) * 2;
                const float2 x = *reinterpret_cast<const float2 *>(sS + r * (BN + 4) + c);
                const float2 g = *reinterpret_cast<const float2 *>(sP + r * (BN + 4) + c);
                const float p0 = c < n ? fast_exp2(fmaf(x.x * scale, kLog2e, -ml)) * li : 0.0f;
                const float p1 = c + 1 < n ? fast_exp2(fmaf(x.y * scale, kLog2e, -ml)) * li : 0.0f;
                a[nt / 2][(nt % 2) * 2 + h] = Elem<T>::pack(p0 * (g.x - dd), p1 * (g.y - dd));
            }
        }
#pragma unroll
        for (int ks = 0; ks < BN / 16; ks++)
            sfag_step_into<T, DK, DT>(acc, a[ks], k_st, ks * 16, warp * DT, lane);
        __syncthreads();
        st ^= 1;
        n = n_next;
    }
    cp_async_wait_all();

    const int64_t n1_0 = c.q_head(p, 0);
    sfag_store_acc<T, DT>(
        acc, scale, warp * DKW, lane, p.dq.se, dqk, p.dq_rope.se, L.f.rope_at, dr,
        [&](int r) { return r < c.heads ? fc_view_row(&p.dq, 2, c.b, bt.q_tok, n1_0 + r, c.i) : (char *)nullptr; },
        [&](int r) { return dr > 0 ? fc_view_row(&p.dq_rope, 2, c.b, bt.q_tok, n1_0 + r, c.i) : (char *)nullptr; });
}

template <typename T, int DK, int DV>
__global__ void __launch_bounds__(128) sparse_dkv_kernel(const __grid_constant__ fc_problem p, const SfagLaunch L)
{
    constexpr int WARPS = 4, THREADS = 128, R = FC_SFAG_KEYS, M = FC_SFAG_PAIRS, LD = M + 4, PLD = 24;
    constexpr int DKW = DK / WARPS, DVW = DV / WARPS, DKT = DKW / 8, DVT = DVW / 8;
    static_assert(R == 16 && M == 16, "one m16n8k16 tile of keys, one k-step of pairs");
    static_assert(DKW % 16 == 0 && DVW % 16 == 0, "features in pairs of n-tiles per warp");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    using S = SfagKvSmem<DK, DV>;
    unsigned char *at = smem_raw;
    T *sK = reinterpret_cast<T *>(at), *sV = reinterpret_cast<T *>(at += S::k);
    T *sQ = reinterpret_cast<T *>(at += S::v), *sO = reinterpret_cast<T *>(at += S::q);
    float *sS = reinterpret_cast<float *>(at += S::o), *sP = sS + R * LD;
    T *sPt = reinterpret_cast<T *>(at += S::s), *sDs = sPt + R * PLD;
    const char **sRow = reinterpret_cast<const char **>(at += S::pt);
    int64_t *sThr = reinterpret_cast<int64_t *>(at += S::rows);
    float *sF = reinterpret_cast<float *>(sThr + 2 * M); /* [2][3][M]: m·log2 e, 1/l, D */

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t g = (unsigned)blockIdx.x / (unsigned)L.parts, part = (unsigned)blockIdx.x % (unsigned)L.parts, n2 = blockIdx.y;
    const int64_t b = fc_sfag_block_batch(L.X.blk0, p.B, g);
    const fc_batch &bt = p.batch[b];
    const int64_t bs = p.sparse.block_size, kb = g - L.X.blk0[b];
    if (kb >= L.X.blk0[b + 1] - L.X.blk0[b] || part * R >= bs)
        return; /* past the run's blocks, or past the block */
    const int64_t j0 = kb * bs + part * R, rest = bs - part * R, left = bt.kv_rows - j0;
    const int jn = (int)(rest < left ? (rest < R ? rest : R) : (left < R ? left : R));
    if (jn <= 0)
        return;
    const int dqk = (int)p.Dqk, dr = (int)p.Dr, dv = (int)p.Dv;
    const int32_t e0 = L.X.start[n2 * L.X.nb + g], entries = L.X.start[n2 * L.X.nb + g + 1] - e0;
    const int64_t pairs = (int64_t)entries * p.G;
    const int G = (int)p.G;

    /* the owned keys: rows past skv (padding) are zeros and take no pair */
    if (tid < R) {
        const bool in = tid < jn && j0 + tid < bt.skv;
        sRow[tid] = in ? sfa_kv_row(p.k, b, bt.kv_tok, n2, j0 + tid) : nullptr;
        sRow[R + tid] = in ? sfa_kv_row(p.v, b, bt.kv_tok, n2, j0 + tid) : nullptr;
        sRow[2 * R + tid] = in && dr > 0 ? sfa_kv_row(p.k_rope, b, bt.kv_tok, n2, j0 + tid) : nullptr;
    }
    __syncthreads();
    sfa_load_rows<T, DK, R, THREADS>(sK, sRow, p.k.se, dqk, L.f.vec_k, dr > 0 ? sRow + 2 * R : nullptr, p.k_rope.se, L.f.rope_at,
                                     dr, L.f.vec_kr);
    sfa_load_rows<T, DV, R, THREADS>(sV, sRow + R, p.v.se, dv, L.f.vec_v, nullptr, 0, DV, 0, false);
    cp_async_commit();
    cp_async_wait_all();
    __syncthreads(); /* the keys' addresses are read before the pairs' take their room */

    /* The next M pairs of the bucket → stage st: row addresses and facts (tid < M).  Pair t is
     * entry t / G, head t % G; (pe, pg) is the first pair's, stepped without 64-bit divisions. */
    int64_t pe = 0;
    int pg = 0;
    auto prep = [&](int st) {
        const int gg = pg + tid;
        const int64_t e = pe + gg / G;
        pg += M, pe += pg / G, pg %= G;
        if (tid >= M)
            return;
        const char **rows = sRow + st * 3 * M;
        float *f = sF + st * 3 * M;
        rows[tid] = rows[M + tid] = rows[2 * M + tid] = nullptr;
        f[tid] = f[M + tid] = f[2 * M + tid] = 0.0f;
        sThr[st * M + tid] = 0;
        if (e >= entries)
            return;
        const int64_t r = L.X.list[e0 + e], n1 = n2 * p.G + gg % G, i = r - bt.stat_row0;
        rows[tid] = sfag_query_row(p.q, b, bt.q_tok, n1, i);
        rows[M + tid] = dr > 0 ? sfag_query_row(p.q_rope, b, bt.q_tok, n1, i) : nullptr;
        rows[2 * M + tid] = sfag_query_row(p.dout, b, bt.q_tok, n1, i);
        const float *rf = L.rowf + (n1 * L.rows + r) * 4;
        f[tid] = rf[0], f[M + tid] = rf[1], f[2 * M + tid] = rf[2];
        sThr[st * M + tid] = fc_sparse_threshold(&p.sparse, &bt, i);
    };
    auto load_pairs = [&](int st) {
        const char *const *rows = sRow + st * 3 * M;
        sfa_load_rows<T, DK, M, THREADS>(sQ + st * M * DK, rows, p.q.se, dqk, L.f.vec_q, dr > 0 ? rows + M : nullptr, p.q_rope.se,
                                         L.f.rope_at, dr, L.f.vec_qr);
        sfa_load_rows<T, DV, M, THREADS>(sO + st * M * DV, rows + 2 * M, p.dout.se, dv, L.vec_do, nullptr, 0, DV, 0, false);
    };

    float dk[DKT][4], dvv[DVT][4];
#pragma unroll
    for (int d = 0; d < DKT; d++)
        dk[d][0] = dk[d][1] = dk[d][2] = dk[d][3] = 0.0f;
#pragma unroll
    for (int d = 0; d < DVT; d++)
        dvv[d][0] = dvv[d][1] = dvv[d][2] = dvv[d][3] = 0.0f;
    const float scale = p.scale;
    prep(0);
    __syncthreads();
    if (pairs > 0)
        load_pairs(0);
    cp_async_commit();
    int st = 0;
    for (int64_t t0 = 0; t0 < pairs; t0 += M) {
        const bool more = t0 + M < pairs;
        if (more)
            prep(st ^ 1); /* the stage's last readers finished before the previous step's end */
        __syncthreads();
        if (more)
            load_pairs(st ^ 1);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();

        /* warps 0, 1: Sᵀ = K·Qᵀ for pairs [8w, 8w + 8); warps 2, 3: dPᵀ = V·dOᵀ */
        float s[1][4] = {{0.0f, 0.0f, 0.0f, 0.0f}};
        const int c0 = (warp % 2) * 8;
        if (warp < 2)
            sfag_rows_dot<T, DK, 8>(s, sK, sQ + st * M * DK, c0, lane);
        else
            sfag_rows_dot<T, DV, 8>(s, sV, sO + st * M * DV, c0, lane);
        sfag_stage<1, LD>(s, warp < 2 ? sS : sP, c0, lane);
        __syncthreads();

        /* Pᵀ and dSᵀ in the operand type: two elements per thread */
        const float *f = sF + st * 3 * M;
        const int64_t *thr = sThr + st * M;
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const int kr = tid / 8, pc = (tid % 8) * 2 + c;
            const bool sel = kr < jn && j0 + kr < thr[pc];
            const float P = sel ? fast_exp2(fmaf(sS[kr * LD + pc] * scale, kLog2e, -f[pc])) * f[M + pc] : 0.0f;
            sPt[kr * PLD + pc] = T(P);
            /* a pair past the cut is no pair: dS = 0, not 0·(dP − D) (NaN with a row's NaN D, or
             * a non-finite value's dP: semantics §0.3; this form keeps sm_80's class 64 unspilled) */
            const float g = sP[kr * LD + pc] - f[2 * M + pc];
            sDs[kr * PLD + pc] = T(P * (sel ? g : 0.0f));
        }
        __syncthreads();
        uint32_t ap[4], as[4];
        ldsm_x4(ap, sPt + (lane % 16) * PLD + (lane / 16) * 8);
        ldsm_x4(as, sDs + (lane % 16) * PLD + (lane / 16) * 8);
        sfag_step_into<T, DV, DVT>(dvv, ap, sO + st * M * DV, 0, warp * DVT, lane);
        sfag_step_into<T, DK, DKT>(dk, as, sQ + st * M * DK, 0, warp * DKT, lane);
        __syncthreads();
        st ^= 1;
    }
    cp_async_wait_all();

    auto key_row = [&](const fc_view &v, int r) { return r < jn ? fc_view_row(&v, 2, b, bt.kv_tok, n2, j0 + r) : (char *)nullptr; };
    sfag_store_acc<T, DKT>(
        dk, scale, warp * DKW, lane, p.dk.se, dqk, p.dk_rope.se, L.f.rope_at, dr, [&](int r) { return key_row(p.dk, r); },
        [&](int r) { return dr > 0 ? key_row(p.dk_rope, r) : (char *)nullptr; });
    sfag_store_acc<T, DVT>(
        dvv, 1.0f, warp * DVW, lane, p.dv.se, dv, 0, DV, 0, [&](int r) { return key_row(p.dv, r); },
        [&](int) { return (char *)nullptr; });
}

} // namespace fc_cuda

#endif /* FC_CUDA_SPARSE_BWD_KERNEL_CUH */
