/* The CPU backend: instruction-set dispatch, plans and the threaded item loop. */
#ifndef FC_CPU_CPU_H
#define FC_CPU_CPU_H

#include "../core/plan.h"
#include "work.h"

const fc_cpu_kernels *fc_cpu_active(void);

fc_status fc_cpu_plan_create(fc_plan *plan, int threads);
void fc_cpu_plan_destroy(struct fc_cpu_plan *cp);
fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *prob, void *workspace);

#endif /* FC_CPU_CPU_H */
