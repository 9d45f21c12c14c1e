/* Plan lifetime and routing to the backend. */
#include "plan.h"

#include <stdlib.h>

#include "../cpu/cpu.h"
#include "error.h"
#include "visibility.h"

fc_status fc_plan_from_problem(const fc_problem *prob, fc_op op, const fc_options *options, fc_plan **out)
{
    fc_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        free(prob->batch);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_create: out of host memory");
    }
    plan->op = op;
    plan->prob = *prob;
    plan->backend = FC_BACKEND_CPU;
    const fc_backend wanted = options ? options->backend : FC_BACKEND_DEFAULT;
    if (wanted == FC_BACKEND_CUDA) {
        fc_plan_destroy(plan);
        return fc_fail(FC_ERR_BACKEND, "fc_plan_create: options.backend: the CUDA backend is not built in");
    }
    const fc_status st = fc_cpu_plan_create(plan, options ? options->threads : 0);
    if (st != FC_OK) {
        fc_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

/* Device data that addresses memory (block tables) is checked before anything is written. */
static fc_status fc_check_pages(const fc_problem *p, const fc_view *v, const char *name)
{
    if (!v->pages.table)
        return FC_OK;
    for (int64_t b = 0; b < p->B; b++) {
        const int64_t used = fc_ceil_div(p->batch[b].skv, v->pages.block_size);
        for (int64_t k = 0; k < used; k++) {
            const int32_t blk = v->pages.table[b * v->pages.table_stride + k];
            if (blk < 0 || blk >= v->pages.blocks)
                return fc_fail(FC_ERR_INVALID_ARG, "fc_plan_run: %s block table entry [%lld][%lld] is %d, outside [0, %lld)",
                               name, (long long)b, (long long)k, blk, (long long)v->pages.blocks);
        }
    }
    return FC_OK;
}

fc_status fc_plan_check_data(const fc_problem *p)
{
    fc_status st;
    if ((st = fc_check_pages(p, &p->k, "key")) || (st = fc_check_pages(p, &p->v, "value")) ||
        (st = fc_check_pages(p, &p->k_rope, "key rope")))
        return st;
    return FC_OK;
}

fc_status fc_plan_execute(const fc_plan *plan, const fc_problem *prob, void *workspace, size_t bytes)
{
    if (bytes < plan->workspace)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_run: workspace_bytes is %zu, the plan needs %zu", bytes,
                       plan->workspace);
    if (plan->workspace > 0 && workspace == NULL)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_run: workspace is NULL, the plan needs %zu bytes", plan->workspace);
    const fc_status st = fc_plan_check_data(prob);
    if (st != FC_OK)
        return st;
    return fc_cpu_run(plan, prob, workspace);
}

void fc_plan_destroy(fc_plan *plan)
{
    if (!plan)
        return;
    fc_cpu_plan_destroy(plan->cpu);
    free(plan->prob.batch);
    free(plan);
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

/* Selected positions of a sparse problem, counted the way the kernels walk them. */
static double fc_sparse_visible(const fc_problem *p)
{
    double total = 0;
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        for (int64_t i = 0; i < bt->sq; i++)
            for (int64_t n2 = 0; n2 < p->Nkv; n2++) {
                const char *row = fc_sparse_row(&p->sparse, bt, b, i, n2);
                const int64_t thr = fc_sparse_threshold(&p->sparse, bt, i);
                int64_t a, z;
                int got;
                for (int64_t k = 0; thr > 0 && (got = fc_sparse_span(&p->sparse, row, k, thr, &a, &z)) >= 0; k++)
                    total += got ? (double)(z - a) * (double)p->G : 0.0;
            }
    }
    return total;
}

double fc_problem_visible(const fc_problem *p)
{
    if (p->sparse.data)
        return fc_sparse_visible(p);
    double total = 0;
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        int64_t per_head = 0, sp[4];
        for (int64_t i = 0; i < bt->sq; i++)
            per_head += fc_row_spans(bt, i, sp);
        total += (double)per_head * (double)p->Nq;
    }
    return total;
}

fc_status fc_plan_flops(const fc_plan *plan, double *flops)
{
    if (!plan || !flops)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_flops: %s is NULL", plan ? "flops" : "plan");
    const fc_problem *p = &plan->prob;
    *flops = fc_problem_visible(p) * (double)(2 * (p->Dqk + p->Dr) + 2 * p->Dv);
    if (plan->op == FC_OP_BACKWARD)
        *flops *= 2.5;
    return FC_OK;
}
