#include "calls.h"

#include <string.h>

aclnnStatus fa_call(const fa_args *a)
{
    switch (a->fn) {
    case FA_V1:
        return aclnnFlashAttentionScoreGetWorkspaceSize(a->q, a->k, a->v, a->pse, a->drop, a->pad, a->mask, a->prefix,
                                                        a->scale, a->keep, a->pre, a->next, a->head_num, a->layout,
                                                        a->inner, a->mode, a->smax, a->ssum, a->sout, a->out, a->ws, a->ex);
    case FA_V2:
        return aclnnFlashAttentionScoreV2GetWorkspaceSize(a->q, a->k, a->v, a->pse, a->drop, a->pad, a->mask, a->prefix,
                                                          a->qs, a->kvs, a->scale, a->keep, a->pre, a->next, a->head_num,
                                                          a->layout, a->inner, a->mode, a->pse_type, a->smax, a->ssum,
                                                          a->sout, a->out, a->ws, a->ex);
    case FA_V3:
        return aclnnFlashAttentionScoreV3GetWorkspaceSize(a->q, a->k, a->v, a->pse, a->drop, a->pad, a->mask, a->sink,
                                                          a->prefix, a->qs, a->kvs, a->scale, a->keep, a->pre, a->next,
                                                          a->head_num, a->layout, a->inner, a->mode, a->pse_type, a->smax,
                                                          a->ssum, a->sout, a->out, a->ws, a->ex);
    case FA_VARLEN:
        return aclnnFlashAttentionVarLenScoreGetWorkspaceSize(a->q, a->k, a->v, a->pse, a->drop, a->pad, a->mask,
                                                              a->prefix, a->aq, a->akv, a->scale, a->keep, a->pre,
                                                              a->next, a->head_num, a->layout, a->inner, a->mode, a->smax,
                                                              a->ssum, a->sout, a->out, a->ws, a->ex);
    default:
        return aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
            a->q, a->qr, a->k, a->kr, a->v, a->pse, a->drop, a->pad, a->mask, a->sink, a->prefix, a->aq, a->akv, a->qs,
            a->kvs, a->scale, a->keep, a->pre, a->next, a->head_num, a->layout, a->inner, a->mode, a->pse_type, a->sml,
            a->smax, a->ssum, a->sout, a->out, a->ws, a->ex);
    }
}

aclnnStatus fa_call_run(fa_fn fn, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream)
{
    switch (fn) {
    case FA_V1: return aclnnFlashAttentionScore(ws, bytes, ex, stream);
    case FA_V2: return aclnnFlashAttentionScoreV2(ws, bytes, ex, stream);
    case FA_V3: return aclnnFlashAttentionScoreV3(ws, bytes, ex, stream);
    case FA_VARLEN: return aclnnFlashAttentionVarLenScore(ws, bytes, ex, stream);
    default: return aclnnFlashAttentionVarLenScoreV5(ws, bytes, ex, stream);
    }
}

const char *fa_fn_name(fa_fn fn)
{
    static const char *const names[] = {
        "aclnnFlashAttentionScoreGetWorkspaceSize", "aclnnFlashAttentionScoreV2GetWorkspaceSize",
        "aclnnFlashAttentionScoreV3GetWorkspaceSize", "aclnnFlashAttentionVarLenScoreGetWorkspaceSize",
        "aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize"};
    return names[fn];
}

void fa_expect(const fa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    aclGetRecentErrMsg(); /* start from an empty queue */
    uint64_t ws = 12345;
    aclOpExecutor *ex = (aclOpExecutor *)&ws; /* garbage the call must clear */
    fa_args b = *a;
    if (b.ws)
        b.ws = &ws;
    if (b.ex)
        b.ex = &ex;
    const aclnnStatus st = fa_call(&b);
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
    TC_CHECK(strstr(msg, fa_fn_name(a->fn)) == msg, "message must start with the function name: %s", msg);
    if (needle1)
        TC_CHECK(strstr(msg, needle1) != NULL, "message must contain \"%s\": %s", needle1, msg);
    if (needle2)
        TC_CHECK(strstr(msg, needle2) != NULL, "message must contain \"%s\": %s", needle2, msg);
}
