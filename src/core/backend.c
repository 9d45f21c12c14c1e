/* The list of built backends and the one place that chooses between them. */
#include "backend.h"

#include "error.h"

static const fc_backend_ops *const fc_backends[] = {
    &fc_cpu_backend,
#ifdef FLASHC_CUDA
    &fc_cuda_backend,
#endif
};

static const char *fc_backend_label(fc_backend id)
{
    switch (id) {
    case FC_BACKEND_CPU: return "CPU";
    case FC_BACKEND_CUDA: return "CUDA";
    case FC_BACKEND_DEFAULT: break;
    }
    return "default";
}

const fc_backend_ops *fc_backend_get(fc_backend id)
{
    for (size_t i = 0; i < sizeof fc_backends / sizeof fc_backends[0]; i++)
        if (fc_backends[i]->id == id)
            return fc_backends[i];
    return NULL;
}

/* FC_BACKEND_DEFAULT: the backend whose memory the operands are, else the CPU (host memory). */
static fc_status fc_backend_default(const fc_problem *prob, fc_backend *out)
{
    *out = FC_BACKEND_CPU;
    for (size_t i = 0; i < sizeof fc_backends / sizeof fc_backends[0]; i++) {
        if (!fc_backends[i]->claims)
            continue;
        const char *operand = "an operand";
        const int owned = fc_backends[i]->claims(prob, &operand);
        if (owned < 0)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_backend_select: %s is host memory while other operands are %s device memory",
                           operand, fc_backend_label(fc_backends[i]->id));
        if (owned > 0) {
            *out = fc_backends[i]->id;
            break;
        }
    }
    return FC_OK;
}

fc_status fc_backend_select(const fc_options *options, const fc_problem *prob, fc_op op, const fc_backend_ops **out)
{
    fc_backend id = options ? options->backend : FC_BACKEND_DEFAULT;
    const bool by_memory = id == FC_BACKEND_DEFAULT;
    fc_status st;
    if (by_memory && (st = fc_backend_default(prob, &id)) != FC_OK)
        return st;
    const fc_backend_ops *be = fc_backend_get(id);
    if (!be)
        return fc_fail(FC_ERR_BACKEND, "fc_backend_select: options.backend: the %s backend is not built in",
                       fc_backend_label(id));
    const char *why = "";
    if (!be->supports(prob, op, &why)) {
        if (by_memory) /* the operands' memory chose it, e.g. a face's tensors in GPU memory */
            return fc_fail(FC_ERR_BACKEND, "fc_backend_select: the operands are %s memory, and the %s backend cannot run "
                           "this problem: %s", id == FC_BACKEND_CPU ? "host" : "device", fc_backend_label(id), why);
        return fc_fail(FC_ERR_BACKEND, "fc_backend_select: options.backend: the %s backend cannot run this problem: %s",
                       fc_backend_label(id), why);
    }
    *out = be;
    return FC_OK;
}
