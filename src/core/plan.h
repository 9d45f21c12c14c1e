/*
 * A plan: one lowered problem, the backend chosen for it and what that backend prepared (tiles,
 * threads, workspace).  Faces create plans from their own descriptions; the core reaches the
 * backend only through its fc_backend_ops (backend.h).
 *
 * The plan's problem is the shape fixed at planning (sizes, views' strides and dtypes, visibility)
 * with the planned data addresses as defaults; a run brings fc_bindings: the addresses that change,
 * and, for plans made with a batch rule, its own per-batch lengths (batch.h).
 *
 * A plan is immutable once made: a run reads it and writes only its outputs and the workspace it
 * is given (a run's own per-batch facts included), so runs of one plan with distinct workspaces may
 * go at once.
 */
#ifndef FC_CORE_PLAN_H
#define FC_CORE_PLAN_H

#include <stddef.h>

#include "batch.h"
#include "problem.h"

typedef enum fc_op { FC_OP_FORWARD = 0, FC_OP_BACKWARD = 1 } fc_op;

struct fc_backend_ops;

/* What one run brings.  NULL fields keep the planned value. */
typedef struct fc_bindings {
    char *q, *k, *v, *q_rope, *k_rope, *out;
    const char *pse;
    const uint8_t *mask;
    const float *slopes, *sink;
    const uint8_t *drop_bits;
    float *stats_max, *stats_sum;
    char *dout, *dq, *dk, *dv, *dq_rope, *dk_rope; /* backward */
    float *dsink;                                 /* only where the plan has one */
    const int32_t *block_table;                   /* paged key, value and key rope */
    fc_lengths lengths;                           /* this run's lengths (plans with a batch rule) */
    const int64_t *kv_lens; /* this run's kv lengths in the operands' memory (plans with run_kv_lens):
                               fc_plan_bind reads them as host memory; a backend whose operands
                               live elsewhere reads them itself and binds without them */
} fc_bindings;

struct fc_plan {
    fc_op op;
    fc_problem prob;                      /* the shape and planned addresses; prob.batch is owned by the plan */
    fc_batch_rule rule;                   /* how prob.batch follows from lengths */
    bool lengths_bindable;                /* prob.batch is the rule's alone: runs may bring lengths */
    bool run_kv_lens;                     /* runs may bring kv lengths (fc_batch_relength moves each
                                             batch's facts: padded, no bias, no dropout, forward) */
    const struct fc_backend_ops *backend; /* the backend that prepared the plan */
    void *state;                          /* the backend's preparation */
    size_t workspace;                     /* bytes the caller must supply to run */
    size_t facts_at;                      /* where in a host workspace a run's own fc_batch records go */
    void *stream;                         /* options.stream: where runs are queued */
};

/* A plan around a lowered problem; selects and prepares the backend (backend.h).  Moves
 * prob->batch into the plan: on return prob->batch is NULL, the records the plan's whether it
 * was made or not (freed then).  rule: how prob->batch followed from the lengths
 * (fc_batch_facts), given by faces whose runs bring lengths of their own; NULL: the facts are
 * fixed at planning.  run_kv_lens: runs may bring kv lengths (fc_bindings.kv_lens). */
fc_status fc_plan_from_problem(fc_problem *prob, const fc_batch_rule *rule, bool run_kv_lens, fc_op op,
                               const fc_options *options, fc_plan **out);

/* The problem a run computes: the plan's with the bindings' addresses and, on a backend whose
 * memory is the host's (fc_backend_ops.host_memory), when they bring lengths or kv lengths, the
 * per-batch facts derived from them (fc_batch_facts, fc_batch_relength) in the run's workspace.
 * Another backend's run keeps the planned facts here and derives its own from bind->lengths
 * where its memory is.  Allocates nothing.  FC_ERR_INVALID_ARG when lengths come to a plan that
 * cannot take them. */
fc_status fc_plan_bind(const fc_plan *plan, const fc_bindings *bind, void *workspace, fc_problem *run);

/* FC_ERR_INVALID_ARG when a run brings kv lengths (bind->kv_lens) that the plan cannot take. */
fc_status fc_plan_check_kv_lens(const fc_plan *plan, const fc_bindings *bind);

/* Runs a plan with a run's bindings (NULL: the planned addresses) and the given workspace, on
 * the plan's stream: binds the run once (fc_plan_bind), has the backend check the data that
 * addresses memory (block-table entries: FC_ERR_INVALID_ARG naming the entry, before anything
 * is written), then execute. */
fc_status fc_plan_execute(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes);
/* The same on the given stream (a face whose stream arrives with the run: aclnn*, infiniop). */
fc_status fc_plan_execute_on(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes, void *stream);

/* A fault the plan's earlier runs on stream found on the device (fc_backend_ops.check_runs);
 * FC_OK on a backend whose runs fail before they write. */
fc_status fc_plan_check_runs_on(const fc_plan *plan, void *stream, bool wait);

/* A workspace of the plan's size in the memory its backend runs on (for the one-call forms);
 * NULL when the plan needs none or none could be had.  fc_plan_workspace_release frees it once the
 * plan's queued runs have completed. */
void *fc_plan_workspace_take(const fc_plan *plan);
void fc_plan_workspace_release(const fc_plan *plan, void *workspace);

/* Frees a plan and its backend's preparation (NULL: nothing). */
void fc_plan_free(fc_plan *plan);

/* What the plan runs, as one line of key=value text: the backend, the operation and what the
 * backend chose (its kernels, tiles, items, threads, workspace layout); truncated to len − 1
 * characters.  Returns the full length (snprintf's contract). */
int fc_plan_description(const fc_plan *plan, char *buf, size_t len);

/* FLOPs over visible positions: 2·(Dqk+Dr)+2·Dv per visible score, ×2.5 for a backward plan; −1
 * when the backend could not count them (fc_fail said why). */
double fc_plan_flop_count(const fc_plan *plan);

#endif /* FC_CORE_PLAN_H */
