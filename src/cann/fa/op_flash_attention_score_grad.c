/*
 * The four FlashAttentionScoreGrad entry pairs (semantics §3.1), each defined from its parameter
 * list (cann/common/entry.h): the first phase fills a fa_call for fa_grad_prepare, the second is the shared
 * executor run.  Functions without a parameter behave as if it were absent (V1: pseType 1 and no
 * start indices; V1, V2: no sink; V1–V3: no rope, softmaxInLayout "").
 */
#include "aclnnop/aclnn_flash_attention_score_grad.h"

#include "cann/common/entry.h"
#include "fa_grad.h"

CANN_ENTRY_ALIASES(FA_PARAMS)

/* softmaxMax/Sum and attentionIn are required by flashc (§3.2); softmaxInLayout NULL means "". */
#define REQUIRED                                                                                                       \
    (CANN_BIT(FA_QUERY) | CANN_BIT(FA_KEY) | CANN_BIT(FA_VALUE) | CANN_BIT(FA_DY) | CANN_BIT(FA_SMAX) |                \
     CANN_BIT(FA_SSUM) | CANN_BIT(FA_OUT) | CANN_BIT(FA_LAYOUT) | CANN_BIT(FA_DQ) | CANN_BIT(FA_DK) |                  \
     CANN_BIT(FA_DV) | CANN_BIT(FA_WORKSPACE_SIZE) | CANN_BIT(FA_EXECUTOR))

/* Pieces several lists share: the inputs after dy up to attentionInOptional; the attributes from
 * scaleValue to sparseMode; the sequence starts (V2 on); the gradients every function writes. */
#define INPUTS(P)                                                                                                      \
    P(real_shift, pseShiftOptional) P(drop_mask, dropMaskOptional) P(padding_mask, paddingMaskOptional)                \
        P(atten_mask, attenMaskOptional) P(smax, softmaxMaxOptional) P(ssum, softmaxSumOptional)                       \
            P(sout, softmaxInOptional) P(out, attentionInOptional)
#define ATTRS(P)                                                                                                       \
    P(scale, scaleValue) P(keep_prob, keepProb) P(pre, preTokens) P(next, nextTokens) P(head_num, headNum)             \
        P(layout, inputLayout) P(inner_precise, innerPrecise) P(sparse_mode, sparseMode)
#define STARTS(P) P(q_start, qStartIdxOptional) P(kv_start, kvStartIdxOptional)
#define GRADS(P) P(dq, dqOut) P(dk, dkOut) P(dv, dvOut) P(dpse, dpseOut)

#define GRAD(P)                                                                                                      \
    P(query, query) P(key, keyIn) P(value, value) P(dy, dy) INPUTS(P) P(prefix, prefixOptional) ATTRS(P) GRADS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionScoreGrad, sig_grad, GRAD, REQUIRED, fa_call, .pse_type = 1, fa_grad_prepare)

#define GRAD_V2(P)                                                                                                     \
    P(query, query) P(key, keyIn) P(value, value) P(dy, dy) INPUTS(P) P(prefix, prefixOptional) STARTS(P) ATTRS(P)     \
        P(pse_type, pseType) GRADS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionScoreGradV2, sig_grad_v2, GRAD_V2, REQUIRED, fa_call, .pse_type = 1, fa_grad_prepare)

#define GRAD_V3(P)                                                                                                     \
    P(query, query) P(key, keyIn) P(value, value) P(dy, dy) INPUTS(P) P(sink, sinkInOptional)                          \
        P(prefix, prefixOptional) STARTS(P) ATTRS(P) P(pse_type, pseType) GRADS(P) P(dsink, dsinkOut)
CANN_ENTRY_PAIR(aclnnFlashAttentionScoreGradV3, sig_grad_v3, GRAD_V3, REQUIRED, fa_call, .pse_type = 1, fa_grad_prepare)

#define UNPADDING_V5(P)                                                                                                \
    P(query, query) P(query_rope, queryRope) P(key, keyIn) P(key_rope, keyInRope) P(value, value) P(dy, dy)            \
        INPUTS(P) P(sink, sinkInOptional) P(prefix, prefixOptional) P(act_q, actualSeqQLenOptional)                    \
            P(act_kv, actualSeqKvLenOptional) STARTS(P) ATTRS(P) P(pse_type, pseType)                                  \
                P(softmax_layout, softmaxInLayout) P(dq, dqOut) P(dq_rope, dqRopeOut) P(dk, dkOut)                     \
                    P(dk_rope, dkRopeOut) P(dv, dvOut) P(dpse, dpseOut) P(dsink, dsinkOut)
CANN_ENTRY_PAIR(aclnnFlashAttentionUnpaddingScoreGradV5, sig_unpadding_v5, UNPADDING_V5,
                REQUIRED, fa_call, .pse_type = 1, fa_grad_prepare)
