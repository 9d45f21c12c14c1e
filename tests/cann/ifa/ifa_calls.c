#include "ifa_calls.h"
#include "common/phase1_check.h"

#include <string.h>

static const char fn[] = "aclnnIncreFlashAttentionV4GetWorkspaceSize";

aclnnStatus ifa_call(const ifa_args *a)
{
    return aclnnIncreFlashAttentionV4GetWorkspaceSize(a->q, a->k, a->v, a->pse, a->mask, a->act, a->dq1, a->qs1, a->dq2,
                                                      a->qs2, a->qo2, a->aqs, a->aqo, a->bt, a->pad, a->num_heads,
                                                      a->scale, a->layout, a->num_kv_heads, a->block_size, a->inner,
                                                      a->out, a->ws, a->ex);
}

static aclnnStatus ifa_call_with(const void *args, uint64_t *ws, aclOpExecutor **ex)
{
    ifa_args b = *(const ifa_args *)args;
    b.ws = ws;
    b.ex = ex;
    return ifa_call(&b);
}

void ifa_expect(const ifa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    cann_expect_phase1(fn, ifa_call_with, a, a->ws != NULL, a->ex != NULL, code, needle1, needle2);
}
