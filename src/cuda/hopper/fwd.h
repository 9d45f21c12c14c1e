/*
 * The Hopper forward as the CUDA backend's forward sees it (forward.cu): which problems it takes,
 * its plan (the work list of BM-row query tiles), and a run, which maps the run's views for the
 * bulk tensor copies and launches the persistent kernel — or says why this run's views cannot be
 * mapped, so that the caller runs the sm_80 kernel instead.
 */
#ifndef FC_CUDA_HOPPER_FWD_H
#define FC_CUDA_HOPPER_FWD_H

#include <cuda_runtime.h>

extern "C" {
#include "../../core/error.h"
}
#include "../../core/problem.h"
#include "../plan_facts.h"

namespace fc_cuda {
struct DecReport;
}

namespace fc_hopper {

/* Query rows per work item by default (two consumer warpgroups of 64). */
constexpr int kFwdRows = 128;

/* Why the Hopper kernel cannot run prob on any device (NULL when it can: fp16/bf16 with the same
 * output dtype, head dims ≤ 256, a positive scale, no score terms, sink, dropout or rope; paged
 * key/value at head-dim classes 64 and 128 in blocks of a multiple of 16 rows, one block table for
 * both). */
const char *fwd_unsupported(const fc_problem *p);

/* Whether the current device runs the sm_90a kernels (compute capability 9.0). */
bool fwd_device_ok(const char **why);

struct FwdPlan {
    int2 *items; /* device: (batch, query tile of rows), heaviest first */
    int n_items, head_group, grid, dclass;
    int rows;     /* query rows per item: 64 × consumer warpgroups (kFwdRows, or 192 for FLASHC_CUDA_FWD_D64=wg3) */
    int pingpong; /* the consumer warpgroups take turns issuing their GEMMs */
    int tma_out;  /* the TMA-store epilogue (FLASHC_CUDA_FWD_EPILOGUE=tma; two consumer warpgroups only) */
    int page_rows; /* paged key/value (the _paged kernels, two warpgroups, register stores): rows per
                      bulk copy, gcd(block size, BN) */
    void *encode; /* the driver's cuTensorMapEncodeTiled */
};

fc_status fwd_plan(const fc_problem *p, FwdPlan *out);
void fwd_destroy(FwdPlan *plan);

/* A paged run's block-table check word (device memory, written by the check kernel that forward.cu
 * queues before the forward) and the plan's report (host-mapped); NULLs when not paged. */
struct FwdFault {
    const unsigned long long *word;
    fc_cuda::DecReport *report;
};

/* Queues the forward of run (its batch pointer the device facts, whose reach gives the maps'
 * extents) on stream.  *launched false, with FC_OK and *why, when this run's views cannot be
 * mapped (alignment, strides). */
fc_status fwd_run(const FwdPlan &plan, const fc_problem &run, const fc_cuda_reach &reach, const FwdFault &fault,
                  cudaStream_t stream, bool *launched, const char **why);

/* The launchers, instantiated per head-dim class (fwd_d<class>.cu). */
struct FwdArgs;
#define FC_HOPPER_FWD_LAUNCHERS(X) X(f16, 64) X(f16, 128) X(f16, 256) X(bf16, 64) X(bf16, 128) X(bf16, 256)
#define FC_HOPPER_FWD_DECLARE(dt, d) cudaError_t fwd_launch_##dt##_d##d(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s);
FC_HOPPER_FWD_LAUNCHERS(FC_HOPPER_FWD_DECLARE)
#undef FC_HOPPER_FWD_DECLARE
/* Variants chosen by an environment variable at planning: three consumer warpgroups at class 64. */
cudaError_t fwd_launch_f16_d64_wg3(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s);
cudaError_t fwd_launch_bf16_d64_wg3(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s);
/* ... and the TMA-store epilogue (fwd_<dtype>_d<class>_tma.cu). */
#define FC_HOPPER_FWD_DECLARE_TMA(dt, d) cudaError_t fwd_launch_##dt##_d##d##_tma(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s);
FC_HOPPER_FWD_LAUNCHERS(FC_HOPPER_FWD_DECLARE_TMA)
#undef FC_HOPPER_FWD_DECLARE_TMA
/* ... and paged key/value (fwd_<dtype>_d<class>_paged.cu): classes 64 and 128 only, two
 * instantiations per dtype kept out of the build's time; class 256 takes the sm_80 kernel. */
#define FC_HOPPER_FWD_PAGED_LAUNCHERS(X) X(f16, 64) X(f16, 128) X(bf16, 64) X(bf16, 128)
#define FC_HOPPER_FWD_DECLARE_PAGED(dt, d) cudaError_t fwd_launch_##dt##_d##d##_paged(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t s);
FC_HOPPER_FWD_PAGED_LAUNCHERS(FC_HOPPER_FWD_DECLARE_PAGED)
#undef FC_HOPPER_FWD_DECLARE_PAGED

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_FWD_H */
