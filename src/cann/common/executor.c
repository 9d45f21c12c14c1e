#include "executor.h"

#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "runtime/alloc.h"
#include "runtime/device.h"
#include "runtime/registry.h"

static const fc_rt_kind kind_executor = {"aclOpExecutor"};

aclOpExecutor *cann_executor_new(const char *fn, const char *run_fn, const cann_exec_ops *ops, void *payload,
                                 uint64_t workspace)
{
    aclOpExecutor *ex = calloc(1, sizeof *ex);
    if (!ex) {
        ops->release(payload);
        cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the executor", fn);
        return NULL;
    }
    ex->run_fn = run_fn;
    ex->ops = ops;
    ex->payload = payload;
    ex->workspace = workspace;
    ex->deterministic = fc_rt_option_get(ACL_OPT_DETERMINISTIC);
    return ex;
}

void cann_executor_free(aclOpExecutor *ex)
{
    if (!ex)
        return;
    ex->ops->release(ex->payload);
    free(ex->ranges);
    free(ex);
}

aclnnStatus cann_executor_add(aclOpExecutor *ex, const cann_operand *op)
{
    if (!op->present || op->numel == 0)
        return ACLNN_SUCCESS;
    if (ex->nranges == ex->cap) {
        const int cap = ex->cap ? ex->cap * 2 : 16;
        cann_range *grown = realloc(ex->ranges, (size_t)cap * sizeof *grown);
        if (!grown)
            return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the executor", op->fn);
        ex->ranges = grown;
        ex->cap = cap;
    }
    ex->ranges[ex->nranges++] = (cann_range){op->name, op->base, op->lo, op->bytes, op->tracked};
    return ACLNN_SUCCESS;
}

aclnnStatus cann_executor_publish(aclOpExecutor *ex, const char *fn, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!fc_rt_registry_add(ex, &kind_executor)) {
        cann_executor_free(ex);
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the handle registry", fn);
    }
    *workspaceSize = ex->workspace;
    *executor = ex;
    return ACLNN_SUCCESS;
}

/* Every check of §6.6 step 2 after the executor itself, in order. */
static aclnnStatus run_checks(const char *fn, void *workspace, uint64_t size, const aclOpExecutor *ex,
                              aclrtStream stream, void **native)
{
    if (ex->workspace > 0 && !workspace)
        return cann_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: workspace is NULL, expected %llu bytes of device memory", fn,
                         (unsigned long long)ex->workspace);
    if (size < ex->workspace)
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: workspaceSize must be at least %llu bytes, got %llu", fn,
                         (unsigned long long)ex->workspace, (unsigned long long)size);
    fc_rt_alloc a;
    if (ex->workspace > 0 && fc_rt_alloc_find(workspace, &a) &&
        ex->workspace > a.size - ((uintptr_t)workspace - a.base))
        return cann_fail(ACLNN_ERR_PARAM_INVALID,
                         "%s: workspace must hold %llu bytes, got %p with %zu bytes left in its %zu-byte allocation", fn,
                         (unsigned long long)ex->workspace, workspace,
                         (size_t)(a.size - ((uintptr_t)workspace - a.base)), a.size);
    if (fc_rt_stream_native((const fc_rt_stream *)stream, native) != FC_RT_OK)
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: stream %p is not a live stream (destroyed or foreign)", fn, stream);
    for (int k = 0; k < ex->nranges; k++) {
        const cann_range *r = &ex->ranges[k];
        const aclnnStatus st = cann_operand_recheck(fn, r->name, r);
        if (st != ACLNN_SUCCESS)
            return st;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_executor_run(const char *run_fn, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream)
{
    if (!executor)
        return cann_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", run_fn);
    if (!fc_rt_registry_has(executor, &kind_executor))
        return cann_fail(ACLNN_ERR_PARAM_INVALID,
                         "%s: executor %p is not a live aclOpExecutor (already run, destroyed, or foreign)", run_fn,
                         (void *)executor);
    if (strcmp(executor->run_fn, run_fn) != 0)
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: executor was created for %s, not for this function", run_fn,
                         executor->run_fn);
    /* A single-use executor is consumed by this call whatever the outcome; taking it out of the
     * registry first also makes a concurrent second run fail cleanly. */
    const bool single = !executor->repeatable;
    if (single && !fc_rt_registry_remove(executor, &kind_executor))
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: executor %p is not a live aclOpExecutor (already run)", run_fn,
                         (void *)executor);
    void *native = NULL;
    aclnnStatus st = run_checks(run_fn, workspace, workspaceSize, executor, stream, &native);
    if (st == ACLNN_SUCCESS)
        st = executor->ops->run(executor->payload, workspace, workspaceSize, native, run_fn);
    if (single && st == ACLNN_SUCCESS && executor->ops->finish) /* its release would wait all the same */
        st = executor->ops->finish(executor->payload, native, true, run_fn);
    if (single) {
        cann_executor_free(executor);
        if (st != ACLNN_SUCCESS) /* say so now: a retry can only report a dead handle */
            cann_fail_append("; the single-use executor %p is consumed by this failed call: call %sGetWorkspaceSize "
                             "again for a new one (aclSetAclOpExecutorRepeatable keeps an executor across runs)",
                             (void *)executor, run_fn);
    }
    return st;
}

aclnnStatus cann_plan_status(fc_status st)
{
    /* 161002 for the caller's mistakes; anything else — a feature the backend of the operands'
     * memory lacks (the GPU's), exhaustion — is flashc not completing (§0.5: no other 561xxx) */
    return st == FC_ERR_INVALID_ARG ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_INNER;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    static const char fn[] = "aclSetAclOpExecutorRepeatable";
    if (!executor)
        return cann_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", fn);
    if (!fc_rt_registry_has(executor, &kind_executor))
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: executor %p is not a live aclOpExecutor (already run, destroyed, or foreign)",
                         fn, (void *)executor);
    executor->repeatable = true;
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (!executor)
        return ACLNN_SUCCESS;
    if (!fc_rt_registry_remove(executor, &kind_executor))
        return cann_fail(ACLNN_ERR_PARAM_INVALID,
                         "aclDestroyAclOpExecutor: executor %p is not a live aclOpExecutor (already run, destroyed, or foreign)",
                         (void *)executor);
    aclnnStatus st = ACLNN_SUCCESS; /* a repeatable executor's last runs: their report goes with it */
    if (executor->ops->finish) {
        if (fc_rt_device_sync() != FC_RT_OK)
            st = cann_fail(ACLNN_ERR_RUNTIME_ERROR, "aclDestroyAclOpExecutor: waiting for the device: %s", fc_rt_message());
        else
            st = executor->ops->finish(executor->payload, NULL, false, "aclDestroyAclOpExecutor");
    }
    cann_executor_free(executor);
    return st;
}

aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }
