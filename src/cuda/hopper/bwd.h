/*
 * The Hopper backward as the CUDA backward sees it (backward.cu): which problems it takes, its
 * tile sizes (the dQ accumulators' query tiles and the plan's kv tiles follow them) and a run,
 * which maps the run's views for the bulk tensor copies and launches the persistent kernel — or
 * says why this run's views cannot be mapped.  Around it the backward's own kernels run as on
 * the fused path: D = rowsum(dO∘O) before, dQ from its fp32 accumulators after.
 */
#ifndef FC_CUDA_HOPPER_BWD_H
#define FC_CUDA_HOPPER_BWD_H

#include <cuda_runtime.h>

extern "C" {
#include "../../core/error.h"
}
#include "../../core/problem.h"
#include "../plan_facts.h"

namespace fc_cuda {
struct BwdLaunch;
}

namespace fc_hopper {

/* kv rows per CTA unit (64 per MMA warpgroup) and query rows per step (the accumulator tile). */
constexpr int kBwdKvRows = 128, kBwdQRows = 64;

/* Why the Hopper backward cannot run prob (NULL when it can): what the Hopper forward refuses,
 * gradients in another dtype, head-dim classes other than 64 and 128. */
const char *bwd_unsupported(const fc_problem *p, int dclass);

/* Queues the dK/dV and dQ-partial kernel of run (its batch pointer the device facts, whose reach
 * gives the maps' extents) on grid CTAs; L holds the zeroed accumulators, turn counters and
 * ticket.  *launched false, with FC_OK and *why, when this run's views cannot be mapped. */
fc_status bwd_run(void *encode, int dclass, const fc_problem &run, const fc_cuda::BwdLaunch &L, const fc_cuda_reach &reach, int grid,
                  cudaStream_t stream, bool *launched, const char **why);

/* The launchers, instantiated per head-dim class (bwd_d<class>.cu). */
struct BwdArgs;
#define FC_HOPPER_BWD_LAUNCHERS(X) X(f16, 64) X(f16, 128) X(bf16, 64) X(bf16, 128)
#define FC_HOPPER_BWD_DECLARE(dt, d)                                                                                          \
    cudaError_t bwd_launch_##dt##_d##d(const fc_problem &p, const fc_cuda::BwdLaunch &L, const BwdArgs &a, int grid, cudaStream_t s);
FC_HOPPER_BWD_LAUNCHERS(FC_HOPPER_BWD_DECLARE)
#undef FC_HOPPER_BWD_DECLARE

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_BWD_H */
