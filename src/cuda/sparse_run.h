/*
 * What the sparse forward and backward share on the host (sparse_fwd.cu): the device's shared
 * memory, the kv capacity of a paged plan, host copies of device arrays, and a run's checks batch
 * by batch — block-table entries in range (read from host copies of the tables, in the run's
 * stream order), kv lengths within a paged plan's — with what the walk saw (rows, kv rows, blocks).
 */
#ifndef FC_CUDA_SPARSE_RUN_H
#define FC_CUDA_SPARSE_RUN_H

#include <cuda_runtime.h>

#include "plan_facts.h"

/* FC_ERR_BACKEND (naming who) when the current device cannot give a CTA `smem` bytes. */
fc_status fc_sfa_device_fits(size_t smem, const char *who);

/* The most kv positions a run may use of a batch: the plan's longest (its block tables are read
 * up to there). */
int64_t fc_sfa_kv_cap(const fc_problem *p);

/* *out = a host copy (malloc'd; NULL when n = 0) of the elements [0, n) of a device array of
 * `es`-byte elements, read after the work queued on stream s. */
fc_status fc_sfa_to_host(const void *dev, int64_t n, size_t es, cudaStream_t s, const char *what, void **out);

/* A run as its checks see it: the problem with host copies of its block tables, and over the
 * batches seen the query rows (Σ q_rows), the longest kv_rows and the selection blocks that
 * cover the kv rows (Σ fc_sfag_blocks). */
struct SfaRunCheck {
    fc_problem host;
    void *copies[3];
    int64_t kv_cap, rows, kv_rows, blocks;
    const char *who;
};

void fc_sfa_check_free(SfaRunCheck *c);
fc_status fc_sfa_check_init(SfaRunCheck *c, const fc_problem *run, int64_t kv_cap, cudaStream_t s, const char *who);
fc_status fc_sfa_check_batch(SfaRunCheck *c, int64_t b, const fc_batch &bt);

/* The run's device facts into *batch (the planned ones, or its own into the workspace), every
 * batch checked on the way; *check holds what the walk saw (its copies freed).  FC_ERR_BACKEND
 * for 2^31 query rows or more. */
fc_status fc_sfa_run_facts(const fc_cuda_facts *facts, int64_t kv_cap, const fc_problem *run, const fc_cuda_lengths &lens,
                           void *workspace, cudaStream_t s, const char *who, fc_batch **batch, SfaRunCheck *check);

#endif /* FC_CUDA_SPARSE_RUN_H */
