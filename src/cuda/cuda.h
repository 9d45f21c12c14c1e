/*
 * The CUDA backend's C-callable entry points (defined in the .cu files of src/cuda/).  Only
 * src/cuda/backend.c includes this; the core reaches the backend through fc_cuda_backend.
 */
#ifndef FC_CUDA_CUDA_H
#define FC_CUDA_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "../core/batch.h"

/* A run's own lengths and the plan's rule that makes per-batch facts of them (batch.h); len
 * NULL: the run keeps the planned facts. */
typedef struct fc_cuda_lengths {
    const fc_batch_rule *rule;
    const fc_lengths *len;
} fc_cuda_lengths;

/* Whether a usable device is present; when not, *why says why (a static string). */
bool fc_cuda_available(const char **why);

/* Device memory for a one-call form's workspace, and its release (after the queued work). */
void *fc_cuda_workspace_alloc(size_t bytes);
void fc_cuda_workspace_free(void *workspace);
/* Waits for the work queued on stream (a cudaStream_t; NULL: the default stream). */
fc_status fc_cuda_stream_wait(void *stream);

/* Where an address lives: 1 device (or managed) memory, 0 host memory, −1 unknown. */
int fc_cuda_is_device_pointer(const void *ptr);

/* Device state of a forward plan: the per-batch facts and the balanced list of work tiles. */
typedef struct fc_cuda_fwd fc_cuda_fwd;

/* Why the forward kernel cannot run prob (NULL when it can). */
const char *fc_cuda_fwd_unsupported(const fc_problem *prob);
/* Prepares the device state (fails with fc_fail). */
fc_status fc_cuda_fwd_plan(const fc_problem *prob, fc_cuda_fwd **out);
/* Device workspace of a forward run: a paged run's fault word, and room for the run's own
 * per-batch facts when its runs may bring them. */
size_t fc_cuda_fwd_workspace(const fc_problem *p, bool runs_bring_facts);
/* Queues the forward of run (the planned shape with this run's data and, lens.len, lengths:
 * they may move kv windows, not query rows) on stream. */
fc_status fc_cuda_fwd_run(const fc_cuda_fwd *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                          void *stream);
/* FC_ERR_INVALID_ARG naming a block-table entry that an earlier run found out of range on the
 * GPU (that run wrote none of its outputs); reported once.  FC_OK for plans without tables. */
fc_status fc_cuda_fwd_check(fc_cuda_fwd *plan, const fc_problem *prob);
void fc_cuda_fwd_destroy(fc_cuda_fwd *plan);

/* Device state of a decode plan (decode.cu): flash-decoding over kv splits, merged in order;
 * immutable once planned (runs with distinct workspaces may overlap on different streams). */
typedef struct fc_cuda_dec fc_cuda_dec;

/* Why the decode kernel cannot run prob (NULL when it can: few query rows per kv head). */
const char *fc_cuda_dec_unsupported(const fc_problem *prob);
/* Whether prob uses storage only the decode kernel reads (int8 key/value, an output dtype other
 * than the query's). */
bool fc_cuda_dec_only(const fc_problem *prob);
fc_status fc_cuda_dec_plan(const fc_problem *prob, fc_cuda_dec **out);
/* Bytes of device workspace a run needs: its counters, fault word and per-batch facts, and the
 * splits' partial (O, m, l). */
size_t fc_cuda_dec_workspace(const fc_cuda_dec *plan, const fc_problem *prob);
/* FC_ERR_INVALID_ARG naming a block-table entry that an earlier run found out of range on the
 * GPU (that run did not write the batch's rows); reported once. */
fc_status fc_cuda_dec_check(fc_cuda_dec *plan, const fc_problem *prob);
/* lens.len: the run's own lengths (host memory: their facts go into the workspace; at most the
 * planned query rows).  kv_lens: the run's kv lengths in device memory (NULL: the run's facts as
 * they are), read by the kernels: each within [col_lo, skv] of the plan's facts, else the batch
 * is not written and fc_cuda_dec_check reports it. */
fc_status fc_cuda_dec_run(const fc_cuda_dec *plan, const fc_problem *run, fc_cuda_lengths lens, const int64_t *kv_lens,
                          void *workspace, void *stream);
void fc_cuda_dec_destroy(fc_cuda_dec *plan);

/* Device state of a sparse forward plan (sparse_fwd.cu: SparseFlashAttention): the per-batch facts
 * and the kernel class. */
typedef struct fc_cuda_sfa fc_cuda_sfa;

/* Why the sparse forward kernel cannot run prob (a problem with sparse selection; NULL when it can). */
const char *fc_cuda_sfa_unsupported(const fc_problem *prob);
fc_status fc_cuda_sfa_plan(const fc_problem *prob, fc_cuda_sfa **out);
/* Device workspace of a run: room for the run's own per-batch facts when its runs may bring them. */
size_t fc_cuda_sfa_workspace(const fc_problem *p, bool runs_bring_facts);
/* Selected positions, counted on a host copy of the index rows; −1 (fc_fail) when unreadable. */
double fc_cuda_sfa_visible(const fc_problem *prob);
/* Queues the sparse forward of run (and, lens.len, its own lengths: any query rows, kv lengths up
 * to the plan's where paged) on stream, after checking its block tables (device memory) on a host
 * copy read in the stream's order: FC_ERR_INVALID_ARG naming an entry out of range, nothing
 * written. */
fc_status fc_cuda_sfa_run(const fc_cuda_sfa *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                          void *stream);
void fc_cuda_sfa_destroy(fc_cuda_sfa *plan);

/* Device state of a sparse backward plan (sparse_bwd.cu: SparseFlashAttentionGrad): the per-batch
 * facts, the kernel class and the sizes its workspace was made for. */
typedef struct fc_cuda_sfag fc_cuda_sfag;

/* Why the sparse backward kernels cannot run prob (NULL when they can). */
const char *fc_cuda_sfag_unsupported(const fc_problem *prob);
fc_status fc_cuda_sfag_plan(const fc_problem *prob, fc_cuda_sfag **out);
/* Device workspace of a run: D per query row and head, the inverse index (O(index entries)) and,
 * when its runs may bring them, the run's own per-batch facts. */
size_t fc_cuda_sfag_workspace(const fc_cuda_sfag *plan);
/* Queues the sparse backward of run on stream after the forward's checks (block tables, paged kv
 * lengths); FC_ERR_INVALID_ARG when the run's own lengths need more workspace than the plan's. */
fc_status fc_cuda_sfag_run(const fc_cuda_sfag *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                           void *stream);
void fc_cuda_sfag_destroy(fc_cuda_sfag *plan);

/* Device state of a backward plan: per-batch facts, the D workspace's row offsets, the query
 * and kv tiles in launch order. */
typedef struct fc_cuda_bwd fc_cuda_bwd;

/* Why the backward kernels cannot run prob (NULL when they can). */
const char *fc_cuda_bwd_unsupported(const fc_problem *prob);
/* Why the backward kernels, dense or sparse, cannot write prob's gradients: an output gradient or
 * gradients in another dtype than the operands', tensor-list or paged gradient storage. */
const char *fc_cuda_grads_unsupported(const fc_problem *prob);
/* The storage half of that: tensor-list or paged gradient storage. */
const char *fc_cuda_grads_storage_unsupported(const fc_problem *prob);
fc_status fc_cuda_bwd_plan(const fc_problem *prob, fc_cuda_bwd **out);
/* Device workspace of a run: D = rowsum(dO ∘ O), fp32, per query head and row. */
size_t fc_cuda_bwd_workspace(const fc_cuda_bwd *plan, const fc_problem *prob);
/* Queues the backward of run on stream (workspace: fc_cuda_bwd_workspace bytes of device memory). */
fc_status fc_cuda_bwd_run(const fc_cuda_bwd *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                          void *stream);
void fc_cuda_bwd_destroy(fc_cuda_bwd *plan);

#ifdef __cplusplus
}
#endif

#endif /* FC_CUDA_CUDA_H */
