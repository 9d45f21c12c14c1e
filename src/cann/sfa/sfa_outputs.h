/*
 * Output bytes the face places itself, after the core has run (never operator math): softmax
 * statistics outputs that are strided views.  The core writes the (B,N2,S1,G) / (N2,T1,G) order
 * contiguously into the workspace, and they are scattered into the view.
 */
#ifndef FC_CANN_SFA_OUTPUTS_H
#define FC_CANN_SFA_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cann/common/operand.h"

/* Row-major contiguous, so the core can write it directly. */
bool sfa_stats_in_place(const cann_operand *t);

/* Copies t->numel floats, row-major over t's dims, into the view t. */
void sfa_scatter_floats(const cann_operand *t, const float *src);

#endif /* FC_CANN_SFA_OUTPUTS_H */
