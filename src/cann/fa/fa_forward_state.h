/* What the validation rules learn about a call of the family (forward or backward), for its
 * lowering (private to the FlashAttention family). */
#ifndef FC_CANN_FA_FORWARD_STATE_H
#define FC_CANN_FA_FORWARD_STATE_H

#include <stdbool.h>

#include "core/plan.h"
#include "fa_forward.h"
#include "fa_layout.h"
#include "fa_mask.h"
#include "fa_pse.h"
#include "cann/common/operand.h"

typedef struct fa_fwd {
    const fa_call *c;
    const char *fn;
    cann_operand t[FA_NPARAMS]; /* tensor snapshots by id (absent: present = false) */
    cann_ints prefix, act_q, act_kv, q_start, kv_start;
    bool dropout;               /* keepProb < 1 */
    bool token_major;           /* softmaxOutLayout "same_as_input" */
    fa_geom g;
    fa_mask_plan mask;
    fa_pse_plan pse;
} fa_fwd;

/* The rules of the parameters the forward and the backward share (fa_forward_rules.c). */
extern const cann_rule fa_shared_rules[];
extern const int fa_shared_rule_count;

/* Runs the shared rules and a direction's own rules in the order of semantics §0.5. */
aclnnStatus fa_validate(fa_fwd *f, const cann_rule *own, int n_own);

/* Runs every validation rule of the forward family in the order of semantics §0.5. */
aclnnStatus fa_forward_validate(fa_fwd *f);

/* How the family's lengths become per-batch facts (core/batch.h): BSND batches of S1 × S2, TND
 * ones packed by token; the element mask's batch bases; dropout over N1 heads. */
fc_batch_rule fa_batch_rule(const fa_geom *g, const fa_mask_plan *mp);

/* Lowers a validated call into the canonical problem (sizes, batches, visibility, pse, sink,
 * mask, dropout, statistics, q/k/v/out views); p->batch is allocated here. */
aclnnStatus fa_lower(const fa_fwd *f, fc_problem *p);

/* What differs between the forward's and the backward's first phase. */
typedef struct fa_direction {
    aclnnStatus (*validate)(fa_fwd *f);
    void (*lower_more)(const fa_fwd *f, fc_problem *p); /* after fa_lower; NULL = nothing more */
    fc_op op;
    const fa_param *operands; /* whose allocations the second phase re-checks */
    int n_operands;
} fa_direction;

/* The first phase of either direction: required pointers, validation, lowering, then the plan
 * (taking p->batch) in an executor that re-checks the listed operands in the second phase. */
aclnnStatus fa_prepare(const fa_call *call, const fa_direction *dir, uint64_t *workspaceSize,
                       aclOpExecutor **executor);

#endif /* FC_CANN_FA_FORWARD_STATE_H */
