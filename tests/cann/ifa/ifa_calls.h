/*
 * Every argument of aclnnIncreFlashAttentionV4GetWorkspaceSize in one struct, so that bad-input
 * and device-data tests can start from a valid call and change one thing.
 */
#ifndef FLASHC_TESTS_CANN_IFA_CALLS_H
#define FLASHC_TESTS_CANN_IFA_CALLS_H

#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "common/harness.h"

typedef struct ifa_args {
    const aclTensor *q, *pse, *mask, *dq1, *qs1, *dq2, *qs2, *qo2, *aqs, *aqo, *bt, *pad, *out;
    const aclTensorList *k, *v;
    const aclIntArray *act;
    int64_t num_heads, num_kv_heads, block_size, inner;
    double scale;
    char *layout;
    uint64_t *ws;
    aclOpExecutor **ex;
} ifa_args;

/* The first phase with a's arguments. */
aclnnStatus ifa_call(const ifa_args *a);

/* Calls a and checks the code, that the newest message starts with the function name and
 * contains every non-NULL needle, and that *executor / *workspaceSize were cleared on failure. */
void ifa_expect(const ifa_args *a, aclnnStatus code, const char *needle1, const char *needle2);

#endif /* FLASHC_TESTS_CANN_IFA_CALLS_H */
