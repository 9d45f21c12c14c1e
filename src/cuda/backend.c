/*
 * The CUDA backend's registration (fc_backend_ops): which problems it takes (and why not), and the
 * glue from plans and runs to the device code (the .cu files beside this one).  A problem it cannot run is
 * refused at planning with the feature named — never computed on the CPU behind the caller's back.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/backend.h"
#include "../core/error.h"
#include "../core/host_data.h"
#include "cuda.h"

/* The plan's state: one of the two forward kernels. */
typedef struct {
    fc_cuda_fwd *fwd;
    fc_cuda_dec *dec;
} fc_cuda_state;

/* Which kernel runs a forward: the decode kernel when it takes the problem (few query rows per kv
 * head), else the tiled forward; false with *why when neither does (the decode kernel's reason
 * when the problem's storage is one only it reads). */
static bool fc_cuda_pick(const fc_problem *prob, bool *decode, const char **why)
{
    const char *dec = fc_cuda_dec_unsupported(prob);
    *decode = dec == NULL;
    if (*decode)
        return true;
    const char *fwd = fc_cuda_fwd_unsupported(prob);
    *why = fc_cuda_dec_only(prob) ? dec : fwd;
    return fwd == NULL;
}

static bool fc_cuda_supports(const fc_problem *prob, fc_op op, const char **why)
{
    if (!fc_cuda_available(why))
        return false;
    if (op != FC_OP_FORWARD) {
        *why = "the backward is not on the GPU yet";
        return false;
    }
    bool decode;
    return fc_cuda_pick(prob, &decode, why);
}

/* The operands a run reads or writes, by name (NULL data = absent). */
typedef struct {
    const void *data;
    const char *name;
} fc_operand_ref;

static size_t fc_cuda_operands(const fc_problem *p, fc_operand_ref *out)
{
    const fc_operand_ref all[] = {
        {p->q.data, "query"},          {p->k.data, "key"},
        {p->v.data, "value"},          {p->out.data, "out"},
        {p->mask.data, "mask"},        {p->pse.data, "bias (pse)"},
        {p->alibi.slopes, "alibi slopes"}, {p->sink, "sink"},
        {p->drop_bits, "dropout keep bits"}, {p->stats.max, "stats max"},
        {p->stats.sum, "stats sum"},   {p->k.pages.table, "key block table"},
        {p->v.pages.table, "value block table"}, {p->k.dequant.scale, "key dequant scale"},
        {p->k.dequant.offset, "key dequant offset"}, {p->v.dequant.scale, "value dequant scale"},
        {p->v.dequant.offset, "value dequant offset"}, {p->out_quant.scale, "out quant scale"},
        {p->out_quant.offset, "out quant offset"},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i].data)
            out[n++] = all[i];
    return n;
}

/* 1: every operand is device memory; 0: none is; −1: a mix (*which names a host operand). */
static int fc_cuda_claims(const fc_problem *prob, const char **which)
{
    const char *why;
    if (!fc_cuda_available(&why))
        return 0;
    fc_operand_ref ops[24];
    const size_t n = fc_cuda_operands(prob, ops);
    size_t device = 0;
    *which = NULL;
    for (size_t i = 0; i < n; i++) {
        if (fc_cuda_is_device_pointer(ops[i].data) == 1)
            device++;
        else if (!*which)
            *which = ops[i].name;
    }
    return device == 0 ? 0 : device == n ? 1 : -1;
}

static fc_status fc_cuda_plan(fc_plan *plan, const fc_options *options)
{
    (void)options;
    if (plan->prob.drop_philox) /* the kernels read caller keep bits only */
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_plan: generated dropout (fc_dropout.generate) is not in the CUDA backend "
                                       "yet; pass keep_bits");
    fc_cuda_state *st = calloc(1, sizeof *st);
    if (!st)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_plan: out of host memory");
    plan->state = st;
    bool decode;
    const char *why;
    fc_cuda_pick(&plan->prob, &decode, &why);
    return decode ? fc_cuda_dec_plan(&plan->prob, &st->dec) : fc_cuda_fwd_plan(&plan->prob, &st->fwd);
}

static size_t fc_cuda_workspace_size(const fc_plan *plan)
{
    const fc_cuda_state *st = plan->state;
    /* the tiled forward keeps its per-batch facts and tile order in the plan's device state */
    return st->dec ? fc_cuda_dec_workspace(st->dec, &plan->prob) : 0;
}

static fc_status fc_cuda_check_data(const fc_plan *plan, const fc_problem *run)
{
    fc_operand_ref ops[24];
    const size_t n = fc_cuda_operands(run, ops);
    for (size_t i = 0; i < n; i++)
        if (fc_cuda_is_device_pointer(ops[i].data) != 1)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_check_data: %s is not CUDA device memory (the plan runs on the CUDA backend)",
                           ops[i].name);
    for (int64_t b = 0; run->k.batch_data && b < run->B; b++)
        if (fc_cuda_is_device_pointer(run->k.batch_data[b]) != 1 || fc_cuda_is_device_pointer(run->v.batch_data[b]) != 1)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_check_data: key/value list element %lld is not CUDA device memory",
                           (long long)b);
    /* block-table entries are checked on the GPU by the decode kernels; a bad one shows here */
    const fc_cuda_state *st = plan->state;
    return st->dec ? fc_cuda_dec_check(st->dec, run) : FC_OK;
}

static fc_status fc_cuda_execute(const fc_plan *plan, const fc_problem *run, void *workspace, void *stream)
{
    const fc_cuda_state *st = plan->state;
    return st->dec ? fc_cuda_dec_run(st->dec, run, workspace, stream) : fc_cuda_fwd_run(st->fwd, run, stream);
}

static const char *fc_cuda_variant(void) { return "cuda-mma-sm80"; }
static bool fc_cuda_force_variant(const char *name) { return name && strcmp(name, "cuda-mma-sm80") == 0; }
static void fc_cuda_destroy(void *state)
{
    fc_cuda_state *st = state;
    fc_cuda_fwd_destroy(st->fwd);
    fc_cuda_dec_destroy(st->dec);
    free(st);
}

const fc_backend_ops fc_cuda_backend = {
    .name = "cuda",
    .id = FC_BACKEND_CUDA,
    .supports = fc_cuda_supports,
    .claims = fc_cuda_claims,
    .plan = fc_cuda_plan,
    .workspace_size = fc_cuda_workspace_size,
    .check_data = fc_cuda_check_data,
    .execute = fc_cuda_execute,
    .visible = fc_host_visible,
    .variant = fc_cuda_variant,
    .force_variant = fc_cuda_force_variant,
    .destroy = fc_cuda_destroy,
};
