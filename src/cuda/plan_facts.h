/*
 * The per-batch facts a CUDA plan was made with, as every CUDA plan keeps them: the host records
 * (the fc_plan's own, as long-lived) and their device copy, made at planning and read-only after,
 * so that runs of one plan may be queued on several streams at once.  A run that brings facts of
 * its own (a face that patches them per run) has them staged into its workspace on its stream.
 */
#ifndef FC_CUDA_PLAN_FACTS_H
#define FC_CUDA_PLAN_FACTS_H

#include <cuda_runtime.h>

extern "C" {
#include "../core/error.h"
}
#include "../core/problem.h"

struct fc_cuda_facts {
    const fc_batch *planned; /* host */
    fc_batch *dev;           /* device copy of planned */
};

/* At planning: the device copy of p's facts (who names the caller in a failure). */
fc_status fc_cuda_facts_plan(fc_cuda_facts *f, const fc_problem *p, const char *who);

/* Frees the device copy (a zeroed or half-made fc_cuda_facts too). */
void fc_cuda_facts_free(fc_cuda_facts *f);

/* Whether a run brings facts of its own rather than the planned ones. */
static inline bool fc_cuda_facts_own(const fc_cuda_facts *f, const fc_problem *run) { return run->batch != f->planned; }

/* Device bytes a run's own facts take in its workspace. */
static inline size_t fc_cuda_facts_bytes(const fc_problem *p) { return (size_t)p->B * sizeof(fc_batch); }

/* The device facts a run reads into *out: the planned copy, or the run's own copied on stream s
 * to `at` in its workspace (fc_cuda_facts_bytes; NULL: FC_ERR_WORKSPACE).  The copy is from
 * pageable memory, so it is staged before the call returns and the caller may reuse its records. */
fc_status fc_cuda_facts_for_run(const fc_cuda_facts *f, const fc_problem *run, void *at, cudaStream_t s, const char *who,
                                fc_batch **out);

#endif /* FC_CUDA_PLAN_FACTS_H */
