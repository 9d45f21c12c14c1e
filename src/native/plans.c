/* The native API: descriptions, plans (forward and backward), runs and one-call forms. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/backend.h"
#include "../core/dtype.h"
#include "../core/error.h"
#include "../core/lower.h"
#include "../core/plan.h"
#include "native.h"

/* The one-call forms: allocate the plan's workspace where its backend runs (device memory for a
 * GPU plan), run, wait for it and return what the device found (a bad block-table entry), free
 * everything. */
static fc_status run_once(fc_plan *plan, const char *fn)
{
    const size_t bytes = plan->workspace;
    void *ws = fc_plan_workspace_take(plan);
    fc_status st = FC_ERR_NO_MEMORY;
    if (bytes && !ws)
        fc_fail(st, "%s: cannot allocate a %zu-byte workspace", fn, bytes);
    else
        st = fc_plan_run(plan, NULL, ws, bytes);
    if (st == FC_OK)
        st = fc_fail_in(fn, fc_plan_check_runs_on(plan, plan->stream, true));
    fc_plan_workspace_release(plan, ws);
    fc_plan_destroy(plan);
    return st;
}

fc_attention_desc fc_attention_desc_init(void)
{
    fc_attention_desc d;
    memset(&d, 0, sizeof d);
    d.dropout.keep_prob = 1.0;
    d.stats.replicas = 1;
    return d;
}

fc_window fc_window_causal(fc_align align) { return fc_window_band(FC_UNBOUNDED, 0, align); }

fc_window fc_window_band(int64_t left, int64_t right, fc_align align)
{
    fc_window w = {.enabled = true, .left = left, .right = right, .align = align};
    return w;
}

fc_status fc_plan_create(const fc_attention_desc *desc, const fc_options *options, fc_plan **plan)
{
    const char *fn = "fc_plan_create";
    fc_clear_error();
    fc_status st;
    if ((st = fc_native_check_desc(fn, desc, options, plan)))
        return st;
    int64_t q_rows, kv_rows;
    fc_native_seq_rows(desc, &q_rows, &kv_rows);
    const int64_t dv = desc->v_head_dim ? desc->v_head_dim : desc->head_dim;
    if ((st = fc_native_check_out_layout(fn, "desc.out", &desc->out, desc, desc->q_heads, q_rows, dv)) ||
        (st = fc_native_check_extents(fn, desc, q_rows, kv_rows)))
        return st;
    fc_problem p;
    if ((st = fc_native_lower(fn, desc, &p)))
        return st;
    /* runs may bring kv lengths where the facts that follow one are skv and the window alone
     * (fc_batch_relength) */
    const bool run_kv_lens = !desc->packed && !desc->bias.data && !fc_has_dropout(&p);
    return fc_fail_in(fn, fc_plan_from_problem(&p, NULL, run_kv_lens, FC_OP_FORWARD, options, plan));
}

fc_status fc_plan_create_backward(const fc_attention_desc *desc, const fc_attention_grads *grads,
                                  const fc_options *options, fc_plan **plan)
{
    const char *fn = "fc_plan_create_backward";
    fc_clear_error();
    fc_status st;
    if ((st = fc_native_check_desc(fn, desc, options, plan)))
        return st;
    if (!grads)
        return fc_fail(FC_ERR_NULL_ARG, "%s: grads is NULL", fn);
    if (!desc->stats.max)
        return fc_fail(FC_ERR_NULL_ARG, "%s: desc.stats.max and sum are NULL; the backward needs the forward's statistics", fn);
    if ((st = fc_native_check_tensor(fn, &grads->d_out, "grads.d_out", desc->packed)) || (st = fc_native_check_tensor(fn, &grads->dq, "grads.dq", desc->packed)) ||
        (st = fc_native_check_tensor(fn, &grads->dk, "grads.dk", desc->packed)) || (st = fc_native_check_tensor(fn, &grads->dv, "grads.dv", desc->packed)))
        return st;
    if (desc->rope_dim > 0 && ((st = fc_native_check_tensor(fn, &grads->dq_rope, "grads.dq_rope", desc->packed)) ||
                               (st = fc_native_check_tensor(fn, &grads->dk_rope, "grads.dk_rope", desc->packed))))
        return st;
    if (desc->sink && !grads->dsink)
        return fc_fail(FC_ERR_NULL_ARG, "%s: grads.dsink is NULL but desc.sink is set", fn);
    int64_t q_rows, kv_rows;
    fc_native_seq_rows(desc, &q_rows, &kv_rows);
    const int64_t D = desc->head_dim, Dv = desc->v_head_dim ? desc->v_head_dim : D, Dr = desc->rope_dim;
    if ((st = fc_native_check_out_layout(fn, "grads.dq", &grads->dq, desc, desc->q_heads, q_rows, D)) ||
        (st = fc_native_check_out_layout(fn, "grads.dk", &grads->dk, desc, desc->kv_heads, kv_rows, D)) ||
        (st = fc_native_check_out_layout(fn, "grads.dv", &grads->dv, desc, desc->kv_heads, kv_rows, Dv)))
        return st;
    if (Dr && ((st = fc_native_check_out_layout(fn, "grads.dq_rope", &grads->dq_rope, desc, desc->q_heads, q_rows, Dr)) ||
               (st = fc_native_check_out_layout(fn, "grads.dk_rope", &grads->dk_rope, desc, desc->kv_heads, kv_rows, Dr))))
        return st;
    if ((st = fc_native_check_extents(fn, desc, q_rows, kv_rows)) ||
        (st = fc_native_check_extent(fn, "grads.d_out", &grads->d_out, desc, 0, desc->q_heads, q_rows, Dv)) ||
        (st = fc_native_check_extent(fn, "grads.dq", &grads->dq, desc, 0, desc->q_heads, q_rows, D)) ||
        (st = fc_native_check_extent(fn, "grads.dk", &grads->dk, desc, 0, desc->kv_heads, kv_rows, D)) ||
        (st = fc_native_check_extent(fn, "grads.dv", &grads->dv, desc, 0, desc->kv_heads, kv_rows, Dv)))
        return st;
    if (Dr && ((st = fc_native_check_extent(fn, "grads.dq_rope", &grads->dq_rope, desc, 0, desc->q_heads, q_rows, Dr)) ||
               (st = fc_native_check_extent(fn, "grads.dk_rope", &grads->dk_rope, desc, 0, desc->kv_heads, kv_rows, Dr))))
        return st;
    fc_problem p;
    if ((st = fc_native_lower(fn, desc, &p)))
        return st;
    p.dout = fc_native_view(&grads->d_out, desc->packed);
    p.dq = fc_native_view(&grads->dq, desc->packed);
    p.dk = fc_native_view(&grads->dk, desc->packed);
    p.dv = fc_native_view(&grads->dv, desc->packed);
    if (Dr) {
        p.dq_rope = fc_native_view(&grads->dq_rope, desc->packed);
        p.dk_rope = fc_native_view(&grads->dk_rope, desc->packed);
    }
    p.dsink = desc->sink ? grads->dsink : NULL;
    return fc_fail_in(fn, fc_plan_from_problem(&p, NULL, false, FC_OP_BACKWARD, options, plan));
}

fc_status fc_attention_backward(const fc_attention_desc *desc, const fc_attention_grads *grads)
{
    fc_plan *plan;
    const fc_status st = fc_plan_create_backward(desc, grads, NULL, &plan);
    return st == FC_OK ? run_once(plan, "fc_attention_backward") : st;
}

fc_status fc_plan_run(fc_plan *plan, const fc_attention_io *io, void *workspace, size_t workspace_bytes)
{
    fc_clear_error();
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_run: plan is NULL");
    fc_bindings run = {0};
    if (io)
        run = (fc_bindings){.q = (char *)io->q, .k = (char *)io->k, .v = (char *)io->v, .q_rope = (char *)io->q_rope,
                            .k_rope = (char *)io->k_rope, .out = io->out, .pse = io->bias, .mask = io->mask,
                            .slopes = io->slopes, .sink = io->sink, .drop_bits = io->keep_bits,
                            .stats_max = io->stats_max, .stats_sum = io->stats_sum, .dout = (char *)io->d_out,
                            .dq = io->dq, .dk = io->dk, .dv = io->dv, .dq_rope = io->dq_rope, .dk_rope = io->dk_rope,
                            .dsink = io->dsink, .kv_lens = io->kv_lens};
    return fc_fail_in("fc_plan_run", fc_plan_execute(plan, &run, workspace, workspace_bytes));
}

void fc_plan_destroy(fc_plan *plan) { fc_plan_free(plan); }

fc_status fc_plan_check_runs(fc_plan *plan, bool wait)
{
    fc_clear_error();
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_check_runs: plan is NULL");
    return fc_fail_in("fc_plan_check_runs", fc_plan_check_runs_on(plan, plan->stream, wait));
}

fc_status fc_plan_workspace_size(const fc_plan *plan, size_t *bytes)
{
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_workspace_size: plan is NULL");
    if (!bytes)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_workspace_size: bytes is NULL");
    *bytes = plan->workspace;
    return FC_OK;
}

fc_status fc_plan_flops(const fc_plan *plan, double *flops)
{
    if (!plan || !flops)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_flops: %s is NULL", plan ? "flops" : "plan");
    *flops = fc_plan_flop_count(plan);
    return *flops < 0 ? fc_fail_in("fc_plan_flops", FC_ERR_BACKEND) : FC_OK;
}

fc_status fc_plan_describe(const fc_plan *plan, char *buf, size_t len)
{
    if (!plan || (!buf && len))
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_describe: %s is NULL", plan ? "buf" : "plan");
    fc_plan_description(plan, buf, len);
    return FC_OK;
}

/* The CPU backend's kernel path, through its registration. */
const char *fc_cpu_isa(void) { return fc_backend_get(FC_BACKEND_CPU)->variant(); }

bool fc_cpu_force_isa(const char *name) { return fc_backend_get(FC_BACKEND_CPU)->force_variant(name); }

fc_status fc_attention(const fc_attention_desc *desc)
{
    fc_plan *plan;
    const fc_status st = fc_plan_create(desc, NULL, &plan);
    return st == FC_OK ? run_once(plan, "fc_attention") : st;
}
