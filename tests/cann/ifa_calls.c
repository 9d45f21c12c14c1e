#include "ifa_calls.h"

#include <string.h>

static const char fn[] = "aclnnIncreFlashAttentionV4GetWorkspaceSize";

aclnnStatus ifa_call(const ifa_args *a)
{
    return aclnnIncreFlashAttentionV4GetWorkspaceSize(a->q, a->k, a->v, a->pse, a->mask, a->act, a->dq1, a->qs1, a->dq2,
                                                      a->qs2, a->qo2, a->aqs, a->aqo, a->bt, a->pad, a->num_heads,
                                                      a->scale, a->layout, a->num_kv_heads, a->block_size, a->inner,
                                                      a->out, a->ws, a->ex);
}

void ifa_expect(const ifa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    aclGetRecentErrMsg(); /* start from an empty queue */
    uint64_t ws = 12345;
    aclOpExecutor *ex = (aclOpExecutor *)&ws; /* garbage the call must clear */
    ifa_args b = *a;
    if (b.ws)
        b.ws = &ws;
    if (b.ex)
        b.ex = &ex;
    const aclnnStatus st = ifa_call(&b);
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(st == code, "expected %d, got %d (message: %s)", code, st, msg ? msg : "(none)");
    if (code == ACLNN_SUCCESS) {
        TC_CHECK(msg == NULL, "a successful call left a message: %s", msg);
        if (st == ACLNN_SUCCESS && b.ex)
            aclDestroyAclOpExecutor(ex);
        return;
    }
    if (b.ex)
        TC_CHECK(ex == NULL, "*executor must be NULL after a failure");
    if (b.ws)
        TC_CHECK(ws == 0, "*workspaceSize must be 0 after a failure, got %llu", (unsigned long long)ws);
    if (!TC_CHECK(msg != NULL, "no message for a failure"))
        return;
    TC_CHECK(strstr(msg, fn) == msg, "message must start with the function name: %s", msg);
    if (needle1)
        TC_CHECK(strstr(msg, needle1) != NULL, "message must contain \"%s\": %s", needle1, msg);
    if (needle2)
        TC_CHECK(strstr(msg, needle2) != NULL, "message must contain \"%s\": %s", needle2, msg);
}
