/*
 * The per-batch facts a CUDA plan was made with, as every CUDA plan keeps them: the host records
 * (the fc_plan's own, as long-lived) and their device copy, made at planning and read-only after,
 * so that runs of one plan may be queued on several streams at once.  A run that brings lengths
 * of its own has its records derived on the host a fixed chunk at a time (no allocation) and
 * copied into its workspace on its stream.
 */
#ifndef FC_CUDA_PLAN_FACTS_H
#define FC_CUDA_PLAN_FACTS_H

#include <cuda_runtime.h>

extern "C" {
#include "../core/error.h"
}
#include "../core/problem.h"
#include "cuda.h"

/* How far a run's records reach into each side's position dimension: the largest q_tok + q_rows
 * and kv_tok + skv over the batches (at least 1); kv_short, the smallest kv_tok + skv (a batch
 * ending before kv has rows past its last key that a map over kv positions still covers); hides,
 * whether a row of some batch does not see every key of its batch (a tile may hide pairs). */
struct fc_cuda_reach {
    int64_t q, kv, kv_short;
    bool hides;
};
constexpr fc_cuda_reach kReachNothing = {1, 1, INT64_MAX, false};

struct fc_cuda_facts {
    const fc_batch *planned; /* host */
    fc_batch *dev;           /* device copy of planned */
    fc_cuda_reach reach;     /* of planned */
};

/* At planning: the device copy of p's facts (who names the caller in a failure). */
fc_status fc_cuda_facts_plan(fc_cuda_facts *f, const fc_problem *p, const char *who);

/* Frees the device copy (a zeroed or half-made fc_cuda_facts too). */
void fc_cuda_facts_free(fc_cuda_facts *f);

/* Device bytes a run's own facts take in its workspace. */
static inline size_t fc_cuda_facts_bytes(const fc_problem *p) { return (size_t)p->B * sizeof(fc_batch); }

/* A plan's rule for the records a run may bring: FC_OK, or fc_fail naming batch b. */
typedef fc_status (*fc_cuda_facts_check)(const void *plan, int64_t b, const fc_batch &planned, const fc_batch &own);

/* Records a run derives at a time: a stack buffer of about 11 KB, one copy per chunk. */
constexpr int64_t kFactsChunk = 64;

/* The device facts a run reads into *out, and how far they reach (reach may be NULL): the planned
 * copy, or, when the run brings lengths (lens.len), its own, derived kFactsChunk records at a time
 * (fc_batch_facts_next under lens.rule) into one stack buffer, twice: first every record is
 * checked (lengths in [0, 2^30), then check, given plan) — FC_ERR_INVALID_ARG before anything is
 * queued — then each chunk is copied on stream s into its place at `at` in the run's workspace
 * (fc_cuda_facts_bytes; NULL: FC_ERR_WORKSPACE).  The copies are from pageable memory, staged
 * before cudaMemcpyAsync returns, so the buffer serves every chunk.  Allocates nothing. */
fc_status fc_cuda_facts_for_run(const fc_cuda_facts *f, const fc_problem *run, const fc_cuda_lengths &lens, const void *plan,
                                fc_cuda_facts_check check, void *at, cudaStream_t s, const char *who, fc_batch **out,
                                fc_cuda_reach *reach);

#endif /* FC_CUDA_PLAN_FACTS_H */
