#include "grad_calls.h"
#include "common/phase1_check.h"

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

CANN_PHASE1_CALL(fag_call_with, fag_args, fag_call)

void fag_expect(const fag_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    cann_expect_phase1(fag_fn_name(a->fn), fag_call_with, a, a->ws != NULL, a->ex != NULL, code, needle1, needle2);
}
