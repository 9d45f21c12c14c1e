/* The list of built backends and the one place that chooses between them. */
#include "backend.h"

#include "error.h"

static const fc_backend_ops *const fc_backends[] = {
    &fc_cpu_backend,
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

fc_status fc_backend_select(const fc_options *options, const fc_problem *prob, fc_op op, const fc_backend_ops **out)
{
    fc_backend id = options ? options->backend : FC_BACKEND_DEFAULT;
    if (id == FC_BACKEND_DEFAULT)
        id = FC_BACKEND_CPU;
    const fc_backend_ops *be = fc_backend_get(id);
    if (!be)
        return fc_fail(FC_ERR_BACKEND, "fc_backend_select: options.backend: the %s backend is not built in",
                       fc_backend_label(id));
    const char *why = "";
    if (!be->supports(prob, op, &why))
        return fc_fail(FC_ERR_BACKEND, "fc_backend_select: options.backend: the %s backend cannot run this problem: %s",
                       fc_backend_label(id), why);
    *out = be;
    return FC_OK;
}
