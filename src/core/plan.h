/*
 * A plan: one lowered problem, the backend chosen for it and what that backend prepared (tiles,
 * threads, workspace).  Faces create plans from their own descriptions; the core reaches the
 * backend only through its fc_backend_ops (backend.h).
 */
#ifndef FC_CORE_PLAN_H
#define FC_CORE_PLAN_H

#include <stddef.h>

#include "problem.h"

typedef enum fc_op { FC_OP_FORWARD = 0, FC_OP_BACKWARD = 1 } fc_op;

struct fc_backend_ops;

struct fc_plan {
    fc_op op;
    fc_problem prob;                      /* prob.batch is owned by the plan */
    const struct fc_backend_ops *backend; /* the backend that prepared the plan */
    void *state;                          /* the backend's preparation */
    size_t workspace;                     /* bytes the caller must supply to run */
    void *stream;                         /* options.stream: where runs are queued */
};

/* A plan around a lowered problem (takes ownership of prob->batch); selects and prepares the
 * backend (backend.h). */
fc_status fc_plan_from_problem(const fc_problem *prob, fc_op op, const fc_options *options, fc_plan **out);

/* Checks a run's device data that addresses memory (block-table entries) with the plan's backend;
 * FC_ERR_INVALID_ARG with a message when an entry is out of range.  fc_plan_execute calls it
 * before writing anything. */
fc_status fc_plan_check_data(const fc_plan *plan, const fc_problem *run);

/* Runs a plan on a (possibly rebound) problem with the given workspace, on the plan's stream. */
fc_status fc_plan_execute(const fc_plan *plan, const fc_problem *run, void *workspace, size_t bytes);
/* The same on the given stream (a face whose stream arrives with the run: aclnn*, infiniop). */
fc_status fc_plan_execute_on(const fc_plan *plan, const fc_problem *run, void *workspace, size_t bytes, void *stream);

/* Frees a plan and its backend's preparation (NULL: nothing). */
void fc_plan_free(fc_plan *plan);

/* FLOPs over visible positions: 2·(Dqk+Dr)+2·Dv per visible score, ×2.5 for a backward plan. */
double fc_plan_flop_count(const fc_plan *plan);

#endif /* FC_CORE_PLAN_H */
