/* Plan lifetime and routing to the plan's backend (through fc_backend_ops only). */
#include "plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "error.h"

/* A run's own fc_batch records lie at the end of a host workspace, 64-byte aligned. */
static size_t fc_facts_bytes(const fc_plan *plan)
{
    return (plan->lengths_bindable || plan->run_kv_lens) && plan->backend->host_memory
               ? 64 + (size_t)(plan->prob.B > 0 ? plan->prob.B : 1) * sizeof(fc_batch) : 0;
}

static fc_batch *fc_facts_in(const fc_plan *plan, void *workspace)
{
    return (fc_batch *)(((uintptr_t)workspace + plan->facts_at + 63) & ~(uintptr_t)63);
}

fc_status fc_plan_from_problem(fc_problem *prob, const fc_batch_rule *rule, bool run_kv_lens, fc_op op,
                               const fc_options *options, fc_plan **out)
{
    fc_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        free(prob->batch);
        prob->batch = NULL;
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_from_problem: out of host memory");
    }
    plan->op = op;
    plan->prob = *prob;
    prob->batch = NULL; /* the plan's now */
    if (rule) {
        plan->rule = *rule;
        plan->lengths_bindable = true;
    }
    plan->run_kv_lens = run_kv_lens;
    plan->stream = options ? options->stream : NULL;
    plan->prob.out_tolerance = options ? options->out_tolerance : FC_F32;
    fc_status st = fc_backend_select(options, &plan->prob, op, &plan->backend);
    if (st == FC_OK)
        st = plan->backend->plan(plan, options);
    if (st != FC_OK) {
        fc_plan_free(plan);
        return st;
    }
    plan->facts_at = plan->backend->workspace_size(plan);
    plan->workspace = plan->facts_at + fc_facts_bytes(plan);
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
 * planned facts moved to it (fc_batch_relength) into `facts`. */
static fc_status fc_plan_bind_kv_lens(const fc_plan *plan, const fc_bindings *bind, fc_batch *facts, fc_problem *run)
{
    const fc_batch *planned = plan->prob.batch;
    for (int64_t b = 0; b < run->B; b++)
        if (bind->kv_lens[b] < planned[b].col_lo || bind->kv_lens[b] > planned[b].skv)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: io.kv_lens[%lld] is %lld, outside [%lld, %lld] (the batch's "
                                               "kv start and its planned length, which bounds every run's)",
                           (long long)b, (long long)bind->kv_lens[b], (long long)planned[b].col_lo, (long long)planned[b].skv);
    run->batch = facts;
    run->max_skv = 0;
    for (int64_t b = 0; b < run->B; b++) {
        run->batch[b] = planned[b];
        fc_batch_relength(&run->batch[b], bind->kv_lens[b]);
        run->max_skv = run->batch[b].skv > run->max_skv ? run->batch[b].skv : run->max_skv;
    }
    return FC_OK;
}

fc_status fc_plan_bind(const fc_plan *plan, const fc_bindings *bind, void *workspace, fc_problem *run)
{
    *run = plan->prob;
    if (!bind)
        return FC_OK;
    /* the score terms a plan was made with decide its kernels: a run may not add one */
    const fc_problem *p = &plan->prob;
    const char *added = bind->pse && !p->pse.data             ? "a bias (pse)"
                        : bind->mask && !p->mask.data         ? "a mask"
                        : bind->slopes && !p->alibi.slopes    ? "ALiBi slopes"
                        : bind->sink && !p->sink              ? "a sink"
                        : bind->drop_bits && !p->drop_bits    ? "dropout keep bits"
                                                              : NULL;
    if (added)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: the run brings %s, which its plan was made without", added);
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
    fc_status st = fc_plan_check_kv_lens(plan, bind);
    if (st != FC_OK)
        return st;
    const bool kv_lens = bind->kv_lens && plan->backend->host_memory; /* a device backend reads them itself */
    const fc_lengths *len = &bind->lengths;
    if (!kv_lens && !len->sq && !len->skv && !len->kv_lo)
        return FC_OK;
    if (!kv_lens && !plan->lengths_bindable)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_bind: this plan's per-batch facts were fixed at planning; a run "
                                           "cannot bring its own lengths");
    if (!plan->backend->host_memory)
        return FC_OK; /* the backend derives the run's facts from bind->lengths where its memory is */
    fc_batch *facts = fc_facts_in(plan, workspace);
    if (kv_lens)
        return fc_plan_bind_kv_lens(plan, bind, facts, run); /* (host memory: the facts are in the workspace) */
    run->batch = facts;
    fc_batch_totals totals;
    fc_batch_facts_into(&plan->rule, len, run, &totals);
    return FC_OK;
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
    fc_problem run;
    fc_status st = fc_plan_bind(plan, bind, workspace, &run);
    if (st == FC_OK)
        st = plan->backend->check_data(plan, &run, bind);
    if (st == FC_OK)
        st = plan->backend->execute(plan, &run, bind, workspace, stream);
    return st;
}

fc_status fc_plan_check_runs_on(const fc_plan *plan, void *stream, bool wait)
{
    return plan->backend->check_runs ? plan->backend->check_runs(plan, stream, wait) : FC_OK;
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

int fc_plan_description(const fc_plan *plan, char *buf, size_t len)
{
    const int head = snprintf(buf, len, "backend=%s op=%s ", plan->backend->name,
                              plan->op == FC_OP_FORWARD ? "forward" : "backward");
    const size_t used = (size_t)head < len ? (size_t)head : len;
    char none[1];
    const int rest = plan->backend->describe ? plan->backend->describe(plan, len ? buf + used : none, len ? len - used : 0)
                                             : snprintf(len ? buf + used : none, len ? len - used : 0, "(no description)");
    return head + rest;
}

double fc_plan_flop_count(const fc_plan *plan)
{
    const fc_problem *p = &plan->prob;
    const double visible = plan->backend->visible(p);
    if (visible < 0)
        return -1.0; /* the backend could not read the data (its message says why) */
    const double flops = visible * (double)(2 * (p->Dqk + p->Dr) + 2 * p->Dv);
    return plan->op == FC_OP_BACKWARD ? 2.5 * flops : flops;
}
