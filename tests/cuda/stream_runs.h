/*
 * Pieces of the tests that run one CUDA plan on several streams or inside graphs through the
 * core's fc_plan_execute_on (linked against the static library, without gpu_case's machinery).
 */
#ifndef FLASHC_TESTS_CUDA_STREAM_RUNS_H
#define FLASHC_TESTS_CUDA_STREAM_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "common/rng.h"
#include "core/plan.h"

/* Device memory of `bytes` 16-bit elements of dtype t (FC_F16 or FC_BF16), uniform in [-2, 2);
 * NULL when it cannot be made. */
void *sr_device_random(size_t bytes, fc_dtype t, tc_rng *r);

/* A host copy of `bytes` of device memory (zeros where the copy fails); the caller frees it. */
void *sr_host_copy(const void *d, size_t bytes);

/* The device ranges a run writes (its outputs, at most SR_MAX_OUTPUTS). */
enum { SR_MAX_OUTPUTS = 4 };
typedef struct sr_outputs {
    void *at[SR_MAX_OUTPUTS];
    size_t bytes[SR_MAX_OUTPUTS];
    int n;
} sr_outputs;

/* A run of plan with b alone on s, its outputs poisoned first; their bytes on the host, one
 * after another. */
void *sr_run_alone_into(const fc_plan *plan, const fc_bindings *b, const sr_outputs *o, void *ws, size_t ws_bytes,
                        cudaStream_t s);
/* The same for a forward: its one output, out_bytes at b->out. */
void *sr_run_alone(const fc_plan *plan, const fc_bindings *b, void *ws, size_t ws_bytes, size_t out_bytes, cudaStream_t s);

/* Runs of one plan with distinct data and workspaces at once: each binding alone (on s[0]), then
 * `rounds` of both queued on s[0] and s[1] in turn without waiting; each stream's outputs (oa,
 * ob) must equal its run alone, bit for bit.  outputs_differ also checks that the runs alone
 * differ (their data does, so a plan that ignored its bindings would fail). */
void sr_two_streams_into(const fc_plan *plan, const fc_bindings *ba, const fc_bindings *bb, const sr_outputs *oa,
                         const sr_outputs *ob, void *ws[2], size_t ws_bytes, int rounds, bool outputs_differ,
                         cudaStream_t s[2]);
/* The same for a forward: each run's one output, out_bytes at ba->out and bb->out. */
void sr_two_streams(const fc_plan *plan, const fc_bindings *ba, const fc_bindings *bb, void *ws[2], size_t ws_bytes,
                    size_t out_bytes, int rounds, bool outputs_differ, cudaStream_t s[2]);

#endif
