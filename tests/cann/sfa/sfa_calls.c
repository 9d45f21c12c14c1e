#include "sfa_calls.h"
#include "common/phase1_check.h"

#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_sparse_flash_attention.h"
#include "aclnnop/aclnn_sparse_flash_attention_grad.h"

aclnnStatus sfa_call(const sfa_args *a)
{
    if (a->grad)
        return aclnnSparseFlashAttentionGradGetWorkspaceSize(
            a->q, a->k, a->v, a->idx, a->dout, a->out, a->smax, a->ssum, a->aq, a->akv, a->qr, a->kr, a->scale, a->bs,
            a->layout, a->mode, a->pre, a->next, a->det, a->dq, a->dk, a->dv, a->dqr, a->dkr, a->ws, a->ex);
    return aclnnSparseFlashAttentionGetWorkspaceSize(a->q, a->k, a->v, a->idx, a->table, a->aq, a->akv, a->qr, a->kr,
                                                     a->scale, a->bs, a->lq, a->lkv, a->mode, a->pre, a->next,
                                                     a->amode, a->lse, a->out, a->smax, a->ssum, a->ws, a->ex);
}

aclnnStatus sfa_call_run(bool grad, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream)
{
    return grad ? aclnnSparseFlashAttentionGrad(ws, bytes, ex, stream) : aclnnSparseFlashAttention(ws, bytes, ex, stream);
}

CANN_PHASE1_CALL(sfa_call_with, sfa_args, sfa_call)

void sfa_expect(const sfa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    cann_expect_phase1(a->grad ? "aclnnSparseFlashAttentionGradGetWorkspaceSize" : "aclnnSparseFlashAttentionGetWorkspaceSize", sfa_call_with, a, a->ws != NULL, a->ex != NULL, code, needle1, needle2);
}

void sfa_expect_run(const sfa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    sfa_args b = *a;
    b.ws = &ws, b.ex = &ex;
    aclnnStatus st = sfa_call(&b);
    if (!TC_CHECK(st == ACLNN_SUCCESS, "the first phase returned %d: %s", st, aclGetRecentErrMsg()))
        return;
    void *w = NULL;
    if (ws > 0 && aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        abort();
    aclGetRecentErrMsg();
    st = sfa_call_run(a->grad, w, ws, ex, NULL);
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(st == code, "second phase: expected %d, got %d (message: %s)", code, st, msg ? msg : "(none)");
    if (code != ACLNN_SUCCESS)
        cann_expect_message(a->grad ? "aclnnSparseFlashAttentionGrad" : "aclnnSparseFlashAttention", msg, needle1, needle2);
    else
        TC_CHECK(msg == NULL, "a successful run left a message: %s", msg);
    if (w)
        aclrtFree(w);
}
