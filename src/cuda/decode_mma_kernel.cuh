/*
 * The tensor-core decode (mma.sync m16n8k16, sm_80 and sm_90): the R = G·QR ≤ 16 query rows of a
 * kv head (the G heads of the group × up to QR speculative positions) padded to the MMA's 16 rows,
 * against the kv head's cache read once.
 *
 * Work: the batch's visible kv range [lo, hi) of a kv head is cut into blocks of kMmaBlock
 * positions counted from lo — fixed by the problem, never by the GPU.  A CTA (4 warps) takes a run
 * of whole blocks; inside a block warp w takes the warp tiles w, w + 4, ... of WN positions, each
 * with its own cp.async pipeline (`stg` stages of K and V in shared memory, only __syncwarp between
 * its tiles) and its own running max, sum and output.  At a block's end the warps fold their
 * states in warp order (the only CTA barriers besides the prologue) and the block's partial
 * (O, m, l) goes to the workspace.  The CTA that arrives last at the (batch, kv head)'s counter
 * (an atomic in the run's workspace) folds every block's partial in block order with the sink,
 * divides once and writes the rows and statistics (decode_mma_merge.cuh).  So the bits depend on the blocks alone: the
 * same for any split count, launch order or GPU.
 *
 * Per warp tile: S = Q·Kᵀ (16 rows × WN positions; Q fragments from shared memory, K by ldmatrix,
 * or for int8 keys by 16-byte loads whose bytes become fp16 pairs with byte permutes — the features
 * of each k step are permuted so that a thread's four bytes are its fragment's four values, and Q
 * is stored in the same order), the visibility of the tile's edges, the online softmax in fp32, and
 * Oᵀ += Vᵀ·Pᵀ, P taken straight from the S accumulators as the B operand (Vᵀ by ldmatrix.trans, or
 * for int8 values by byte permutes that pair two positions of a feature).  int8 keys: the scale
 * folds into q and the offset into a per-row constant (q·offset·scale); int8 values: the scale and
 * offset apply to the merged output once.  q in a dtype other than the cache's (and every int8
 * query) goes in two 16-bit parts (hi + lo), each row scaled by a power of two into range.
 *
 * A tile at the edge of a row's visible spans hides positions by −inf; should its V hold a
 * non-finite value there (0·NaN would leak into rows that do not see it), that tile's P·V runs on
 * CUDA cores over the visible positions only.
 */
#ifndef FC_CUDA_DECODE_MMA_KERNEL_CUH
#define FC_CUDA_DECODE_MMA_KERNEL_CUH

#include "decode_mma_common.cuh"
#include "decode_mma_int8.cuh"
#include "decode_mma_merge.cuh"
#include "decode_mma_softmax.cuh"

namespace fc_cuda {

/* Whether any fp16/bf16 value in the 32-bit words [w, w + n) is ±inf or NaN (lanes share the work). */
template <typename T> __device__ __forceinline__ bool mma_nonfinite(const uint32_t *w, int n, int lane)
{
    const uint32_t e = Elem<T>::dtype == FC_BF16 ? 0x7F807F80u : 0x7C007C00u;
    bool bad = false;
    for (int x = lane; x < n; x += 32) {
        const uint32_t v = w[x] & e;
        bad |= (v & 0xFFFFu) == (e & 0xFFFFu) || (v >> 16) == (e >> 16);
    }
    return __any_sync(0xffffffffu, bad);
}

template <typename KT, int DC, int NT, int V>
__device__ __forceinline__ void dec_mma_body(const fc_problem &p, const MmaLaunch &L)
{
    using Sh = MmaShape<KT, DC>;
    using T = typename MmaType<KT>::T;
    constexpr bool I8 = sizeof(KT) == 1;
    constexpr int WN = Sh::WN, CR = Sh::CR, ES = Sh::ES, NS = Sh::NS, KS = Sh::KS, PPL = Sh::PPL;
    constexpr int MT = DC / 16; /* feature tiles of Oᵀ */
    /* kMmaPositionsM: S's accumulator s[j][e] is row slot e & 1 (row 2c + (e & 1)) at position
     * 16j + g + 8(e >> 1); otherwise row slot e >> 1 (row g + 8(e >> 1)) at position 8j + 2c + (e & 1). */
    constexpr bool PM = (V & kMmaPositionsM) && NT == 1;
    constexpr bool IK = (V & kMmaIntK) && PM && I8;
    constexpr bool IPV = (V & kMmaIntPV) && IK;
    constexpr int SN = PM ? WN / 16 : NS;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ int s_lo, s_hi, s_flo, s_fhi, s_fault, s_last;
    __shared__ float sM[kMmaWarps][kMmaRows], sL[kMmaWarps][kMmaRows], sQs[kMmaRows], sKs[kMmaRows];
    __shared__ float sInv[kMmaRows], sEmpty[kMmaRows];
    __shared__ int4 sSpan[kMmaRows];
    __shared__ int sExp[kMmaRows];
    __shared__ fc_batch sBt;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4;
    const int R = L.rows, stg = L.stages;
    T *sQ = reinterpret_cast<T *>(smem_raw + (size_t)kMmaWarps * stg * 2 * Sh::TILE);
    float *sO = reinterpret_cast<float *>(sQ + 2 * kMmaRows * DC);
    const int64_t b = blockIdx.z, n2 = blockIdx.y;
    const int split = blockIdx.x;
    const fc_batch &bt = sBt;
    const char *k_base = p.k.batch_data ? L.k_list[b] : nullptr, *v_base = p.v.batch_data ? L.v_list[b] : nullptr;

    if (tid == 0) {
        s_lo = INT_MAX, s_hi = 0, s_flo = 0, s_fhi = INT_MAX, s_fault = 0;
        if (!dec_batch(p, L.kv_lens, b, &sBt)) { /* a run length out of range: the batch is not written */
            s_fault = 1; /* recorded by every CTA of the row: its reporter finds it in the word */
            dec_fault(L.fault, p, 2, b, 0);
        }
    }
    __syncthreads();
    /* The batch's block-table entries below its kv length, spread over the CTAs of this row. */
    if (dec_check_table(L.fault, p, b, bt.skv, split * kMmaThreads + tid, L.nsplit * kMmaThreads))
        s_fault = 1;
    /* Rows r = g·qr + i: spans; the range [s_flo, s_fhi) every live row sees whole. */
    if (tid < kMmaRows) {
        int4 sp = make_int4(0, 0, 0, 0);
        const int64_t i = tid % L.qr;
        if (tid < R && i < bt.sq) {
            int64_t s4[4] = {0, 0, 0, 0};
            fc_row_spans(&bt, i, s4);
            sp = make_int4((int)s4[0], (int)s4[1], (int)s4[2], (int)s4[3]);
            if (sp.y > sp.x || sp.w > sp.z) {
                atomicMin(&s_lo, sp.y > sp.x ? sp.x : sp.z);
                atomicMax(&s_hi, sp.w > sp.z ? sp.w : sp.y);
            }
            atomicMax(&s_flo, sp.y > sp.x ? sp.x : sp.z);
            atomicMin(&s_fhi, sp.y > sp.x ? sp.y : sp.w);
        }
        sSpan[tid] = sp;
    }
    /* q (int8 keys: times the key scale) as fp32 into the fold buffer, zeros past Dqk and R. */
    const int qes = (int)fc_dtype_bytes(p.q.dtype);
    for (int x = tid; x < kMmaRows * DC; x += kMmaThreads) {
        const int r = x / DC, f = x % DC;
        const int64_t i = r % L.qr, n1 = n2 * p.G + r / L.qr;
        float v = 0.0f;
        if (r < R && i < bt.sq && f < p.Dqk) {
            v = load_any(fc_view_row(&p.q, qes, b, bt.q_tok, n1, i) + (int64_t)f * p.q.se * qes, p.q.dtype);
            if (I8) {
                const fc_affine_view &a = p.k.dequant;
                v *= load_any(a.scale + (n2 * a.sn + (int64_t)f * a.se) * fc_dtype_bytes(a.dtype), a.dtype);
            }
        }
        sO[x] = v;
    }
    __syncthreads();
    /* Per row: the power of two that brings max |q| into [0.5, 1) (two-part rows), and the int8
     * key offset's constant Σ q·scale·offset; one warp per row, a fixed reduction order. */
    const bool two = I8 || L.qlo;
    for (int r = warp; r < kMmaRows; r += kMmaWarps) {
        float amax = 0.0f, kc = 0.0f;
        bool finite = true;
        for (int f = lane; f < DC; f += 32) {
            const float v = sO[r * DC + f];
            finite &= fabsf(v) <= FLT_MAX;
            amax = fmaxf(amax, fabsf(v));
            if (I8 && p.k.dequant.offset && f < p.Dqk) {
                const fc_affine_view &a = p.k.dequant;
                kc = fmaf(v, load_any(a.offset + (n2 * a.sn + (int64_t)f * a.se) * fc_dtype_bytes(a.dtype), a.dtype), kc);
            }
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2) {
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
            kc += __shfl_xor_sync(0xffffffffu, kc, off);
        }
        finite = __all_sync(0xffffffffu, finite);
        int e = 0;
        if (two && finite && amax > 0.0f)
            frexpf(amax, &e);
        if (lane == 0)
            sQs[r] = ldexpf(p.scale, e), sKs[r] = kc * p.scale, sExp[r] = e;
    }
    __syncthreads();
    /* The Q tile in MMA order (k slot → feature), swizzled for ldmatrix: hi part, then lo part
     * (kMmaIntK: three int8 parts in feature order). */
    if constexpr (IK)
        imma_q_parts<DC, kMmaRows, kMmaWarps>(sO, reinterpret_cast<int8_t *>(sQ), sQs, sExp, warp, lane);
    else
    for (int x = tid; x < kMmaRows * DC; x += kMmaThreads) {
        const int r = x / DC, s = x % DC;
        const float v = ldexpf(sO[r * DC + mma_feature<I8>(s)], -sExp[r]);
        const int at = r * DC + (((s / 8) ^ (r & 7)) << 3) + s % 8;
        const T hi = T(v);
        sQ[at] = hi;
        sQ[kMmaRows * DC + at] = two ? T(v - (float)hi) : T(0.0f);
    }
    __syncthreads();

    /* This CTA's blocks [k0, k1) of the row's nblk. */
    const int lo = s_lo, hi = s_hi, flo = s_flo, fhi = s_fhi;
    const int64_t len = hi > lo ? hi - lo : 0;
    const int nblk = (int)min((int64_t)L.maxblk, fc_dec_blocks(len));
    int64_t kk0, kk1;
    fc_dec_split_range(nblk, L.nsplit, split, &kk0, &kk1);
    const int k0 = (int)kk0, tiles = (int)(kk1 - kk0) * Sh::TPB;
    /* the thread's row slots (kMmaPositionsM: rows 2c, 2c + 1) */
    float qs0, qs1, ks0, ks1;
    if constexpr (PM)
        qs0 = sQs[2 * (lane % 4)], qs1 = sQs[2 * (lane % 4) + 1], ks0 = sKs[2 * (lane % 4)], ks1 = sKs[2 * (lane % 4) + 1];
    else
        qs0 = sQs[g], qs1 = sQs[g + 8], ks0 = sKs[g], ks1 = sKs[g + 8];

    unsigned char *my_stages = smem_raw + (size_t)warp * stg * 2 * Sh::TILE;
    auto tile_j0 = [&](int n) -> int {
        return lo + (k0 + n / Sh::TPB) * kMmaBlock + ((n % Sh::TPB) * kMmaWarps + warp) * WN;
    };
    const char *kp[PPL], *vp[PPL]; /* row addresses of the next tile to issue (one per lane position) */
    const char *kt0 = nullptr, *vt0 = nullptr; /* kMmaLinearIssue: its first rows (NULL: gather) */
    auto addresses = [&](int n) {
        const int j0 = n < tiles ? tile_j0(n) : hi;
        if (V & kMmaLinearIssue) {
            kt0 = vt0 = nullptr;
            if (j0 + WN <= hi && dec_one_page(p.k, j0, WN) && dec_one_page(p.v, j0, WN)) {
                const char *k0 = dec_row(p.k, k_base, ES, b, bt.kv_tok, n2, j0), *v0 = dec_row(p.v, v_base, ES, b, bt.kv_tok, n2, j0);
                if (k0 && v0) {
                    kt0 = k0, vt0 = v0;
                    return;
                }
            }
        }
#pragma unroll
        for (int e = 0; e < PPL; e++) {
            const int idx = lane + 32 * e, j = j0 + idx;
            const bool ok = idx < WN && j < hi;
            kp[e] = ok ? dec_row(p.k, k_base, ES, b, bt.kv_tok, n2, j) : nullptr;
            vp[e] = ok ? dec_row(p.v, v_base, ES, b, bt.kv_tok, n2, j) : nullptr;
        }
    };
    const int kbytes = (int)p.Dqk * ES, vbytes = (int)p.Dv * ES;
    auto issue = [&](int n) {
        if (n < tiles && tile_j0(n) < hi) {
            int opaque = threadIdx.x % 32;
            asm volatile("" : "+r"(opaque));
            const int lane = opaque;
            unsigned char *dk = my_stages + (size_t)(n % stg) * 2 * Sh::TILE, *dv = dk + Sh::TILE;
            if ((V & kMmaLinearIssue) && kt0) {
                /* Rows at one stride: the lane copies chunk column ch of rows r0, r0 + RPI, ...; the
                 * swizzles repeat every 8 rows, so P destination offsets serve every copy and the
                 * sources advance by a fixed step. */
                constexpr int RPI = 32 / CR, P = RPI >= 8 ? 1 : 8 / RPI;
                static_assert(32 % CR == 0, "whole rows per warp copy");
                const int ch = lane % CR, r0 = lane / CR;
                const int kb = ch * 16 < kbytes ? 16 : 0, vb = ch * 16 < vbytes ? 16 : 0;
                const int64_t kstep = kb ? p.k.ss * ES * RPI : 0, vstep = vb ? p.v.ss * ES * RPI : 0;
                const char *ks = kb ? kt0 + r0 * p.k.ss * ES + ch * 16 : (const char *)L.partial;
                const char *vs = vb ? vt0 + r0 * p.v.ss * ES + ch * 16 : (const char *)L.partial;
                int dko[P], dvo[P];
#pragma unroll
                for (int q = 0; q < P; q++) {
                    const int pos = q * RPI + r0;
                    dko[q] = pos * DC * ES + mma_chunk<ES, CR, false, IK>(pos, ch) * 16;
                    dvo[q] = pos * DC * ES + mma_chunk<ES, CR, true, false, IPV>(pos, ch) * 16;
                }
#pragma unroll
                for (int i = 0; i < WN / RPI; i++) {
                    const int rows8 = i / P * 8 * DC * ES;
                    cp_async16(dk + dko[i % P] + rows8, ks, kb);
                    cp_async16(dv + dvo[i % P] + rows8, vs, vb);
                    ks += kstep, vs += vstep;
                }
            } else {
#pragma unroll
            for (int i = 0; i < WN * CR / 32; i++) {
                const int x = i * 32 + lane, pos = x / CR, ch = x % CR, from = (i * 32 / CR) % 32 + lane / CR;
                const char *ks = (const char *)__shfl_sync(0xffffffffu, (unsigned long long)kp[(i * 32 / CR) / 32], from);
                const char *vs = (const char *)__shfl_sync(0xffffffffu, (unsigned long long)vp[(i * 32 / CR) / 32], from);
                const int kb = ks && ch * 16 < kbytes ? 16 : 0, vb = vs && ch * 16 < vbytes ? 16 : 0;
                cp_async16(dk + pos * DC * ES + mma_chunk<ES, CR, false, IK>(pos, ch) * 16, kb ? ks + ch * 16 : (const char *)L.partial, kb);
                cp_async16(dv + pos * DC * ES + mma_chunk<ES, CR, true, false, IPV>(pos, ch) * 16, vb ? vs + ch * 16 : (const char *)L.partial, vb);
            }
            }
        }
        cp_async_commit();
    };

    float o[MT][NT][4];
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                o[mt][nt][e] = 0.0f;

    /* kMmaPositionsM: Q (rows 0-7) as the B operand of every k step, hi and lo parts. */
    uint32_t qf[PM ? KS : 1][2][2];
    if constexpr (PM && !IK) {
#pragma unroll
        for (int u2 = 0; u2 < KS / 2; u2++)
#pragma unroll
            for (int part = 0; part < 2; part++) {
                uint32_t r[4] = {0, 0, 0, 0};
                const int row = lane % 8, ch = 4 * u2 + lane / 8;
                if (part == 0 || two)
                    ldsm_x4(r, sQ + (kMmaRows * part + row) * DC + ((ch ^ row) << 3));
                qf[2 * u2][part][0] = r[0], qf[2 * u2][part][1] = r[1];
                qf[2 * u2 + 1][part][0] = r[2], qf[2 * u2 + 1][part][1] = r[3];
            }
    }

    /* kMmaIntK: Q's three int8 parts as B fragments. */
    ImmaQ<IK ? DC : 64> qi;
    if constexpr (IK)
        qi = imma_q_frags<DC, kMmaRows>(reinterpret_cast<const int8_t *>(sQ), lane);

    /* kMmaPositionsM: the lane's load offsets inside a stage — 16-bit: ldmatrix rows of K's k steps
     * and Vᵀ's feature tiles; int8: K's 16 bytes per 64 features, V's 4 bytes per feature pair
     * tile — the same for every 16 positions (the swizzles repeat), so kept in registers. */
    int kofs[PM ? KS : 1], vofs[PM ? MT : 1];
    if constexpr (IK)
#pragma unroll
        for (int u = 0; u < DC / 32; u++)
            kofs[u] = imma_kofs<DC>(lane, u);
    if constexpr (PM && I8) {
#pragma unroll
        for (int gq = 0; gq < DC / 64 && !IK; gq++)
            kofs[gq] = g * DC + mma_chunk<1, CR, false>(g, 4 * gq + lane % 4) * 16;
        if constexpr (IPV) /* ldmatrix row: position lane, chunk mt (the swizzle repeats every 8 rows) */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                vofs[mt] = lane * DC + mma_chunk<1, CR, true, false, IPV>(lane, mt) * 16;
        else
#pragma unroll
        for (int mp = 0; mp < MT / 2; mp++)
            vofs[mp] = 2 * (lane % 4) * DC + mma_chunk<1, CR, true>(2 * (lane % 4), 2 * mp + (g >> 2)) * 16 + (g & 3) * 4;
    } else if constexpr (PM) {
        const int q = lane / 8;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            const int row = 8 * (q & 1) + lane % 8;
            kofs[ks] = row * DC * ES + mma_chunk<ES, CR, false>(row, 2 * ks + (q >> 1)) * 16;
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const int row = 8 * (q >> 1) + lane % 8;
            vofs[mt] = row * DC * ES + mma_chunk<ES, CR, true>(row, 2 * mt + (q & 1)) * 16;
        }
    }

    addresses(0);
    for (int n = 0; n < stg - 1; n++) {
        issue(n);
        addresses(n + 1);
    }
    for (int n = 0; n < tiles; n++) {
        if (stg == 3)
            cp_async_wait<1>();
        else
            cp_async_wait<0>();
        __syncwarp(); /* tile n landed for every lane; every lane is done with tile n − 1's stage */
        issue(n + stg - 1);
        addresses(n + stg);
        const int j0 = tile_j0(n);
        if (j0 < hi) {
            /* lane as a value the compiler cannot hoist: the fragment offsets derived from it are
             * recomputed per tile instead of occupying registers across the loop */
            int opaque = threadIdx.x % 32;
            asm volatile("" : "+r"(opaque));
            const int lane = opaque, g = lane / 4, c = lane % 4;
            const unsigned char *tk = my_stages + (size_t)(n % stg) * 2 * Sh::TILE, *tv = tk + Sh::TILE;
            /* S = Q·Kᵀ: 16 rows × WN positions. */
            float s[SN][4];
#pragma unroll
            for (int j = 0; j < SN; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    s[j][e] = 0.0f;
            const int qrow = (lane % 8) + 8 * ((lane / 8) & 1);
            if constexpr (PM && !I8) { /* Sᵀ = K·Qᵀ: m tile j is positions 16j..16j + 15, K by ldmatrix */
                auto sdot = [&](auto lo) { /* lo: Q's second part (a branch per tile, not a predicate per MMA) */
#pragma unroll
                    for (int ks = 0; ks < KS; ks++)
#pragma unroll
                        for (int j = 0; j < SN; j++) {
                            uint32_t a[4];
                            ldsm_x4(a, tk + kofs[ks] + 16 * j * DC * ES);
                            mma16816<T>(s[j], a, qf[ks][0][0], qf[ks][0][1]);
                            if constexpr (decltype(lo)::value)
                                mma16816<T>(s[j], a, qf[ks][1][0], qf[ks][1][1]);
                        }
                };
                if (two)
                    sdot(std::true_type{});
                else
                    sdot(std::false_type{});
            } else if constexpr (IK) {
                imma_scores<DC, SN>(s, tk, kofs, qi);
            } else if constexpr (PM) { /* int8 keys: the 16 bytes of positions g and g + 8 give four k steps' A */
#pragma unroll
                for (int gq = 0; gq < DC / 64; gq++)
#pragma unroll
                    for (int j = 0; j < SN; j++) {
                        uint32_t ww[2][4];
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const uint4 w = *reinterpret_cast<const uint4 *>(tk + kofs[gq] + (16 * j + 8 * h) * DC);
                            ww[h][0] = w.x, ww[h][1] = w.y, ww[h][2] = w.z, ww[h][3] = w.w;
                        }
#pragma unroll
                        for (int u = 0; u < 4; u++) {
                            uint32_t a[4];
                            i8_quad(ww[0][u], a[0], a[2]);
                            i8_quad(ww[1][u], a[1], a[3]);
                            mma16816<T>(s[j], a, qf[4 * gq + u][0][0], qf[4 * gq + u][0][1]);
                            mma16816<T>(s[j], a, qf[4 * gq + u][1][0], qf[4 * gq + u][1][1]);
                        }
                    }
            } else if (!I8) {
#pragma unroll
                for (int u2 = 0; u2 < KS / 2; u2++) {
                    uint32_t a0[4], a1[4], h0[4], h1[4];
                    const int qc0 = 4 * u2 + (lane / 16), qc1 = qc0 + 2;
                    ldsm_x4(a0, sQ + qrow * DC + ((qc0 ^ (qrow & 7)) << 3));
                    ldsm_x4(a1, sQ + qrow * DC + ((qc1 ^ (qrow & 7)) << 3));
                    if (two) {
                        ldsm_x4(h0, sQ + (kMmaRows + qrow) * DC + ((qc0 ^ (qrow & 7)) << 3));
                        ldsm_x4(h1, sQ + (kMmaRows + qrow) * DC + ((qc1 ^ (qrow & 7)) << 3));
                    }
#pragma unroll
                    for (int j = 0; j < NS; j++) {
                        const int row = 8 * j + lane % 8, ch = 4 * u2 + lane / 8;
                        uint32_t kb[4];
                        ldsm_x4(kb, tk + row * DC * ES + mma_chunk<ES, CR, false>(row, ch) * 16);
                        mma16816<T>(s[j], a0, kb[0], kb[1]);
                        mma16816<T>(s[j], a1, kb[2], kb[3]);
                        if (two) {
                            mma16816<T>(s[j], h0, kb[0], kb[1]);
                            mma16816<T>(s[j], h1, kb[2], kb[3]);
                        }
                    }
                }
            } else {
#pragma unroll
                for (int gq = 0; gq < DC / 64; gq++) {
                    uint32_t a[4][4], h[4][4];
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        const int qc = 2 * (4 * gq + u) + (lane / 16);
                        ldsm_x4(a[u], sQ + qrow * DC + ((qc ^ (qrow & 7)) << 3));
                        ldsm_x4(h[u], sQ + (kMmaRows + qrow) * DC + ((qc ^ (qrow & 7)) << 3));
                    }
#pragma unroll
                    for (int j = 0; j < NS; j++) {
                        const int row = 8 * j + g;
                        const uint4 w = *reinterpret_cast<const uint4 *>(tk + row * DC + mma_chunk<1, CR, false>(row, 4 * gq + c) * 16);
                        const uint32_t ww[4] = {w.x ^ 0x80808080u, w.y ^ 0x80808080u, w.z ^ 0x80808080u, w.w ^ 0x80808080u};
#pragma unroll
                        for (int u = 0; u < 4; u++) {
                            const uint32_t b0 = i8_pair(ww[u], ww[u], 0x0100u), b1 = i8_pair(ww[u], ww[u], 0x0302u);
                            mma16816<T>(s[j], a[u], b0, b1);
                            mma16816<T>(s[j], h[u], b0, b1);
                        }
                    }
                }
            }

            /* Logits, the tile's visibility, the online softmax (decode_mma_softmax.cuh). */
            const bool full = j0 >= flo && j0 + WN <= fhi;
            const MmaStep step = mma_softmax_step<PM, IPV>(s, m0, m1, l0, l1, qs0, ks0, qs1, ks1, full, sSpan, j0, g, c);
            const float al0 = step.al0, al1 = step.al1, wt0 = step.wt0, wt1 = step.wt1; /* wt: kMmaIntPV's tile weights */
            if (!__all_sync(0xffffffffu, al0 == 1.0f && al1 == 1.0f)) {
                if constexpr (PM) { /* the alphas are O's own rows: no shuffles */
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            o[mt][0][e] *= e & 1 ? al1 : al0;
                } else { /* O rows 2c, 2c + 1 (+ 8) take the alphas of the lanes that own those rows */
                    const float ra[2][2] = {{__shfl_sync(0xffffffffu, al0, 8 * c), __shfl_sync(0xffffffffu, al0, 8 * c + 4)},
                                            {__shfl_sync(0xffffffffu, al1, 8 * c), __shfl_sync(0xffffffffu, al1, 8 * c + 4)}};
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int e = 0; e < 4; e++)
                                o[mt][nt][e] *= ra[nt][e & 1];
                }
            }

            /* Oᵀ += Vᵀ·Pᵀ; a non-finite value in an edge tile takes the CUDA-core path instead. */
            const bool exact = !I8 && !full && mma_nonfinite<T>(reinterpret_cast<const uint32_t *>(tv), Sh::TILE / 4, lane);
            if constexpr (IPV) {
                imma_pv<DC, WN>(o, tv, vofs, s, wt0 * (1.0f / kImmaPvScale), wt1 * (1.0f / kImmaPvScale));
            } else if (!exact) {
#pragma unroll
                for (int t = 0; t < WN / 16; t++) {
                    uint32_t pb[NT][2];
#pragma unroll
                    for (int nt = 0; nt < NT; nt++) {
                        if constexpr (PM) { /* Sᵀ's positions g, g + 8 of rows 2c, 2c + 1 → P's positions 2c.. (+ 8) of row g */
                            pb[nt][0] = movm_t(Elem<T>::pack(s[t][0], s[t][1]));
                            pb[nt][1] = movm_t(Elem<T>::pack(s[t][2], s[t][3]));
                        } else {
                            pb[nt][0] = Elem<T>::pack(s[2 * t][2 * nt], s[2 * t][2 * nt + 1]);
                            pb[nt][1] = Elem<T>::pack(s[2 * t + 1][2 * nt], s[2 * t + 1][2 * nt + 1]);
                        }
                    }
                    if constexpr (PM && !I8) {
#pragma unroll
                        for (int mt = 0; mt < MT; mt++) {
                            uint32_t a[4];
                            ldsm_x4_t(a, tv + vofs[mt] + 16 * t * DC * ES);
                            mma16816<T>(o[mt][0], a, pb[0][0], pb[0][1]);
                        }
                    } else if (!I8) {
#pragma unroll
                        for (int mt = 0; mt < MT; mt++) {
                            const int q = lane / 8, row = 16 * t + 8 * (q >> 1) + lane % 8, ch = 2 * mt + (q & 1);
                            uint32_t a[4];
                            ldsm_x4_t(a, tv + row * DC * ES + mma_chunk<ES, CR, true>(row, ch) * 16);
#pragma unroll
                            for (int nt = 0; nt < NT; nt++)
                                mma16816<T>(o[mt][nt], a, pb[nt][0], pb[nt][1]);
                        }
                    } else {
                        const int r0 = 16 * t + 2 * c;
                        if constexpr (PM) { /* a byte of positions r0, r0 + 1 per feature by one permute, then i8_quad */
#pragma unroll
                            for (int mp = 0; mp < MT / 2; mp++) {
                                uint32_t w[4];
#pragma unroll
                                for (int k = 0; k < 4; k++)
                                    w[k] = *reinterpret_cast<const uint32_t *>(tv + vofs[mp] + (16 * t + (k & 1) + 8 * (k >> 1)) * DC);
#pragma unroll
                                for (int hh = 0; hh < 2; hh++) {
                                    uint32_t a[4];
                                    const uint32_t sel = hh ? 0x7362u : 0x5140u;
                                    i8_quad(prmt(w[0], w[1], sel), a[0], a[1]);
                                    i8_quad(prmt(w[2], w[3], sel), a[2], a[3]);
                                    mma16816<T>(o[2 * mp + hh][0], a, pb[0][0], pb[0][1]);
                                }
                            }
                        } else
#pragma unroll
                        for (int mp = 0; mp < MT / 2; mp++) {
                            const int ch = 2 * mp + (g >> 2), byte = (g & 3) * 4;
                            uint32_t w[4];
#pragma unroll
                            for (int k = 0; k < 4; k++) {
                                const int row = r0 + (k & 1) + 8 * (k >> 1);
                                w[k] = *reinterpret_cast<const uint32_t *>(tv + row * DC + mma_chunk<1, CR, true>(row, ch) * 16 + byte) ^
                                       0x80808080u;
                            }
#pragma unroll
                            for (int hh = 0; hh < 2; hh++) {
                                uint32_t a[4];
                                const uint32_t x0 = 2 * hh, x1 = 2 * hh + 1;
                                a[0] = i8_pair(w[0], w[1], x0 | ((4 + x0) << 8));
                                a[1] = i8_pair(w[0], w[1], x1 | ((4 + x1) << 8));
                                a[2] = i8_pair(w[2], w[3], x0 | ((4 + x0) << 8));
                                a[3] = i8_pair(w[2], w[3], x1 | ((4 + x1) << 8));
#pragma unroll
                                for (int nt = 0; nt < NT; nt++)
                                    mma16816<T>(o[2 * mp + hh][nt], a, pb[nt][0], pb[nt][1]);
                            }
                        }
                    }
                }
            } else {
                /* P through the tile's K stage (free now) as fp32 [16][WN]; each thread sums its own
                 * accumulator elements over the positions its row sees. */
                float *sp = reinterpret_cast<float *>(const_cast<unsigned char *>(tk));
#pragma unroll
                for (int j = 0; j < SN; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        if constexpr (PM)
                            sp[(2 * c + (e & 1)) * WN + 16 * j + g + 8 * (e >> 1)] = s[j][e];
                        else
                            sp[(g + 8 * (e >> 1)) * WN + 8 * j + 2 * c + (e & 1)] = s[j][e];
                    }
                __syncwarp();
                const T *vt = reinterpret_cast<const T *>(tv);
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int row = 8 * nt + 2 * c + (e & 1), f = 16 * mt + g + 8 * (e >> 1);
                            const int4 span = sSpan[row];
                            float acc = o[mt][nt][e];
#pragma unroll 1
                            for (int jj = 0; jj < WN; jj++) {
                                if (!span_has(span, j0 + jj))
                                    continue;
                                const float v = (float)vt[jj * DC + mma_chunk<ES, CR, true>(jj, f / 8) * 8 + f % 8];
                                acc = fmaf(sp[row * WN + jj], v, acc);
                            }
                            o[mt][nt][e] = acc;
                        }
                __syncwarp();
            }
        }

        if (n % Sh::TPB == Sh::TPB - 1) {
            int opaque = threadIdx.x % 32;
            asm volatile("" : "+r"(opaque));
            const int lane = opaque, g = lane / 4, c = lane % 4;
            /* The block's end: fold the warps' states in warp order into its partial. */
            if constexpr (PM) { /* the row slots 2c, 2c + 1 summed over the lanes' positions g */
#pragma unroll
                for (int off = 4; off < 32; off *= 2)
                    l0 += __shfl_xor_sync(0xffffffffu, l0, off), l1 += __shfl_xor_sync(0xffffffffu, l1, off);
                if (g == 0)
                    sM[warp][2 * c] = m0, sM[warp][2 * c + 1] = m1, sL[warp][2 * c] = l0, sL[warp][2 * c + 1] = l1;
            } else {
            l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
            l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
            l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
            l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
            if (c == 0)
                sM[warp][g] = m0, sM[warp][g + 8] = m1, sL[warp][g] = l0, sL[warp][g + 8] = l1;
            }
            __syncthreads();
            float wgt[NT][2];
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    const int row = 8 * nt + 2 * c + i;
                    float M = -INFINITY;
                    for (int k = 0; k < kMmaWarps; k++)
                        M = max_nan(M, sM[k][row]);
                    const float ref = (M == -INFINITY ? 0.0f : M) * kLog2e;
                    wgt[nt][i] = fast_exp2(fmaf(sM[warp][row], kLog2e, -ref));
                }
            float *slot = L.partial + (((int64_t)b * p.Nkv + n2) * L.maxblk + (k0 + n / Sh::TPB)) * (int64_t)R * (DC + 2);
            if (tid < R) {
                float M = -INFINITY, l = 0.0f;
                for (int k = 0; k < kMmaWarps; k++)
                    M = max_nan(M, sM[k][tid]);
                const float ref = (M == -INFINITY ? 0.0f : M) * kLog2e;
                for (int k = 0; k < kMmaWarps; k++)
                    l = fmaf(sL[k][tid], fast_exp2(fmaf(sM[k][tid], kLog2e, -ref)), l);
                __stcg(slot + R * DC + tid, M);
                __stcg(slot + R * DC + R + tid, l);
            }
            for (int k = 0; k < kMmaWarps; k++) {
                if (warp == k)
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int e = 0; e < 4; e++) {
                                const int row = 8 * nt + 2 * c + (e & 1);
                                const int f = IPV  ? 16 * mt + 2 * g + (e >> 1)
                                              : I8 ? 32 * (mt / 2) + 4 * g + 2 * (mt % 2) + (e >> 1)
                                                   : 16 * mt + g + 8 * (e >> 1);
                                float &d = sO[row * DC + f];
                                d = k == 0 ? o[mt][nt][e] * wgt[nt][e & 1] : fmaf(o[mt][nt][e], wgt[nt][e & 1], d);
                                o[mt][nt][e] = 0.0f;
                            }
                __syncthreads();
            }
            for (int x = tid; x < R * DC; x += kMmaThreads)
                __stcg(slot + x, sO[x]);
            m0 = m1 = -INFINITY, l0 = l1 = 0.0f;
        }
    }
    cp_async_wait_all();

    /* Arrive at the row's counter; the last CTA merges. */
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        const unsigned mine = 1u + (s_fault ? 0x10000u : 0u);
        const unsigned total = atomicAdd(L.counter + b * p.Nkv + n2, mine) + mine;
        s_last = (int)(total & 0xFFFFu) == L.nsplit ? (total >> 16 ? 2 : 1) : 0;
    }
    __syncthreads();
    if (s_last == 0)
        return;
    __threadfence();
    if (s_last == 2) { /* a bad block-table entry or run length in this batch: its rows are not written */
        unsigned long long fault;
        if (tid == 0 && dec_claim_report(L.fault, &fault))
            dec_report(L.report, p, L.kv_lens, fault, false);
        return;
    }
    /* (the stages are idle: they hold the block weights) */
    dec_mma_merge<I8, DC, V>(p, L, bt, b, n2, R, nblk, tid, warp, lane, reinterpret_cast<float *>(smem_raw), sInv,
                             sEmpty, sKs);
}

template <typename KT, int DC, int NT>
__global__ void __launch_bounds__(kMmaThreads, 1) dec_mma_kernel(const __grid_constant__ fc_problem p,
                                                                  const __grid_constant__ MmaLaunch L)
{
    dec_mma_body<KT, DC, NT, 0>(p, L);
}

/* A variant (V: kMmaLinearIssue | kMmaWideMerge), chosen at run time (decode.cu). */
template <typename KT, int DC, int NT, int V>
__global__ void __launch_bounds__(kMmaThreads, 1) dec_mmav_kernel(const __grid_constant__ fc_problem p,
                                                                   const __grid_constant__ MmaLaunch L)
{
    dec_mma_body<KT, DC, NT, V>(p, L);
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_MMA_KERNEL_CUH */
