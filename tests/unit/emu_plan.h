/*
 * What an emulated kernel test runs over: a CPU plan of the case's description (forward or
 * backward), whose fc_problem is the one the CUDA backend would get (host addresses).
 */
#ifndef FLASHC_TESTS_UNIT_EMU_PLAN_H
#define FLASHC_TESTS_UNIT_EMU_PLAN_H

#include <string.h>

extern "C" {
#include "core/plan.h"
}

inline fc_status emu_cpu_plan(const fc_attention_desc *a, fc_plan **plan)
{
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    return fc_plan_create(a, &opt, plan);
}

/* The same for a backward description and its gradients. */
inline fc_status emu_cpu_plan_backward(const fc_attention_desc *a, const fc_attention_grads *gr, fc_plan **plan)
{
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    return fc_plan_create_backward(a, gr, &opt, plan);
}

#endif /* FLASHC_TESTS_UNIT_EMU_PLAN_H */
