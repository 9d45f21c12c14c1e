/*
 * The host's rules for how a kernel may touch a view, in plain C (the plans, and the tests that run
 * a kernel on the CPU): whole 16-byte chunks by cp.async, and pairs of output elements in one store.
 */
#ifndef FC_CUDA_VEC_RULE_H
#define FC_CUDA_VEC_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/problem.h"

/* Whether cp.async can load the view's rows of d elements of es bytes: unit feature stride,
 * 16-byte aligned rows and feature chunks. */
static inline bool fc_cuda_vec_fits(const fc_view *v, int64_t d, int es)
{
    const int64_t per = 16 / es;
    return v->se == 1 && d % per == 0 && (uintptr_t)v->data % 16 == 0 && v->sb % per == 0 && v->sn % per == 0 &&
           v->ss % per == 0;
}

/* The same for a query or key view with its rope part (Dr > 0: the view r of Dr features). */
static inline bool fc_cuda_vec_qk_fits(const fc_problem *p, const fc_view *v, const fc_view *r, int es)
{
    return fc_cuda_vec_fits(v, p->Dqk, es) && (p->Dr == 0 || fc_cuda_vec_fits(r, p->Dr, es));
}

/* The same for a kernel with fp32 tiles (kFeatF32): an fp32 view's rows (16-bit views convert
 * element by element). */
static inline bool fc_cuda_vec_f32(const fc_view *v, int64_t d)
{
    return v->dtype == FC_F32 && fc_cuda_vec_fits(v, d, 4);
}

/* Whether an output of es-byte elements takes two adjacent features in one aligned store. */
static inline bool fc_cuda_pair_fits(const fc_view *v, int es)
{
    return v->se == 1 && (uintptr_t)v->data % (2 * es) == 0 && v->sb % 2 == 0 && v->sn % 2 == 0 && v->ss % 2 == 0;
}

#endif /* FC_CUDA_VEC_RULE_H */
