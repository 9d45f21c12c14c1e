/*
 * The five FlashAttentionScore forward entry pairs (semantics §2.1), each defined from its
 * parameter list (cann/common/entry.h): the first phase fills a fa_call for fa_forward_prepare, the second
 * is the shared executor run.  Functions without a parameter behave as if it were absent (pseType
 * 1, no start indices, no sink, no rope, softmaxOutLayout "").
 */
#include "aclnnop/aclnn_flash_attention_score.h"

#include "cann/common/entry.h"
#include "fa_forward.h"

CANN_ENTRY_ALIASES(FA_PARAMS)

/* The parameters a NULL of which is ACLNN_ERR_PARAM_NULLPTR. */
#define REQUIRED                                                                                                       \
    (CANN_BIT(FA_QUERY) | CANN_BIT(FA_KEY) | CANN_BIT(FA_VALUE) | CANN_BIT(FA_LAYOUT) | CANN_BIT(FA_SMAX) |            \
     CANN_BIT(FA_SSUM) | CANN_BIT(FA_OUT) | CANN_BIT(FA_WORKSPACE_SIZE) | CANN_BIT(FA_EXECUTOR))

/* Pieces several lists share: the dense inputs after the query, key and value; the attributes
 * from scaleValue to sparseMode; the outputs. */
#define INPUTS(P)                                                                                                      \
    P(real_shift, realShiftOptional)                                                                                   \
    P(drop_mask, dropMaskOptional) P(padding_mask, paddingMaskOptional) P(atten_mask, attenMaskOptional)
#define ATTRS(P)                                                                                                       \
    P(scale, scaleValue) P(keep_prob, keepProb) P(pre, preTokens) P(next, nextTokens) P(head_num, headNum)             \
        P(layout, inputLayout) P(inner_precise, innerPrecise) P(sparse_mode, sparseMode)
#define OUTPUTS(P)                                                                                                     \
    P(smax, softmaxMaxOut) P(ssum, softmaxSumOut) P(sout, softmaxOutOut) P(out, attentionOutOut)

#define SCORE(P)                                                                                                       \
    P(query, query) P(key, key) P(value, value) INPUTS(P) P(prefix, prefixOptional) ATTRS(P) OUTPUTS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionScore, sig_score, SCORE, REQUIRED, fa_call, .pse_type = 1, fa_forward_prepare)

#define SCORE_V2(P)                                                                                                    \
    P(query, query) P(key, key) P(value, value) INPUTS(P) P(prefix, prefixOptional) P(q_start, qStartIdxOptional)      \
        P(kv_start, kvStartIdxOptional) P(scale, scaleValueOptional) P(keep_prob, keepProbOptional)                    \
            P(pre, preTokensOptional) P(next, nextTokensOptional) P(head_num, headNum) P(layout, inputLayout)          \
                P(inner_precise, innerPreciseOptional) P(sparse_mode, sparseModeOptional)                              \
                    P(pse_type, pseTypeOptional) OUTPUTS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionScoreV2, sig_score_v2, SCORE_V2,
                REQUIRED, fa_call, .pse_type = 1, fa_forward_prepare)

#define SCORE_V3(P)                                                                                                    \
    P(query, query) P(key, key) P(value, value) INPUTS(P) P(sink, sinkOptional) P(prefix, prefixOptional)              \
        P(q_start, qStartIdxOptional) P(kv_start, kvStartIdxOptional) ATTRS(P) P(pse_type, pseType) OUTPUTS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionScoreV3, sig_score_v3, SCORE_V3,
                REQUIRED, fa_call, .pse_type = 1, fa_forward_prepare)

#define VARLEN(P)                                                                                                      \
    P(query, query) P(key, key) P(value, value) INPUTS(P) P(prefix, prefixOptional)                                    \
        P(act_q, actualSeqQLenOptional) P(act_kv, actualSeqKvLenOptional) ATTRS(P) OUTPUTS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionVarLenScore, sig_varlen, VARLEN,
                REQUIRED, fa_call, .pse_type = 1, fa_forward_prepare)

#define VARLEN_V5(P)                                                                                                   \
    P(query, query) P(query_rope, queryRope) P(key, key) P(key_rope, keyRope) P(value, value) INPUTS(P)                \
        P(sink, sinkOptional) P(prefix, prefixOptional) P(act_q, actualSeqQLenOptional)                                \
            P(act_kv, actualSeqKvLenOptional) P(q_start, qStartIdxOptional) P(kv_start, kvStartIdxOptional)            \
                ATTRS(P) P(pse_type, pseType) P(softmax_layout, softmaxOutLayout) OUTPUTS(P)
CANN_ENTRY_PAIR(aclnnFlashAttentionVarLenScoreV5, sig_varlen_v5, VARLEN_V5,
                REQUIRED, fa_call, .pse_type = 1, fa_forward_prepare)
