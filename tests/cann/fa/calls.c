#include "calls.h"
#include "common/phase1_check.h"

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

CANN_PHASE1_CALL(fa_call_with, fa_args, fa_call)

void fa_expect(const fa_args *a, aclnnStatus code, const char *needle1, const char *needle2)
{
    cann_expect_phase1(fa_fn_name(a->fn), fa_call_with, a, a->ws != NULL, a->ex != NULL, code, needle1, needle2);
}
