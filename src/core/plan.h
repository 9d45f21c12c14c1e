/*
 * A plan: one lowered problem plus what its backend prepared for it (tiles, threads, workspace).
 * Faces create plans from their own descriptions; backends fill in the prepared part.
 */
#ifndef FC_CORE_PLAN_H
#define FC_CORE_PLAN_H

#include <stddef.h>

#include "problem.h"

typedef enum fc_op { FC_OP_FORWARD = 0, FC_OP_BACKWARD = 1 } fc_op;

struct fc_cpu_plan;

struct fc_plan {
    fc_op op;
    fc_problem prob;          /* prob.batch is owned by the plan */
    fc_backend backend;
    size_t workspace;         /* bytes the caller must supply to run */
    struct fc_cpu_plan *cpu;  /* backend state */
};

/* A plan around a lowered problem (takes ownership of prob->batch); prepares the backend. */
fc_status fc_plan_from_problem(const fc_problem *prob, fc_op op, const fc_options *options, fc_plan **out);

/* Checks the device data that addresses memory (block-table entries); FC_ERR_INVALID_ARG with a
 * message when an entry is out of range.  fc_plan_execute calls it before writing anything. */
fc_status fc_plan_check_data(const fc_problem *p);

/* Runs a plan on a (possibly rebound) problem with the given workspace. */
fc_status fc_plan_execute(const fc_plan *plan, const fc_problem *prob, void *workspace, size_t bytes);

/* Visible score count of the problem (sum over rows and heads of visible columns). */
double fc_problem_visible(const fc_problem *prob);

#endif /* FC_CORE_PLAN_H */
