/* Plan lifetime and routing to the plan's backend (through fc_backend_ops only). */
#include "plan.h"

#include <stdlib.h>

#include "backend.h"
#include "error.h"

fc_status fc_plan_from_problem(const fc_problem *prob, const fc_batch_rule *rule, fc_op op, const fc_options *options,
                               fc_plan **out)
{
    fc_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        free(prob->batch);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_from_problem: out of host memory");
    }
    plan->op = op;
    plan->prob = *prob;
    if (rule) {
        plan->rule = *rule;
        plan->lengths_bindable = true;
    }
    plan->stream = options ? options->stream : NULL;
    plan->prob.out_tolerance = options ? options->out_tolerance : FC_F32;
    fc_status st = fc_backend_select(options, &plan->prob, op, &plan->backend);
    if (st == FC_OK)
        st = plan->backend->plan(plan, options);
    if (st != FC_OK) {
        fc_plan_free(plan);
        return st;
    }
    plan->workspace = plan->backend->workspace_size(plan);
    *out = plan;
    return FC_OK;
}

static const fc_bindings fc_no_bindings;

fc_status fc_plan_check_kv_lens(const fc_plan *plan, const fc_bindings *bind)
{
    if (!bind || !bind->kv_lens)
        return FC_OK;
    if (!plan->run_kv_lens)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: io.kv_lens: this plan cannot take a run's kv lengths (forward "
                                           "plans over padded batches without bias or dropout can)");
    if (bind->lengths.sq || bind->lengths.skv || bind->lengths.kv_lo)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: a run brings kv lengths twice");
    return FC_OK;
}

/* A run's kv lengths from host memory: each within [col_lo, the planned skv] of its batch, the
 * planned facts moved to it (fc_batch_relength) in a new array that fc_plan_unbind frees. */
static fc_status fc_plan_bind_kv_lens(const fc_plan *plan, const fc_bindings *bind, fc_problem *run)
{
    fc_status st = fc_plan_check_kv_lens(plan, bind);
    if (st != FC_OK)
        return st;
    const fc_batch *planned = plan->prob.batch;
    for (int64_t b = 0; b < run->B; b++)
        if (bind->kv_lens[b] < planned[b].col_lo || bind->kv_lens[b] > planned[b].skv)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: io.kv_lens[%lld] is %lld, outside [%lld, %lld] (the batch's "
                                               "kv start and its planned length, which bounds every run's)",
                           (long long)b, (long long)bind->kv_lens[b], (long long)planned[b].col_lo, (long long)planned[b].skv);
    run->batch = malloc((size_t)(run->B > 0 ? run->B : 1) * sizeof *run->batch);
    if (!run->batch)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_bind: out of host memory for %lld batch records", (long long)run->B);
    run->max_skv = 0;
    for (int64_t b = 0; b < run->B; b++) {
        run->batch[b] = planned[b];
        fc_batch_relength(&run->batch[b], bind->kv_lens[b]);
        run->max_skv = run->batch[b].skv > run->max_skv ? run->batch[b].skv : run->max_skv;
    }
    return FC_OK;
}

fc_status fc_plan_bind(const fc_plan *plan, const fc_bindings *bind, fc_problem *run)
{
    *run = plan->prob;
    if (!bind)
        return FC_OK;
#define FC_REBIND(field, target)                                                                                       \
    if (bind->field)                                                                                                   \
        target = bind->field;
    FC_REBIND(q, run->q.data)
    FC_REBIND(k, run->k.data)
    FC_REBIND(v, run->v.data)
    FC_REBIND(q_rope, run->q_rope.data)
    FC_REBIND(k_rope, run->k_rope.data)
    FC_REBIND(out, run->out.data)
    FC_REBIND(pse, run->pse.data)
    FC_REBIND(mask, run->mask.data)
    FC_REBIND(slopes, run->alibi.slopes)
    FC_REBIND(sink, run->sink)
    FC_REBIND(drop_bits, run->drop_bits)
    FC_REBIND(stats_max, run->stats.max)
    FC_REBIND(stats_sum, run->stats.sum)
    FC_REBIND(dout, run->dout.data)
    FC_REBIND(dq, run->dq.data)
    FC_REBIND(dk, run->dk.data)
    FC_REBIND(dv, run->dv.data)
    FC_REBIND(dq_rope, run->dq_rope.data)
    FC_REBIND(dk_rope, run->dk_rope.data)
#undef FC_REBIND
    if (run->dsink && bind->dsink)
        run->dsink = bind->dsink;
    if (bind->block_table) {
        run->k.pages.table = run->v.pages.table = bind->block_table;
        if (run->Dr)
            run->k_rope.pages.table = bind->block_table;
    }
    if (bind->kv_lens)
        return fc_plan_bind_kv_lens(plan, bind, run);
    const fc_lengths *len = &bind->lengths;
    if (!len->sq && !len->skv && !len->kv_lo)
        return FC_OK;
    if (!plan->lengths_bindable)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: this plan's per-batch facts were fixed at planning; a run "
                                           "cannot bring its own lengths");
    run->batch = malloc((size_t)(run->B > 0 ? run->B : 1) * sizeof *run->batch);
    if (!run->batch)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_bind: out of host memory for %lld batch records", (long long)run->B);
    fc_batch_totals totals;
    fc_batch_facts_into(&plan->rule, len, run, &totals);
    return FC_OK;
}

void fc_plan_unbind(const fc_plan *plan, fc_problem *run)
{
    if (run->batch != plan->prob.batch)
        free(run->batch);
    run->batch = plan->prob.batch;
}

fc_status fc_plan_check_data(const fc_plan *plan, const fc_bindings *bind)
{
    return plan->backend->check_data(plan, bind ? bind : &fc_no_bindings);
}

fc_status fc_plan_execute(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes)
{
    return fc_plan_execute_on(plan, bind, workspace, bytes, plan->stream);
}

fc_status fc_plan_execute_on(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes, void *stream)
{
    if (bytes < plan->workspace)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_execute: workspace_bytes is %zu, the plan needs %zu", bytes,
                       plan->workspace);
    if (plan->workspace > 0 && workspace == NULL)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_execute: workspace is NULL, the plan needs %zu bytes", plan->workspace);
    if (!bind)
        bind = &fc_no_bindings;
    const fc_status st = fc_plan_check_data(plan, bind);
    if (st != FC_OK)
        return st;
    return plan->backend->execute(plan, bind, workspace, stream);
}

void *fc_plan_workspace_take(const fc_plan *plan)
{
    if (plan->workspace == 0)
        return NULL;
    return plan->backend->workspace_alloc ? plan->backend->workspace_alloc(plan->workspace) : malloc(plan->workspace);
}

void fc_plan_workspace_release(const fc_plan *plan, void *workspace)
{
    if (!workspace)
        return;
    if (plan->backend->workspace_free)
        plan->backend->workspace_free(workspace);
    else
        free(workspace);
}

void fc_plan_free(fc_plan *plan)
{
    if (!plan)
        return;
    if (plan->backend && plan->state)
        plan->backend->destroy(plan->state);
    free(plan->prob.batch);
    free(plan);
}

double fc_plan_flop_count(const fc_plan *plan)
{
    const fc_problem *p = &plan->prob;
    const double flops = plan->backend->visible(p) * (double)(2 * (p->Dqk + p->Dr) + 2 * p->Dv);
    return plan->op == FC_OP_BACKWARD ? 2.5 * flops : flops;
}
