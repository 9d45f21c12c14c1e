/*
 * The tensor-core decode's instantiations (decode_mma_kernel.cuh): key/value fp16, bf16 or int8 ×
 * head-dim classes 64 / 128 / 256 × 8 or 16 rows per kv head.
 */
#include "decode_mma.h"

namespace fc_cuda {

template <typename KT, int DC> static MmaKernel mma_kernel_r(int rows)
{
    MmaKernel k;
    k.fn = rows <= 8 ? dec_mma_kernel<KT, DC, 1> : dec_mma_kernel<KT, DC, 2>;
    k.smem3 = mma_smem_bytes<KT, DC>(3);
    k.smem2 = mma_smem_bytes<KT, DC>(2);
    k.stage_bytes2 = (size_t)kMmaWarps * 2 * 2 * MmaShape<KT, DC>::TILE;
    return k;
}

template <typename KT> static MmaKernel mma_kernel_d(int dclass, int rows)
{
    return dclass == 64 ? mma_kernel_r<KT, 64>(rows) : dclass == 128 ? mma_kernel_r<KT, 128>(rows) : mma_kernel_r<KT, 256>(rows);
}

MmaKernel mma_kernel(fc_dtype kv, int dclass, int rows)
{
    return kv == FC_I8     ? mma_kernel_d<int8_t>(dclass, rows)
           : kv == FC_BF16 ? mma_kernel_d<__nv_bfloat16>(dclass, rows)
                           : mma_kernel_d<__half>(dclass, rows);
}

} // namespace fc_cuda
