/* The CPU backend: instruction-set dispatch, plans and the threaded item loop. */
#ifndef FC_CPU_CPU_H
#define FC_CPU_CPU_H

#include "../core/backend.h"
#include "work.h"

const fc_cpu_kernels *fc_cpu_active(void);
const char *fc_cpu_isa_name(void);
bool fc_cpu_pin_isa(const char *name);
/* FC_OK, or FC_ERR_BACKEND with a message when FLASHC_ISA names no usable kernel path. */
fc_status fc_cpu_check_env(const char *fn);

fc_status fc_cpu_plan_create(fc_plan *plan, const fc_options *options);
size_t fc_cpu_workspace_size(const fc_plan *plan);
void fc_cpu_plan_destroy(void *state);
/* Runs the plan on a run's problem; a run with its own lengths counts its own work items in the
 * workspace. */
fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *run, void *workspace, void *stream);

#endif /* FC_CPU_CPU_H */
