/*
 * The backward header compiles warning-free as C11 on its own (this file is built with -Werror),
 * declares the four entry pairs with C linkage, and makes aclnnStatus and the ACLNN_* codes visible.
 */
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h" /* include guard */

#include <stdio.h>

typedef const aclTensor *T;
typedef const aclIntArray *I;
typedef aclnnStatus (*grad_v1)(T, T, T, T, T, T, T, T, T, T, T, T, I, double, double, int64_t, int64_t, int64_t, char *,
                               int64_t, int64_t, T, T, T, T, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*grad_v2)(T, T, T, T, T, T, T, T, T, T, T, T, I, I, I, double, double, int64_t, int64_t, int64_t,
                               char *, int64_t, int64_t, int64_t, T, T, T, T, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*grad_v3)(T, T, T, T, T, T, T, T, T, T, T, T, T, I, I, I, double, double, int64_t, int64_t,
                               int64_t, char *, int64_t, int64_t, int64_t, T, T, T, T, T, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*grad_v5)(T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, I, I, I, I, I, double, double, int64_t,
                               int64_t, int64_t, char *, int64_t, int64_t, int64_t, char *, T, T, T, T, T, T, T,
                               uint64_t *, aclOpExecutor **);

int main(void)
{
    int failures = 0;
    aclnnStatus (*runs[])(void *, uint64_t, aclOpExecutor *, const aclrtStream) = {
        aclnnFlashAttentionScoreGrad, aclnnFlashAttentionScoreGradV2, aclnnFlashAttentionScoreGradV3,
        aclnnFlashAttentionUnpaddingScoreGradV5};
    for (int k = 0; k < 4; k++)
        failures += runs[k](NULL, 0, NULL, NULL) != ACLNN_ERR_PARAM_NULLPTR;
    /* the parameter lists of semantics §3.1, type by type (a mismatch fails to compile) */
    const grad_v1 v1 = aclnnFlashAttentionScoreGradGetWorkspaceSize;
    const grad_v2 v2 = aclnnFlashAttentionScoreGradV2GetWorkspaceSize;
    const grad_v3 v3 = aclnnFlashAttentionScoreGradV3GetWorkspaceSize;
    const grad_v5 v5 = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize;
    (void)v1, (void)v2, (void)v3, (void)v5;
    failures += ACLNN_SUCCESS != 0 || ACLNN_ERR_PARAM_NULLPTR != 161001 || ACLNN_ERR_PARAM_INVALID != 161002;
    printf("cann_grad_headers_c: %d failures\n", failures);
    return failures;
}
