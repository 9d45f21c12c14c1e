/* What the forward's validation rules learn about a call, for its lowering (private). */
#ifndef FC_CANN_FA_FORWARD_STATE_H
#define FC_CANN_FA_FORWARD_STATE_H

#include <stdbool.h>

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

/* Runs every validation rule of the forward family in the order of semantics §0.5. */
aclnnStatus fa_forward_validate(fa_fwd *f);

#endif /* FC_CANN_FA_FORWARD_STATE_H */
