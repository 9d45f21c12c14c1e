/*
 * The tensor-core decode's instantiations (decode_mma_kernel.cuh): key/value fp16, bf16 or int8 ×
 * head-dim classes 64 / 128 / 256 × 8 or 16 rows per kv head, and the variants at class 128.
 */
#include "decode_mma.h"

namespace fc_cuda {

/* The variants (decode_mma_kernel.cuh) exist for head-dim class 128 alone: the others run the default.
 * kMmaIntK (and kMmaIntPV with it) change int8 caches at rows ≤ 8 alone: elsewhere it is the
 * kMmaPositionsM kernel (mma_int_pv says which problems get the integer P·V). */
template <typename KT, int DC, int NT> static MmaFn mma_variant(int variant)
{
    constexpr int posm = kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM;
    if (variant == (posm | kMmaIntK) || variant == (posm | kMmaIntK | kMmaIntPV)) {
        if constexpr (sizeof(KT) == 1 && NT == 1 && DC == 128)
            return variant & kMmaIntPV ? dec_mmav_kernel<KT, 128, NT, posm | kMmaIntK | kMmaIntPV>
                                       : dec_mmav_kernel<KT, 128, NT, posm | kMmaIntK>;
        variant = posm;
    }
    if (DC != 128)
        return dec_mma_kernel<KT, DC, NT>;
    switch (variant) {
    case kMmaLinearIssue: return dec_mmav_kernel<KT, 128, NT, kMmaLinearIssue>;
    case kMmaWideMerge: return dec_mmav_kernel<KT, 128, NT, kMmaWideMerge>;
    case kMmaLinearIssue | kMmaWideMerge: return dec_mmav_kernel<KT, 128, NT, kMmaLinearIssue | kMmaWideMerge>;
    case posm: return dec_mmav_kernel<KT, 128, NT, posm>;
    default: return dec_mma_kernel<KT, DC, NT>;
    }
}

template <typename KT, int DC> static MmaKernel mma_kernel_r(int rows, int variant)
{
    MmaKernel k;
    k.fn = rows <= 8 ? mma_variant<KT, DC, 1>(variant) : mma_variant<KT, DC, 2>(variant);
    k.smem3 = mma_smem_bytes<KT, DC>(3);
    k.smem2 = mma_smem_bytes<KT, DC>(2);
    k.stage_bytes2 = (size_t)kMmaWarps * 2 * 2 * MmaShape<KT, DC>::TILE;
    return k;
}

template <typename KT> static MmaKernel mma_kernel_d(int dclass, int rows, int variant)
{
    return dclass == 64 ? mma_kernel_r<KT, 64>(rows, variant) : dclass == 128 ? mma_kernel_r<KT, 128>(rows, variant)
                                                                : mma_kernel_r<KT, 256>(rows, variant);
}

MmaKernel mma_kernel(fc_dtype kv, int dclass, int rows, int variant)
{
    return kv == FC_I8     ? mma_kernel_d<int8_t>(dclass, rows, variant)
           : kv == FC_BF16 ? mma_kernel_d<__nv_bfloat16>(dclass, rows, variant)
                           : mma_kernel_d<__half>(dclass, rows, variant);
}

} // namespace fc_cuda
