/*
 * The backward family's first phase: required pointers, the shared and backward rules, then the
 * forward's lowering of the call it describes plus the gradient views, planned as FC_OP_BACKWARD.
 * The second phase only runs the plan.
 */
#include "fa_grad.h"

#include <stdlib.h>

#include "cann/common/errmsg.h"
#include "fa_forward_state.h"

/* The output gradient and the gradients (§3.3); the forward output and statistics are already
 * the problem's out and stats (fa_lower reads attentionInOptional and softmaxMax/SumOptional). */
static void lower_gradients(const fa_fwd *f, fc_problem *p)
{
    const fa_geom *g = &f->g;
    p->dout = fa_seq_view(g, &f->t[FA_DY], g->Dv);
    p->dq = fa_seq_view(g, &f->t[FA_DQ], g->D);
    p->dk = fa_seq_view(g, &f->t[FA_DK], g->D);
    p->dv = fa_seq_view(g, &f->t[FA_DV], g->Dv);
    if (g->Dr) {
        p->dq_rope = fa_seq_view(g, &f->t[FA_DQ_ROPE], g->Dr);
        p->dk_rope = fa_seq_view(g, &f->t[FA_DK_ROPE], g->Dr);
    }
    p->dsink = f->t[FA_SINK].present ? (float *)f->t[FA_DSINK].data : NULL;
}

/* Operands whose allocations the second phase re-checks. */
static const fa_param fa_grad_operands[] = {FA_QUERY, FA_QUERY_ROPE, FA_KEY,  FA_KEY_ROPE, FA_VALUE,
                                            FA_DY,    FA_REAL_SHIFT, FA_DROP_MASK, FA_ATTEN_MASK, FA_SMAX,
                                            FA_SSUM,  FA_OUT,        FA_SINK, FA_DQ,       FA_DQ_ROPE,
                                            FA_DK,    FA_DK_ROPE,    FA_DV,   FA_DSINK};

aclnnStatus fa_grad_prepare(const fa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const fa_direction backward = {fa_grad_validate, lower_gradients, FC_OP_BACKWARD, fa_grad_operands,
                                          (int)(sizeof fa_grad_operands / sizeof fa_grad_operands[0])};
    return fa_prepare(call, &backward, workspaceSize, executor);
}
