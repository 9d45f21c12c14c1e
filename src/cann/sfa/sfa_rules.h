/*
 * The checks both SparseFlashAttention functions share, as rules (signature.h): inputs, lengths,
 * rope, attributes and the sizes they imply.  Each takes the sfa_state as its context.  The
 * function-specific rules and the two rule tables are in sfa_rules.c.
 */
#ifndef FC_CANN_SFA_RULES_H
#define FC_CANN_SFA_RULES_H

#include "sfa_state.h"

/* Everything the sizes depend on (ids a function does not declare are ignored). */
#define SFA_SIZES                                                                                                      \
    (SFA_BIT(QUERY) | SFA_BIT(KEY) | SFA_BIT(VALUE) | SFA_BIT(LAYOUT_Q) | SFA_BIT(LAYOUT_KV) | SFA_BIT(LAYOUT))

/* Captures tensor id (not empty); with like_query its dtype must equal the query's. */
aclnnStatus sfa_capture(sfa_state *s, sfa_param id, bool like_query);

aclnnStatus sfa_r_query(void *ctx);
aclnnStatus sfa_r_key(void *ctx);
aclnnStatus sfa_r_value(void *ctx);
aclnnStatus sfa_r_indices(void *ctx);
aclnnStatus sfa_r_act_q(void *ctx);
aclnnStatus sfa_r_act_kv(void *ctx);
aclnnStatus sfa_r_query_rope(void *ctx);
aclnnStatus sfa_r_key_rope(void *ctx);
aclnnStatus sfa_r_scale(void *ctx);
aclnnStatus sfa_r_block_size(void *ctx);
aclnnStatus sfa_r_layout_q(void *ctx);
aclnnStatus sfa_r_layout_kv(void *ctx);
aclnnStatus sfa_r_layout(void *ctx);        /* grad: one layout, NULL = "BSND" */
aclnnStatus sfa_r_block_table(void *ctx);   /* PA_BSND only; ignored otherwise */
aclnnStatus sfa_r_sizes(void *ctx);
aclnnStatus sfa_r_batch(void *ctx);
aclnnStatus sfa_r_indices_shape(void *ctx);
aclnnStatus sfa_r_rope_shape(void *ctx);
aclnnStatus sfa_r_sparse_mode(void *ctx);
aclnnStatus sfa_r_pre(void *ctx);
aclnnStatus sfa_r_next(void *ctx);

#endif /* FC_CANN_SFA_RULES_H */
