/*
 * The backend interface: the only way the core reaches a backend (CPU today, CUDA later).
 *
 * A backend says whether it can run a problem (and why not), prepares a plan for it, and runs
 * the plan on the problem a run computes with a stream (the core binds the run once, fc_plan_bind,
 * with the per-batch facts of the run's own lengths when it brings some).  The operations that read run-time data — the
 * block-table range check and the visible-score count behind fc_plan_flops — are backend
 * operations too, so a device backend reads that data where it lives.  The list of backends and
 * the choice between them live in backend.c and nowhere else.
 */
#ifndef FC_CORE_BACKEND_H
#define FC_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

typedef struct fc_backend_ops {
    const char *name; /* "cpu", "cuda" */
    fc_backend id;
    /* Whether this backend can run op on prob; when not, *why says why (a static string). */
    bool (*supports)(const fc_problem *prob, fc_op op, const char **why);
    /* Optional (NULL = host memory only): whether the problem's operands are this backend's
     * memory — 1 all of them, 0 none, −1 a mix (*operand names one that is not). */
    int (*claims)(const fc_problem *prob, const char **operand);
    /* Prepares plan->state for plan->prob and plan->op (fails with fc_fail). */
    fc_status (*plan)(fc_plan *plan, const fc_options *options);
    /* Bytes of workspace a run of the prepared plan needs. */
    size_t (*workspace_size)(const fc_plan *plan);
    /* Whether the backend's operands and workspace are host memory: then the core reads a run's
     * kv lengths and puts a run's own per-batch facts at the end of its workspace (plan.h); else
     * the backend derives a run's facts from its lengths (bind->lengths, fc_batch_facts_next) and
     * reads kv lengths itself. */
    bool host_memory;
    /* Optional (NULL = host memory, malloc/free): a workspace in the memory this backend runs on,
     * for the one-call forms, and its release, which waits for the runs queued before it. */
    void *(*workspace_alloc)(size_t bytes);
    void (*workspace_free)(void *workspace);
    /* Checks the run's data that addresses memory (block-table entries) before anything is
     * written; FC_ERR_INVALID_ARG with a message naming the entry when one is out of range. */
    fc_status (*check_data)(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind);
    /* Optional (NULL: runs fail before they write): a fault an earlier run found where it runs
     * and no call has returned yet (FC_ERR_INVALID_ARG naming it, once), after waiting for the
     * runs queued on stream when wait is set. */
    fc_status (*check_runs)(const fc_plan *plan, void *stream, bool wait);
    /* Runs the plan on the problem a run computes (fc_plan_bind: the plan's shape with this run's
     * data and lengths; bind: what the run brought, for what the core leaves to the backend, e.g. kv
     * lengths in device memory).  Reads the plan, writes only the run's outputs and workspace. */
    fc_status (*execute)(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind, void *workspace,
                         void *stream);
    /* Visible scores of the problem (sum over rows and heads of visible columns); −1, with the
     * reason (fc_fail), when the data it depends on cannot be read. */
    double (*visible)(const fc_problem *prob);
    /* The kernel path in use, and a way to pin one by name (false when it is not available). */
    const char *(*variant)(void);
    bool (*force_variant)(const char *name);
    /* Optional: what the plan's preparation chose, as key=value text (snprintf's contract). */
    int (*describe)(const fc_plan *plan, char *buf, size_t len);
    void (*destroy)(void *state);
} fc_backend_ops;

/* Defined by each built backend. */
extern const fc_backend_ops fc_cpu_backend;
#ifdef FLASHC_CUDA
extern const fc_backend_ops fc_cuda_backend;
#endif

/* The backend a plan for op on prob runs on, given the options (NULL = defaults): the one asked
 * for; FC_BACKEND_DEFAULT: the backend whose memory the operands are (FC_ERR_INVALID_ARG naming an
 * operand when they mix), the CPU for host memory.  FC_ERR_BACKEND with the reason when that backend is not
 * built or cannot run the problem — never a silent fallback to another backend. */
fc_status fc_backend_select(const fc_options *options, const fc_problem *prob, fc_op op, const fc_backend_ops **out);

/* A built backend by id (NULL when not built). */
const fc_backend_ops *fc_backend_get(fc_backend id);

#endif /* FC_CORE_BACKEND_H */
