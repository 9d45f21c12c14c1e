/* The per-batch facts every CUDA plan keeps (plan_facts.h). */
#include "plan_facts.h"

#include <stdio.h>

#include "launch.h"

fc_status fc_cuda_facts_plan(fc_cuda_facts *f, const fc_problem *p, const char *who)
{
    f->planned = p->batch;
    return fc_cuda_upload((void **)&f->dev, p->batch, fc_cuda_facts_bytes(p), who);
}

void fc_cuda_facts_free(fc_cuda_facts *f)
{
    cudaFree(f->dev);
    f->dev = NULL;
}

fc_status fc_cuda_facts_for_run(const fc_cuda_facts *f, const fc_problem *run, void *at, cudaStream_t s, const char *who,
                                fc_batch **out)
{
    *out = f->dev;
    if (!fc_cuda_facts_own(f, run))
        return FC_OK;
    if (!at)
        return fc_fail(FC_ERR_WORKSPACE, "%s: a run with its own per-batch facts needs the plan's workspace", who);
    const cudaError_t err = cudaMemcpyAsync(at, run->batch, fc_cuda_facts_bytes(run), cudaMemcpyHostToDevice, s);
    if (err != cudaSuccess) {
        char what[128];
        snprintf(what, sizeof what, "%s: the run's per-batch facts", who);
        return fc_cuda_err(err, what);
    }
    *out = (fc_batch *)at;
    return FC_OK;
}
