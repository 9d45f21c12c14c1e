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
#include "operand.h"

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

/* Lowers a validated call into the canonical problem (sizes, batches, visibility, pse, sink,
 * mask, dropout, statistics, q/k/v/out views); p->batch is allocated here. */
aclnnStatus fa_lower(const fa_fwd *f, fc_problem *p);

/* Plans p for op (taking p->batch), wraps the plan in an executor that re-checks the listed
 * operands in the second phase, and publishes it. */
aclnnStatus fa_make_executor(const fa_fwd *f, fc_problem *p, fc_op op, const fa_param *operands, int n_operands,
                             uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_FA_FORWARD_STATE_H */
