/* The Hopper kernels' tensor maps (tma_map.h). */
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "../launch.h"
#include "tma_map.h"

namespace fc_hopper {

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

fc_status tma_encoder(void **encode, const char *who)
{
    *encode = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", encode, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess)
        return fc_cuda_err(err, who);
    if (found != cudaDriverEntryPointSuccess || !*encode)
        return fc_fail(FC_ERR_BACKEND, "%s: the driver has no cuTensorMapEncodeTiled", who);
    return FC_OK;
}

const char *tma_map_view(void *encode, CUtensorMap *map, const fc_view &v, int64_t features, int64_t positions, int64_t heads,
                         int64_t batches, int rows)
{
    if (v.se != 1)
        return "a feature stride other than 1";
    if ((uintptr_t)v.data % 16)
        return "a base address not 16-byte aligned";
    cuuint64_t dim[4] = {(cuuint64_t)features, (cuuint64_t)positions, (cuuint64_t)heads, (cuuint64_t)batches};
    const int64_t step[3] = {v.ss * 2, v.sn * 2, v.sb * 2};
    cuuint64_t stride[3];
    int64_t natural = features * 2; /* a stride for a dimension of extent 1, which is never stepped */
    for (int d = 0; d < 3; d++) {
        const int64_t s = dim[d + 1] > 1 ? step[d] : (natural + 15) / 16 * 16;
        if (s <= 0 || s % 16 || s >= ((int64_t)1 << 40))
            return "strides that are not positive multiples of 16 bytes";
        stride[d] = (cuuint64_t)s;
        natural = s * (int64_t)dim[d + 1];
    }
    for (int d = 0; d < 4; d++)
        if (dim[d] == 0 || dim[d] >= ((cuuint64_t)1 << 31))
            return "an extent beyond 2^31";
    const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1}, unit[4] = {1, 1, 1, 1};
    const CUtensorMapDataType dt = v.dtype == FC_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const CUresult r = ((EncodeTiled)encode)(map, dt, 4, v.data, dim, stride, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? NULL : "cuTensorMapEncodeTiled refused the view";
}

} // namespace fc_hopper
