/* The CPU backend's registration: every problem the core can express runs here. */
#include "../core/host_data.h"
#include "cpu.h"

static bool fc_cpu_supports(const fc_problem *prob, fc_op op, const char **why)
{
    (void)prob, (void)op, (void)why;
    return true;
}

static fc_status fc_cpu_check_data(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind)
{
    (void)plan, (void)bind; /* (the core read the run's kv lengths: host memory) */
    return fc_host_check_pages("fc_cpu_check_data", run);
}

const fc_backend_ops fc_cpu_backend = {
    .name = "cpu",
    .id = FC_BACKEND_CPU,
    .supports = fc_cpu_supports,
    .plan = fc_cpu_plan_create,
    .workspace_size = fc_cpu_workspace_size,
    .host_memory = true,
    .check_data = fc_cpu_check_data,
    .execute = fc_cpu_run,
    .visible = fc_host_visible,
    .variant = fc_cpu_isa_name,
    .force_variant = fc_cpu_pin_isa,
    .describe = fc_cpu_describe,
    .destroy = fc_cpu_plan_destroy,
};
