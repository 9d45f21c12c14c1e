/* The CPU backend: instruction-set dispatch, plans and the threaded item loop. */
#ifndef FC_CPU_CPU_H
#define FC_CPU_CPU_H

#include "../core/plan.h"
#include "work.h"

const fc_cpu_kernels *fc_cpu_active(void);
/* FC_OK, or FC_ERR_BACKEND with a message when FLASHC_ISA names no usable kernel path. */
fc_status fc_cpu_check_env(const char *fn);

fc_status fc_cpu_plan_create(fc_plan *plan, int threads);
void fc_cpu_plan_destroy(struct fc_cpu_plan *cp);
fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *prob, void *workspace);

#endif /* FC_CPU_CPU_H */
