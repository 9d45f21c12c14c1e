/*
 * The head-dim class of the CUDA kernels, in plain C (the plans, and the tests that run a kernel on
 * the CPU): 64, 128 or 256 — Dqk and Dv at most the class, zero-padded to it.
 */
#ifndef FC_CUDA_DCLASS_H
#define FC_CUDA_DCLASS_H

#include "../core/problem.h"

static inline int fc_cuda_dclass(const fc_problem *p)
{
    const int64_t d = p->Dqk > p->Dv ? p->Dqk : p->Dv;
    return d <= 64 ? 64 : d <= 128 ? 128 : 256;
}

#endif /* FC_CUDA_DCLASS_H */
