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

CANN_PHASE1_CALL(ifa_call_with, ifa_args, ifa_call)

void ifa_expect(const ifa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    cann_expect_phase1(fn, ifa_call_with, a, a->ws != NULL, a->ex != NULL, code, needle1, needle2);
}
