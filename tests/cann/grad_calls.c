#include "grad_calls.h"

#include <string.h>

aclnnStatus fag_call(const fag_args *a)
{
    switch (a->fn) {
    case FAG_V1:
        return aclnnFlashAttentionScoreGradGetWorkspaceSize(
            a->q, a->k, a->v, a->dy, a->pse, a->drop, a->pad, a->mask, a->smax, a->ssum, a->sin, a->ain, a->prefix,
            a->scale, a->keep, a->pre, a->next, a->head_num, a->layout, a->inner, a->mode, a->dq, a->dk, a->dv, a->dpse,
            a->ws, a->ex);
    case FAG_V2:
        return aclnnFlashAttentionScoreGradV2GetWorkspaceSize(
            a->q, a->k, a->v, a->dy, a->pse, a->drop, a->pad, a->mask, a->smax, a->ssum, a->sin, a->ain, a->prefix,
            a->qs, a->kvs, a->scale, a->keep, a->pre, a->next, a->head_num, a->layout, a->inner, a->mode, a->pse_type,
            a->dq, a->dk, a->dv, a->dpse, a->ws, a->ex);
    case FAG_V3:
        return aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
            a->q, a->k, a->v, a->dy, a->pse, a->drop, a->pad, a->mask, a->smax, a->ssum, a->sin, a->ain, a->sink,
            a->prefix, a->qs, a->kvs, a->scale, a->keep, a->pre, a->next, a->head_num, a->layout, a->inner, a->mode,
            a->pse_type, a->dq, a->dk, a->dv, a->dpse, a->dsink, a->ws, a->ex);
    default:
        return aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
            a->q, a->qr, a->k, a->kr, a->v, a->dy, a->pse, a->drop, a->pad, a->mask, a->smax, a->ssum, a->sin, a->ain,
            a->sink, a->prefix, a->aq, a->akv, a->qs, a->kvs, a->scale, a->keep, a->pre, a->next, a->head_num,
            a->layout, a->inner, a->mode, a->pse_type, a->sil, a->dq, a->dqr, a->dk, a->dkr, a->dv, a->dpse, a->dsink,
            a->ws, a->ex);
    }
}

aclnnStatus fag_call_run(fag_fn fn, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream)
{
    switch (fn) {
    case FAG_V1: return aclnnFlashAttentionScoreGrad(ws, bytes, ex, stream);
    case FAG_V2: return aclnnFlashAttentionScoreGradV2(ws, bytes, ex, stream);
    case FAG_V3: return aclnnFlashAttentionScoreGradV3(ws, bytes, ex, stream);
    default: return aclnnFlashAttentionUnpaddingScoreGradV5(ws, bytes, ex, stream);
    }
}

const char *fag_fn_name(fag_fn fn)
{
    static const char *const names[] = {
        "aclnnFlashAttentionScoreGradGetWorkspaceSize", "aclnnFlashAttentionScoreGradV2GetWorkspaceSize",
        "aclnnFlashAttentionScoreGradV3GetWorkspaceSize", "aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize"};
    return names[fn];
}

const char *fag_run_name(fag_fn fn)
{
    static const char *const names[] = {"aclnnFlashAttentionScoreGrad", "aclnnFlashAttentionScoreGradV2",
                                        "aclnnFlashAttentionScoreGradV3", "aclnnFlashAttentionUnpaddingScoreGradV5"};
    return names[fn];
}

void fag_expect(const fag_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    aclGetRecentErrMsg(); /* start from an empty queue */
    uint64_t ws = 12345;
    aclOpExecutor *ex = (aclOpExecutor *)&ws; /* garbage the call must clear */
    fag_args b = *a;
    if (b.ws)
        b.ws = &ws;
    if (b.ex)
        b.ex = &ex;
    const aclnnStatus st = fag_call(&b);
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
    TC_CHECK(strstr(msg, fag_fn_name(a->fn)) == msg, "message must start with the function name: %s", msg);
    if (needle1)
        TC_CHECK(strstr(msg, needle1) != NULL, "message must contain \"%s\": %s", needle1, msg);
    if (needle2)
        TC_CHECK(strstr(msg, needle2) != NULL, "message must contain \"%s\": %s", needle2, msg);
}
