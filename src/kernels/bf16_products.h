/*
 * Which forward products of a problem the bf16-product sets (amx, avx512bf16, neonbf16) run in bf16,
 * and in how many bf16 parts (amx_pack.h says why: precision per output tolerance).
 */
#ifndef FC_KERNELS_BF16_PRODUCTS_H
#define FC_KERNELS_BF16_PRODUCTS_H

#include "qk.h"

/* bf16 parts per product (1: bf16 as it is; 4 or 3: the hi/lo split, see amx_pack.h). */
static inline int fc_amx_qk_parts(const fc_problem *p)
{
    const bool bf = p->q.dtype == FC_BF16 && p->k.dtype == FC_BF16 &&
                    (!p->Dr || (p->q_rope.dtype == FC_BF16 && p->k_rope.dtype == FC_BF16));
    return bf ? 1 : 4;
}

/* Whether O += P·V runs on tiles too: not for fp32 tolerance (1e-4 relative), which a P split
 * into two bf16 parts (2⁻¹⁷ of Σ|p·v|) misses where the terms cancel; that takes the fp32 GEMM.
 * The tolerance is the output's (an fp32 output may ask for less, fc_out_tolerance). */
static inline bool fc_amx_pv_tiles(const fc_problem *p) { return fc_out_tolerance(p) != FC_F32; }

static inline int fc_amx_pv_parts(const fc_problem *p)
{
    return p->v.dtype == FC_BF16 && fc_out_tolerance(p) == FC_BF16 ? 1 : 3;
}

/* Whether the set's bf16 GEMM pays for the problem: AMX tiles always; the avx512bf16 set's
 * vdpbf16ps and the neonbf16 set's BFDOT only for one-part products (bf16 operands; P·V in one
 * part or in fp32).  A k-part product takes k vdpbf16ps (BFDOT) per feature pair where the fp32
 * GEMM takes 2 FMAs, and vdpbf16ps issues at most at the FMA's rate (Sapphire Rapids: half of
 * it), BFDOT at FMLA's, so k ≥ 2 never pays. */
static inline bool fc_bf16_products_pay(const fc_problem *p)
{
    return FC_AMX || (fc_amx_qk_parts(p) == 1 && (!fc_amx_pv_tiles(p) || fc_amx_pv_parts(p) == 1));
}

/* Whether the item's products run on tiles: bf16/fp16 operands and more rows than the dot path
 * takes (decode rows read the keys in place, see fc_qk_reads_keys). */
static inline bool fc_amx_applies(const fc_problem *p, int rows)
{
    const bool half_q = p->q.dtype == FC_BF16 || p->q.dtype == FC_F16;
    const bool half_k = p->k.dtype == FC_BF16 || p->k.dtype == FC_F16;
    const bool half_v = p->v.dtype == FC_BF16 || p->v.dtype == FC_F16;
    const bool half_r = !p->Dr || ((p->q_rope.dtype == FC_BF16 || p->q_rope.dtype == FC_F16) &&
                                   (p->k_rope.dtype == FC_BF16 || p->k_rope.dtype == FC_F16));
    return half_q && half_k && half_v && half_r && rows > FC_QK_DOT_ROWS && fc_bf16_products_pay(p);
}

#endif /* FC_KERNELS_BF16_PRODUCTS_H */
