/*
 * The head-dim class of the CUDA kernels, in plain C (the plans, and the tests that run a kernel on
 * the CPU): 64, 128 or 256 — Dqk + Dr and Dv at most the class, zero-padded to it; 128 or 256 with
 * rope features (Dr > 0), whose kernels are instantiated there only.
 */
#ifndef FC_CUDA_DCLASS_H
#define FC_CUDA_DCLASS_H

#include "../core/problem.h"

static inline int fc_cuda_dclass(const fc_problem *p)
{
    const int64_t dqk = p->Dqk + p->Dr, d = dqk > p->Dv ? dqk : p->Dv;
    return d <= 64 && p->Dr == 0 ? 64 : d <= 128 ? 128 : 256; /* rope kernels: classes 128 and 256 only */
}

#endif /* FC_CUDA_DCLASS_H */
