/*
 * The public CANN headers compile warning-free as C11 (this file is built with -Werror) and
 * declare the exact values of semantics §6.2, §6.3.
 */
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "acl/acl.h" /* include guards */

#include <stdio.h>

#define EXPECT(cond)                                                                                                   \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL: %s\n", #cond);                                                                               \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

typedef void (*fnptr)(void);

int main(void)
{
    int failures = 0;
    EXPECT(ACL_DT_UNDEFINED == -1 && ACL_FLOAT == 0 && ACL_FLOAT16 == 1 && ACL_INT8 == 2 && ACL_INT32 == 3);
    EXPECT(ACL_UINT8 == 4 && ACL_INT16 == 6 && ACL_UINT16 == 7 && ACL_UINT32 == 8 && ACL_INT64 == 9);
    EXPECT(ACL_UINT64 == 10 && ACL_DOUBLE == 11 && ACL_BOOL == 12 && ACL_STRING == 13 && ACL_COMPLEX64 == 16);
    EXPECT(ACL_COMPLEX128 == 17 && ACL_BF16 == 27 && ACL_INT4 == 29 && ACL_UINT1 == 30 && ACL_COMPLEX32 == 33);
    EXPECT(ACL_HIFLOAT8 == 34 && ACL_FLOAT8_E5M2 == 35 && ACL_FLOAT8_E4M3FN == 36 && ACL_FLOAT8_E8M0 == 37);
    EXPECT(ACL_FLOAT6_E3M2 == 38 && ACL_FLOAT6_E2M3 == 39 && ACL_FLOAT4_E2M1 == 40 && ACL_FLOAT4_E1M2 == 41);
    EXPECT(ACL_FORMAT_UNDEFINED == -1 && ACL_FORMAT_NCHW == 0 && ACL_FORMAT_NHWC == 1 && ACL_FORMAT_ND == 2);
    EXPECT(ACL_FORMAT_NC1HWC0 == 3 && ACL_FORMAT_FRACTAL_Z == 4 && ACL_FORMAT_NC1HWC0_C04 == 12);
    EXPECT(ACL_FORMAT_HWCN == 16 && ACL_FORMAT_NDHWC == 27 && ACL_FORMAT_FRACTAL_NZ == 29 && ACL_FORMAT_NCDHW == 30);
    EXPECT(ACL_FORMAT_NDC1HWC0 == 32 && ACL_FRACTAL_Z_3D == 33 && ACL_FORMAT_NC == 35 && ACL_FORMAT_NCL == 47);
    EXPECT(ACL_FORMAT_FRACTAL_NZ_C0_16 == 50 && ACL_FORMAT_FRACTAL_NZ_C0_32 == 51 && ACL_FORMAT_FRACTAL_NZ_C0_2 == 52);
    EXPECT(ACL_FORMAT_FRACTAL_NZ_C0_4 == 53 && ACL_FORMAT_FRACTAL_NZ_C0_8 == 54);
    EXPECT(ACL_MEMCPY_HOST_TO_HOST == 0 && ACL_MEMCPY_HOST_TO_DEVICE == 1 && ACL_MEMCPY_DEVICE_TO_HOST == 2);
    EXPECT(ACL_MEMCPY_DEVICE_TO_DEVICE == 3 && ACL_MEMCPY_DEFAULT == 4 && ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE == 5);
    EXPECT(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE == 6 && ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7);
    EXPECT(ACL_MEM_MALLOC_HUGE_FIRST == 0 && ACL_MEM_MALLOC_HUGE_ONLY == 1 && ACL_MEM_MALLOC_NORMAL_ONLY == 2);
    EXPECT(ACL_MEM_MALLOC_HUGE_FIRST_P2P == 3 && ACL_MEM_MALLOC_HUGE_ONLY_P2P == 4);
    EXPECT(ACL_MEM_MALLOC_NORMAL_ONLY_P2P == 5 && ACL_MEM_MALLOC_HUGE1G_ONLY == 6 && ACL_MEM_MALLOC_HUGE1G_ONLY_P2P == 7);
    EXPECT(ACL_MEM_TYPE_LOW_BAND_WIDTH == 0x100 && ACL_MEM_TYPE_HIGH_BAND_WIDTH == 0x1000);
    EXPECT(ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000);
    EXPECT(ACL_OPT_DETERMINISTIC == 0 && ACL_OPT_ENABLE_DEBUG_KERNEL == 1 && ACL_OPT_STRONG_CONSISTENCY == 2);
    EXPECT(ACL_OPT_ENABLE_KERNEL_EARLY_START == 3);
    EXPECT(ACLNN_SUCCESS == 0 && ACLNN_ERR_PARAM_NULLPTR == 161001 && ACLNN_ERR_PARAM_INVALID == 161002);
    EXPECT(ACLNN_ERR_RUNTIME_ERROR == 361001 && ACLNN_ERR_INNER == 561000 && ACLNN_ERR_INNER_INFERSHAPE_ERROR == 561001);
    EXPECT(ACLNN_ERR_INNER_TILING_ERROR == 561002 && ACLNN_ERR_INNER_FIND_KERNEL_ERROR == 561003);
    EXPECT(ACLNN_ERR_INNER_CREATE_EXECUTOR == 561101 && ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR == 561102);
    EXPECT(ACLNN_ERR_INNER_NULLPTR == 561103);
    EXPECT(ACL_SUCCESS == 0 && ACL_ERROR_NONE == 0 && ACL_ERROR_INVALID_PARAM == 100000);
    EXPECT(ACL_ERROR_UNINITIALIZE == 100001 && ACL_ERROR_REPEAT_INITIALIZE == 100002);
    EXPECT(ACL_ERROR_REPEAT_FINALIZE == 100037 && ACL_ERROR_BAD_ALLOC == 200000 && ACL_ERROR_API_NOT_SUPPORT == 200001);
    EXPECT(ACL_ERROR_INVALID_DEVICE == 200002 && ACL_ERROR_INTERNAL_ERROR == 500000 && ACL_ERROR_FAILURE == 500001);
    EXPECT(ACL_ERROR_RT_FAILURE == 500003 && ACL_ERROR_RT_PARAM_INVALID == 107000);
    EXPECT(ACL_ERROR_RT_INVALID_DEVICEID == 107001 && ACL_ERROR_RT_CONTEXT_NULL == 107002);
    EXPECT(ACL_ERROR_RT_MEMORY_ALLOCATION == 207001 && ACL_ERROR_RT_INTERNAL_ERROR == 507000);
    EXPECT(sizeof(aclFloat16) == 2 && sizeof(aclnnStatus) == 4 && sizeof(aclError) == sizeof(int));
    /* every operator entry point links */
    fnptr fns[] = {(fnptr)aclnnFlashAttentionScoreGetWorkspaceSize, (fnptr)aclnnFlashAttentionScore,
                   (fnptr)aclnnFlashAttentionScoreV2GetWorkspaceSize, (fnptr)aclnnFlashAttentionScoreV2,
                   (fnptr)aclnnFlashAttentionScoreV3GetWorkspaceSize, (fnptr)aclnnFlashAttentionScoreV3,
                   (fnptr)aclnnFlashAttentionVarLenScoreGetWorkspaceSize, (fnptr)aclnnFlashAttentionVarLenScore,
                   (fnptr)aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize, (fnptr)aclnnFlashAttentionVarLenScoreV5,
                   (fnptr)aclGetRecentErrMsg, (fnptr)aclrtCtxGetSysParamOpt, (fnptr)aclGetTensorListSize};
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
        EXPECT(fns[k] != NULL);
    printf("cann_headers_c: %d failures\n", failures);
    return failures != 0;
}
