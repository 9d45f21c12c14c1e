/*
 * The forward family's first phase: required pointers, the validation rules, then lowering into
 * the canonical fc_problem and a CPU plan held by the executor.  The second phase only runs it.
 */
#include "fa_forward.h"

#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "core/error.h"
#include "core/plan.h"
#include "cann/common/errmsg.h"
#include "cann/common/executor.h"
#include "fa_forward_state.h"
#include "fa_stats.h"

/* Lengths, rows, token offsets, mask bases, dropout bits and statistics rows (core/batch.h):
 * BSND batches are S1 × S2, TND ones pack by token. */
fc_batch_rule fa_batch_rule(const fa_geom *g, const fa_mask_plan *mp)
{
    const bool tnd = g->cum_q != NULL, element = mp->kind == FA_MASK_ELEMENT;
    const fc_batch_rule rule = {.B = g->B, .q = {.packed = tnd, .len = g->S1}, .kv = {.packed = tnd, .len = g->S2},
                                .mask_sb = element ? mp->sb : 0, .mask_by_tokens = element && mp->diagonal,
                                .mask_si = mp->view.si, .mask_sj = mp->view.sj, .drop_heads = g->N1};
    return rule;
}

static aclnnStatus lower_batches(const fa_fwd *f, fc_problem *p)
{
    const fa_geom *g = &f->g;
    const bool tnd = g->cum_q != NULL;
    const fc_batch_rule rule = fa_batch_rule(g, &f->mask);
    int64_t *len = tnd ? malloc(2 * (size_t)g->B * sizeof *len) : NULL;
    if (tnd && !len)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batch lengths", f->fn, (long long)g->B);
    for (int64_t b = 0; tnd && b < g->B; b++) {
        len[b] = fa_len_q(g, b);
        len[g->B + b] = fa_len_kv(g, b);
    }
    const fc_lengths lengths = {.sq = len, .skv = len ? len + g->B : NULL};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &lengths, p, &tot);
    free(len);
    return ACLNN_SUCCESS;
}

aclnnStatus fa_lower(const fa_fwd *f, fc_problem *p)
{
    const fa_geom *g = &f->g;
    const fa_call *c = f->c;
    memset(p, 0, sizeof *p);
    p->B = g->B;
    p->Nq = g->N1;
    p->Nkv = g->N2;
    p->G = g->N1 / g->N2;
    p->Dqk = g->D;
    p->Dv = g->Dv;
    p->Dr = g->Dr;
    p->batch = calloc((size_t)g->B, sizeof *p->batch);
    if (!p->batch)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batch records", f->fn, (long long)g->B);
    const aclnnStatus st = lower_batches(f, p);
    if (st != ACLNN_SUCCESS) {
        free(p->batch);
        p->batch = NULL;
        return st;
    }
    fa_lower_visibility(g, &f->mask, c->sparse_mode, c->pre, c->next, &f->prefix, p->batch);
    fa_pse_plan pse = f->pse;
    fa_pse_starts(&pse, &f->q_start, &f->kv_start);
    fa_pse_lower(g, &pse, c->sparse_mode, p->batch);

    p->q = fa_seq_view(g, &f->t[FA_QUERY], g->D);
    p->k = fa_seq_view(g, &f->t[FA_KEY], g->D);
    p->v = fa_seq_view(g, &f->t[FA_VALUE], g->Dv);
    p->out = fa_seq_view(g, &f->t[FA_OUT], g->Dv);
    if (g->Dr) {
        p->q_rope = fa_seq_view(g, &f->t[FA_QUERY_ROPE], g->Dr);
        p->k_rope = fa_seq_view(g, &f->t[FA_KEY_ROPE], g->Dr);
    }
    p->scale = (float)c->scale;
    if (pse.kind == FA_PSE_EXTERNAL)
        p->pse = pse.view;
    if (pse.kind == FA_PSE_ALIBI)
        p->alibi = pse.alibi;
    p->sink = f->t[FA_SINK].present ? (const float *)f->t[FA_SINK].data : NULL;
    p->sink_stride = f->t[FA_SINK].present ? f->t[FA_SINK].strides[0] : 0;
    if (f->mask.kind == FA_MASK_ELEMENT)
        p->mask = f->mask.view;
    p->keep_prob = 1.0f;
    if (f->dropout) {
        p->drop_bits = (const uint8_t *)f->t[FA_DROP_MASK].data;
        p->keep_prob = (float)c->keep_prob;
    }
    p->stats = fa_lower_stats(g, f->token_major, (float *)f->t[FA_SMAX].data, (float *)f->t[FA_SSUM].data);
    return ACLNN_SUCCESS;
}

/* ---- the executor's payload: a plan (CPU or GPU) ---------------------------------------------- */

static aclnnStatus fa_run(void *payload, void *workspace, uint64_t bytes, void *stream, const char *fn)
{
    const fc_plan *plan = payload;
    const fc_status fs = fc_plan_execute_on(plan, NULL, workspace, (size_t)bytes, stream);
    if (fs != FC_OK)
        return cann_fail(cann_plan_status(fs), "%s: %s", fn, fc_error_message());
    return ACLNN_SUCCESS;
}

static void fa_release(void *payload) { fc_plan_free(payload); }

static const cann_exec_ops fa_exec_ops = {.run = fa_run, .release = fa_release};

static const fa_param fa_operands[] = {FA_QUERY, FA_QUERY_ROPE, FA_KEY, FA_KEY_ROPE, FA_VALUE, FA_REAL_SHIFT,
                                       FA_DROP_MASK, FA_ATTEN_MASK, FA_SINK, FA_SMAX, FA_SSUM, FA_OUT};

static aclnnStatus fa_make_executor(const fa_fwd *f, fc_problem *p, fc_op op, const fa_param *operands, int n_operands,
                                    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    fc_plan *plan;
    const fc_status fs = fc_plan_from_problem(p, NULL, false, op, NULL, &plan); /* owns p->batch from here */
    if (fs != FC_OK)
        return cann_fail(cann_plan_status(fs), "%s: %s", f->fn, fc_error_message());
    aclOpExecutor *ex = cann_executor_new(f->fn, f->c->sig->run_fn, &fa_exec_ops, plan, plan->workspace);
    if (!ex)
        return ACLNN_ERR_INNER;
    for (int k = 0; k < n_operands; k++) {
        const aclnnStatus st = cann_executor_add(ex, &f->t[operands[k]]);
        if (st != ACLNN_SUCCESS) {
            cann_executor_free(ex);
            return st;
        }
    }
    return cann_executor_publish(ex, f->fn, workspaceSize, executor);
}

aclnnStatus fa_prepare(const fa_call *call, const fa_direction *dir, uint64_t *workspaceSize,
                       aclOpExecutor **executor)
{
    aclnnStatus st;
    fa_fwd *f = cann_prepare_state(&fa_fields, call->sig, call, sizeof *f, &st);
    if (!f)
        return st;
    f->c = call;
    f->fn = call->sig->fn;
    st = dir->validate(f);
    fc_problem p;
    if (st == ACLNN_SUCCESS)
        st = fa_lower(f, &p);
    if (st == ACLNN_SUCCESS) {
        if (dir->lower_more)
            dir->lower_more(f, &p);
        st = fa_make_executor(f, &p, dir->op, dir->operands, dir->n_operands, workspaceSize, executor);
    }
    fa_geom_free(&f->g);
    free(f);
    return st;
}

aclnnStatus fa_forward_prepare(const fa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const fa_direction forward = {fa_forward_validate, NULL, FC_OP_FORWARD, fa_operands,
                                         (int)(sizeof fa_operands / sizeof fa_operands[0])};
    return fa_prepare(call, &forward, workspaceSize, executor);
}
