/*
 * The SparseFlashAttention executor payload.  The first phase plans the lowered template for
 * lengths that bound every run's (so its workspace bounds every run's) and keeps the operands whose
 * device data is read later; the second phase reads and checks the lengths (and a paged key's
 * block table), runs the plan with them bound (the backend derives the per-batch facts), then
 * places the face's own output bytes (sfa_outputs.h).
 */
#ifndef FC_CANN_SFA_EXEC_H
#define FC_CANN_SFA_EXEC_H

#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "core/problem.h"
#include "sfa_state.h"

/* A new executor for the validated call s with its lowered template (phase 1). */
aclnnStatus sfa_make_executor(const sfa_state *s, const fc_problem *tmpl, uint64_t *workspaceSize,
                              aclOpExecutor **executor);

/* An executor that does nothing (the grad with a zero-element query), workspace 0. */
aclnnStatus sfa_make_noop_executor(const char *fn, const char *run_fn, uint64_t *workspaceSize,
                                   aclOpExecutor **executor);

#endif /* FC_CANN_SFA_EXEC_H */
