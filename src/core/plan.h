/*
 * A plan: one lowered problem, the backend chosen for it and what that backend prepared (tiles,
 * threads, workspace).  Faces create plans from their own descriptions; the core reaches the
 * backend only through its fc_backend_ops (backend.h).
 *
 * The plan's problem is the shape fixed at planning (sizes, views' strides and dtypes, visibility)
 * with the planned data addresses as defaults; a run brings fc_bindings: the addresses that change,
 * and, for plans made with a batch rule, its own per-batch lengths (batch.h).
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
    void *stream;                         /* options.stream: where runs are queued */
};

/* A plan around a lowered problem (takes ownership of prob->batch); selects and prepares the
 * backend (backend.h).  rule: how prob->batch followed from the lengths (fc_batch_facts), given
 * by faces whose runs bring lengths of their own; NULL: the facts are fixed at planning. */
fc_status fc_plan_from_problem(const fc_problem *prob, const fc_batch_rule *rule, fc_op op, const fc_options *options,
                               fc_plan **out);

/* The problem a run computes: the plan's with the bindings' addresses and, when they bring
 * lengths, per-batch facts derived from them (fc_batch_facts, into a new host array that
 * fc_plan_unbind frees).  FC_ERR_INVALID_ARG when lengths come to a plan without a batch rule. */
fc_status fc_plan_bind(const fc_plan *plan, const fc_bindings *bind, fc_problem *run);
void fc_plan_unbind(const fc_plan *plan, fc_problem *run);

/* FC_ERR_INVALID_ARG when a run brings kv lengths (bind->kv_lens) that the plan cannot take. */
fc_status fc_plan_check_kv_lens(const fc_plan *plan, const fc_bindings *bind);

/* Checks a run's data that addresses memory (block-table entries) with the plan's backend;
 * FC_ERR_INVALID_ARG with a message when an entry is out of range.  fc_plan_execute calls it
 * before writing anything. */
fc_status fc_plan_check_data(const fc_plan *plan, const fc_bindings *bind);

/* Runs a plan with a run's bindings (NULL: the planned addresses) and the given workspace, on
 * the plan's stream. */
fc_status fc_plan_execute(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes);
/* The same on the given stream (a face whose stream arrives with the run: aclnn*, infiniop). */
fc_status fc_plan_execute_on(const fc_plan *plan, const fc_bindings *bind, void *workspace, size_t bytes, void *stream);

/* A workspace of the plan's size in the memory its backend runs on (for the one-call forms);
 * NULL when the plan needs none or none could be had.  fc_plan_workspace_release frees it once the
 * plan's queued runs have completed. */
void *fc_plan_workspace_take(const fc_plan *plan);
void fc_plan_workspace_release(const fc_plan *plan, void *workspace);

/* Frees a plan and its backend's preparation (NULL: nothing). */
void fc_plan_free(fc_plan *plan);

/* FLOPs over visible positions: 2·(Dqk+Dr)+2·Dv per visible score, ×2.5 for a backward plan. */
double fc_plan_flop_count(const fc_plan *plan);

#endif /* FC_CORE_PLAN_H */
