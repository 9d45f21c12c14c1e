/*
 * aclnnop/aclnn_incre_flash_attention_v4.h alone compiles warning-free as C11 (built with -Werror
 * -Wpedantic), declares aclnnStatus and the ACLNN codes (semantics §6.1), and links with C names.
 * (As C++ it is compiled by the seed's sample.)
 */
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h" /* include guard */

#include <stdio.h>

int main(void)
{
    int failures = 0;
    aclnnStatus (*first)(const aclTensor *, const aclTensorList *, const aclTensorList *, const aclTensor *,
                         const aclTensor *, const aclIntArray *, const aclTensor *, const aclTensor *,
                         const aclTensor *, const aclTensor *, const aclTensor *, const aclTensor *,
                         const aclTensor *, const aclTensor *, const aclTensor *, int64_t, double, char *, int64_t,
                         int64_t, int64_t, const aclTensor *, uint64_t *, aclOpExecutor **) =
        &aclnnIncreFlashAttentionV4GetWorkspaceSize;
    aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, const aclrtStream) = &aclnnIncreFlashAttentionV4;
    if (first(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 1.0, NULL, 0,
              0, 1, NULL, NULL, NULL) != ACLNN_ERR_PARAM_NULLPTR)
        failures++;
    if (run(NULL, 0, NULL, NULL) != ACLNN_ERR_PARAM_NULLPTR || ACLNN_ERR_PARAM_INVALID != 161002)
        failures++;
    printf("cann_ifa_headers: %d failures\n", failures);
    return failures;
}
