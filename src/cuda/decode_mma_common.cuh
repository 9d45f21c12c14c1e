/*
 * The tensor-core decode's vocabulary (decode_mma_kernel.cuh): what the host decides about a launch,
 * the warp tile's shape, the CTA's dynamic shared memory, where a 16-byte chunk of a K or V row
 * lies in a stage, and the variant bits.
 */
#ifndef FC_CUDA_DECODE_MMA_COMMON_CUH
#define FC_CUDA_DECODE_MMA_COMMON_CUH

#include "decode_common.cuh"
#include "decode_imma.cuh"
#include "decode_split.h"

namespace fc_cuda {

constexpr int kMmaWarps = 4, kMmaThreads = 32 * kMmaWarps, kMmaRows = 16, kMmaBlock = FC_DEC_BLOCK;

/* What the host decided about a tensor-core launch. */
struct MmaLaunch {
    float *partial;            /* [B][Nkv][maxblk][rows][DC + 2]: per block O (rows × DC), m, l */
    unsigned *counter;         /* [B][Nkv]: CTAs arrived (low 16 bits) + 0x10000 per CTA that found a bad entry */
    unsigned long long *fault; /* the first bad block-table entry (dec_fault) */
    DecReport *report;         /* host-mapped */
    const int64_t *kv_lens;    /* the run's kv lengths (device), or NULL (dec_batch) */
    int rows, qr, nsplit, maxblk, stages;
    bool qlo; /* fp16/bf16 caches: q in two parts (its dtype is not the cache's) */
    const char *k_list[kDecMaxList], *v_list[kDecMaxList];
};

/* The MMA operand type: the cache's for fp16/bf16, fp16 for int8 (every int8 value is exact). */
template <typename KT> struct MmaType { using T = KT; };
template <> struct MmaType<int8_t> { using T = __half; };

/* Warp tile: WN positions, one K (or V) tile of 8 KiB per stage. */
template <typename KT, int DC> struct MmaShape {
    static constexpr int ES = (int)sizeof(KT);
    static constexpr int WN = 8192 / (DC * ES) > 64 ? 64 : 8192 / (DC * ES);
    static constexpr int CR = DC * ES / 16;         /* 16-byte chunks per row */
    static constexpr int TILE = WN * DC * ES;       /* bytes of one K or V tile */
    static constexpr int TPB = kMmaBlock / (kMmaWarps * WN); /* tiles per warp per block */
    static constexpr int NS = WN / 8, KS = DC / 16, PPL = WN > 32 ? WN / 32 : 1;
    static_assert(WN % 16 == 0 && TPB * kMmaWarps * WN == kMmaBlock, "blocks of whole warp tiles");
};

/* Dynamic shared memory: the stages, Q in two parts [2][16][DC], the fold buffer O [16][DC]. */
template <typename KT, int DC> __host__ __device__ constexpr size_t mma_smem_bytes(int stages)
{
    return (size_t)kMmaWarps * stages * 2 * MmaShape<KT, DC>::TILE + (size_t)2 * kMmaRows * DC * 2 +
           (size_t)kMmaRows * DC * 4;
}

/* Where a 16-byte chunk of a row lies in a stage (XOR swizzles against bank conflicts): 16-bit
 * tiles for ldmatrix (8 rows, one chunk column), int8 keys (a 16-byte load per thread, rows in
 * pairs; IK, kMmaIntK's: ldmatrix as 16-bit tiles), int8 values (4-byte loads of rows 2c, 2c + 1,
 * 2c + 8, 2c + 9; IV, kMmaIntPV's: ldmatrix.trans as 16-bit tiles). */
template <int ES, int CR, bool VAL, bool IK = false, bool IV = false> __device__ __forceinline__ int mma_chunk(int row, int ch)
{
    if (CR < 8)
        return ch;
    if (ES == 2)
        return ch ^ (row & 7);
    if (IK && !VAL)
        return imma_chunk(row, ch);
    if (IV && VAL)
        return imma_vchunk(row, ch);
    return VAL ? ch ^ (((row >> 1) & 3) << 1) : ch ^ ((row & 1) << 2);
}

/* Variants of the kernel (bits of V; 0 is the default): kMmaLinearIssue copies a tile whose rows lie
 * at one stride (a contiguous cache, a tile inside one page, a tensor list) from its first row's
 * address, each lane a fixed 16-byte chunk column, instead of gathering per-row addresses by warp
 * shuffles; kMmaWideMerge folds the blocks' partials with every lane of the last CTA loading (row
 * statistics strided over lanes and summed in a fixed tree, outputs two features per load, many
 * blocks in flight) instead of a few threads walking the blocks one load at a time;
 * kMmaPositionsM (rows ≤ 8) computes Sᵀ = K·Qᵀ with the positions on the MMA's M side and the ≤ 8
 * rows as its N = 8 (half the MMAs and half the softmax work of 16 padded rows; Q's fragments stay
 * in registers), each lane then holding rows 2c, 2c + 1 of positions g, g + 8, and turns Sᵀ's
 * accumulators into the B operand of Oᵀ += Vᵀ·Pᵀ by one movmatrix per 8 × 8; kMmaIntK (with
 * kMmaPositionsM, int8 keys) computes Sᵀ on the integer tensor cores, K's bytes as they are and q in
 * three int8 parts (decode_imma.cuh); kMmaIntPV (with kMmaIntK) computes Oᵀ += Vᵀ·Pᵀ there too, V's
 * bytes as they are and P as 16-bit integers from each tile's own max (decode_imma.cuh imma_pv). */
constexpr int kMmaLinearIssue = 1, kMmaWideMerge = 2, kMmaPositionsM = 4, kMmaIntK = 8, kMmaIntPV = 16;

/* Whether a problem's tensor-core decode runs P·V on the integer tensor cores: the kMmaIntPV kernel
 * exists for int8 caches at head-dim class 128 and rows ≤ 8 alone (decode_mma.cu); elsewhere that
 * variant runs a kernel with fp16 P, which fp32 outputs with int8 values do not take (decode_plan.h). */
inline bool mma_int_pv(fc_dtype kv, int dclass, int rows, int variant)
{
    return variant == (kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK | kMmaIntPV) && kv == FC_I8 &&
           dclass == 128 && rows <= 8;
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_MMA_COMMON_CUH */
