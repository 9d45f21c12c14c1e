/*
 * Features compiled into the 16-bit kernels only where a problem has them: template FEAT bits on
 * separate *_feat_kernel instantiations, so that the kernels that run by default keep their code
 * (tools/sass-plain.sh checks their SASS).
 */
#ifndef FC_CUDA_FEATURES_CUH
#define FC_CUDA_FEATURES_CUH

#include "../core/terms.h"
#include "decode_common.cuh"
#include "rope_split.h"
#include "tile.cuh"

namespace fc_cuda {

constexpr int kFeatPhilox = 1; /* dropout generated on the device from a seed and offset (core/philox.h) */
constexpr int kFeatRope = 2;   /* rope-split heads (Dr > 0): query and key tiles carry q_rope / k_rope (rope_split.h) */
constexpr int kFeatF32 = 4;    /* fp32 operands and output (T = float): products as 3×TF32 (tf32.cuh) */
constexpr int kFeatPaged = 8;  /* paged key/value (block tables) or per-batch key/value tensors (load_kv) */

/* Whether a problem's key/value storage is paged or a tensor list (kFeatPaged). */
inline bool kv_paged_or_listed(const fc_problem &p)
{
    return p.k.pages.table || p.v.pages.table || p.k.batch_data || p.v.batch_data;
}

/* The FEAT bits a problem needs. */
inline int feat_bits(const fc_problem &p)
{
    return (p.drop_philox ? kFeatPhilox : 0) | (p.Dr > 0 ? kFeatRope : 0) | (p.q.dtype == FC_F32 ? kFeatF32 : 0) |
           (kv_paged_or_listed(p) ? kFeatPaged : 0);
}

/* Whether a problem drops elements, as a kernel with FEAT sees it. */
template <int FEAT> __device__ __forceinline__ bool drops(const fc_problem &p)
{
    return (FEAT & kFeatPhilox) || p.drop_bits;
}

/* Whether element (n1, i, j) is kept: the caller's keep bit, or (kFeatPhilox) the generated one,
 * the CPU's very bit (core/terms.h fc_dropout_keeps). */
template <int FEAT>
__device__ __forceinline__ bool keeps(const fc_problem &p, const fc_batch &bt, int64_t n1, int64_t i, int64_t j)
{
    if (FEAT & kFeatPhilox)
        return fc_dropout_keeps(&p, &bt, n1, i, j);
    return fc_keep_bit(p.drop_bits, fc_keep_bit_index(&bt, n1, i, j));
}

/* A query or key tile: load_tile of rows [s0, s0 + ROWS) of view v (row0: its row 0 of head n), and
 * with kFeatRope the rope features of the same rows after them (from vr, head n of batch b at token
 * offset tok), Dqk + Dr ≤ D.  vec: the host found both views cp.async-loadable (Dqk, Dr multiples of 8). */
template <int FEAT, typename T, int D, int ROWS, int THREADS = kThreads>
__device__ __forceinline__ void load_qk(T *tile, const fc_problem &p, const fc_view &v, const char *row0, const fc_view &vr,
                                        int64_t b, int64_t tok, int64_t n, int64_t s0, int valid, bool vec)
{
    if (!(FEAT & kFeatRope)) {
        load_tile<T, D, ROWS, THREADS>(tile, v, row0, s0, valid, (int)p.Dqk, vec);
        return;
    }
    constexpr int C = D / 8, STEP = THREADS / C;
    static_assert(THREADS % C == 0 && ROWS % STEP == 0, "tile rows must split evenly over the threads");
    const int dqk = (int)p.Dqk, dr = (int)p.Dr;
    const char *rrow0 = fc_view_row(&vr, 2, b, tok, n, 0);
    if (vec) { /* a chunk of 8 features lies wholly in one part */
        const int c = threadIdx.x % C, r0 = threadIdx.x / C;
        int f;
        const int part = fc_rope_part(c * 8, dqk, dr, &f);
        const int64_t rs = (part == 1 ? vr.ss : v.ss) * 2;
        cp_chunk_rows<T, D, ROWS, STEP>(tile, (part == 1 ? rrow0 : row0) + (s0 + r0) * rs + f * 2, rs, c, r0, part >= 0, valid,
                                        v.data);
        return;
    }
#pragma unroll 1
    for (int x = threadIdx.x; x < ROWS * C; x += THREADS) {
        const int row = x / C, c = x % C;
        T *dst = tile + swz<D>(row, c);
#pragma unroll 1
        for (int k = 0; k < 8; k++) {
            int f;
            const int part = fc_rope_part(c * 8 + k, dqk, dr, &f);
            const fc_view &w = part == 1 ? vr : v;
            const char *src = (part == 1 ? rrow0 : row0) + (s0 + row) * w.ss * 2;
            dst[k] = row < valid && part >= 0 ? *(const T *)(src + f * w.se * 2) : T(0.0f);
        }
    }
}

/* Row 0 of kv head n2 of batch b of a key/value view (value: which of the launch L's lists holds
 * a tensor list's bases) for a kernel with FEAT: fc_view_row's, as ever; with kFeatPaged the list
 * element's, or NULL for a paged view, whose rows load_kv finds through the block table tile by
 * tile.  (Views are not copied: a copy's fields would take registers the D = 256 kernels lack.) */
template <int FEAT, typename A>
__device__ __forceinline__ const char *kv_row0(const fc_view &v, const A &L, bool value, int esize, int64_t b, int64_t tok,
                                               int64_t n2)
{
    if constexpr ((FEAT & kFeatPaged) != 0)
        return v.pages.table ? nullptr : dec_row(v, v.batch_data ? (value ? L.v_list : L.k_list)[b] : nullptr, esize, b, tok, n2, 0);
    else
        return fc_view_row(&v, esize, b, tok, n2, 0);
}

/* A key or value tile, as load_tile loads it (rows [s0, s0 + ROWS) of kv head n2, rows ≥ valid and
 * features ≥ dvalid zeros; row0 from kv_row0).  With kFeatPaged: a paged tile whose valid rows lie
 * in one block is one run of rows from that block's row s0 (load_tile; not in the fp32 class-256
 * kernel, where that code's registers would spill); other paged tiles load
 * each row from its own block (decode_common.cuh dec_row: a row whose table entry is out of range
 * loads as zeros, though the run's check kernel has already stopped such a run), and a tensor
 * list's rows lie at one stride from row0 (itself a valid address wherever a tile is loaded: the
 * batch has a row there). */
template <int FEAT, typename T, int D, int ROWS, int THREADS = kThreads>
__device__ __forceinline__ void load_kv(T *tile, const fc_view &v, const char *row0, int64_t b, int64_t n2, int64_t s0, int valid,
                                        int dvalid, bool vec)
{
    constexpr int ES = (int)sizeof(T), E = kChunk<T>, C = D / E, STEP = THREADS / C;
    constexpr bool kOneRun = ES == 2 || D < 256; /* the fp32 class-256 kernel lacks the registers for it */
    const bool paged = v.pages.table != nullptr;
    if (!(FEAT & kFeatPaged) || (!paged && !v.batch_data)) {
        load_tile<T, D, ROWS, THREADS>(tile, v, row0, s0, valid, dvalid, vec);
        return;
    }
    if (kOneRun && paged && valid > 0 && dec_one_page(v, (int)s0, valid)) {
        const char *r = dec_row(v, nullptr, ES, b, 0, n2, s0);
        load_tile<T, D, ROWS, THREADS>(tile, v, r ? r : v.data, 0, r ? valid : 0, dvalid, vec);
        return;
    }
    const char *any = paged ? v.data : row0; /* cp.async's address when it reads nothing */
    auto at = [&](int row) -> const char * {
        return row >= valid ? nullptr : paged ? dec_row(v, nullptr, ES, b, 0, n2, s0 + row) : row0 + (s0 + row) * v.ss * ES;
    };
    if (vec) {
        const int c = threadIdx.x % C, r0 = threadIdx.x / C;
        const bool feat = c * E < dvalid;
#pragma unroll 1
        for (int row = r0; row < ROWS; row += STEP) {
            const char *src = feat ? at(row) : nullptr;
            cp_async16(tile + swz<D, E>(row, c), src ? src + c * 16 : any, src ? 16 : 0);
        }
        return;
    }
#pragma unroll 1
    for (int x = threadIdx.x; x < ROWS * C; x += THREADS) {
        const int row = x / C, c = x % C;
        T *dst = tile + swz<D, E>(row, c);
        const char *src = at(row);
        for (int k = 0; k < E; k++) {
            const int e = c * E + k;
            dst[k] = src && e < dvalid ? *(const T *)(src + e * v.se * ES) : T(0.0f);
        }
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_FEATURES_CUH */
