/*
 * aclOpExecutor and the second phase of the two-phase contract (semantics §6.6), for every
 * operator.  An operator's first phase builds an executor around its own payload (for example a
 * planned fc_problem) with a run and a release function, records the byte ranges of its operands
 * for the phase-2 allocation re-check, and publishes it.  The operator's second-phase entry point
 * is then one call to cann_executor_run.
 */
#ifndef FC_CANN_EXECUTOR_H
#define FC_CANN_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "flashc.h"
#include "operand.h"

typedef struct cann_exec_ops {
    /* Runs the captured work on stream (the runtime's native stream: fc_rt_stream_native); all
     * checks have passed and workspace holds >= the required size. */
    aclnnStatus (*run)(void *payload, void *workspace, uint64_t bytes, void *stream, const char *fn);
    void (*release)(void *payload);
    /* Optional: what the device found in the runs already queued (a bad block-table entry, found
     * after the run returned), first waiting for those on stream when wait is set.  Called before
     * a single-use executor is released (waiting for its run) and by aclDestroyAclOpExecutor
     * (after waiting for the device: a repeatable executor's streams may be gone). */
    aclnnStatus (*finish)(void *payload, void *stream, bool wait, const char *fn);
} cann_exec_ops;

struct aclOpExecutor {
    const char *run_fn;          /* the only second-phase function that may run it */
    const cann_exec_ops *ops;
    void *payload;
    uint64_t workspace;          /* bytes required */
    int64_t deterministic;       /* ACL_OPT_DETERMINISTIC captured in the first phase */
    bool repeatable;
    cann_range *ranges;
    int nranges, cap;
};

/* A new, unpublished executor (NULL with a message when out of memory). */
aclOpExecutor *cann_executor_new(const char *fn, const char *run_fn, const cann_exec_ops *ops, void *payload,
                                 uint64_t workspace);

/* Records a present operand's byte range for the phase-2 re-check. */
aclnnStatus cann_executor_add(aclOpExecutor *ex, const cann_operand *op);

/* Registers ex and hands it out; frees it (and its payload) on failure. */
aclnnStatus cann_executor_publish(aclOpExecutor *ex, const char *fn, uint64_t *workspaceSize, aclOpExecutor **executor);

/* Frees an unpublished or unregistered executor and its payload. */
void cann_executor_free(aclOpExecutor *ex);

/* The aclnn status of a failed plan or run (fc_error_message says why): 161002 for a bad argument,
 * else 561000 (a feature the chosen backend lacks, e.g. on the GPU, or an inner error). */
aclnnStatus cann_plan_status(fc_status st);

/* The whole second phase for the function run_fn. */
aclnnStatus cann_executor_run(const char *run_fn, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream);

#endif /* FC_CANN_EXECUTOR_H */
