/* Plan lifetime and routing to the plan's backend (through fc_backend_ops only). */
#include "plan.h"

#include <stdlib.h>

#include "backend.h"
#include "error.h"

fc_status fc_plan_from_problem(const fc_problem *prob, fc_op op, const fc_options *options, fc_plan **out)
{
    fc_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        free(prob->batch);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_plan_from_problem: out of host memory");
    }
    plan->op = op;
    plan->prob = *prob;
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

fc_status fc_plan_check_data(const fc_plan *plan, const fc_problem *run)
{
    return plan->backend->check_data(plan, run);
}

fc_status fc_plan_execute(const fc_plan *plan, const fc_problem *run, void *workspace, size_t bytes)
{
    return fc_plan_execute_on(plan, run, workspace, bytes, plan->stream);
}

fc_status fc_plan_execute_on(const fc_plan *plan, const fc_problem *run, void *workspace, size_t bytes, void *stream)
{
    if (bytes < plan->workspace)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_execute: workspace_bytes is %zu, the plan needs %zu", bytes,
                       plan->workspace);
    if (plan->workspace > 0 && workspace == NULL)
        return fc_fail(FC_ERR_WORKSPACE, "fc_plan_execute: workspace is NULL, the plan needs %zu bytes", plan->workspace);
    const fc_status st = fc_plan_check_data(plan, run);
    if (st != FC_OK)
        return st;
    return plan->backend->execute(plan, run, workspace, stream);
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
