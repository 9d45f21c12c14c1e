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
    bool decode;
    if (op == FC_OP_FORWARD && prob->sparse.data) {
        const char *missing = fc_cuda_sfa_unsupported(prob);
        if (missing)
            *why = missing;
        return missing == NULL;
    }
    if (op == FC_OP_FORWARD)
        return fc_cuda_pick(prob, &decode, why);
    const char *missing = prob->sparse.data ? fc_cuda_sfag_unsupported(prob) : fc_cuda_bwd_unsupported(prob);
    if (missing)
        *why = missing;
    return missing == NULL;
}

/* The operands a run reads or writes, by name, each in its fixed slot (NULL data = absent). */
typedef struct {
    const void *data;
    const char *name;
} fc_operand_ref;

enum { FC_CUDA_OPERANDS = 28 };

static void fc_cuda_operands(const fc_problem *p, fc_operand_ref out[FC_CUDA_OPERANDS])
{
    const fc_operand_ref all[] = {
        {p->q.data, "query"},          {p->k.data, "key"},
        {p->v.data, "value"},          {p->out.data, "out"},
        {p->mask.data, "mask"},        {p->pse.data, "bias (pse)"},
        {p->alibi.slopes, "alibi slopes"}, {p->sink, "sink"},
        {p->drop_bits, "dropout keep bits"}, {p->stats.max, "stats max"},
        {p->stats.sum, "stats sum"},
        {p->dout.data, "output gradient"}, {p->dq.data, "dq"},
        {p->dk.data, "dk"},            {p->dv.data, "dv"},
        {p->dsink, "dsink"},           {p->k.pages.table, "key block table"},
        {p->v.pages.table, "value block table"}, {p->k.dequant.scale, "key dequant scale"},
        {p->k.dequant.offset, "key dequant offset"}, {p->v.dequant.scale, "value dequant scale"},
        {p->v.dequant.offset, "value dequant offset"}, {p->out_quant.scale, "out quant scale"},
        {p->out_quant.offset, "out quant offset"}, {p->sparse.data, "sparse indices"},
        {p->q_rope.data, "query rope"},  {p->k_rope.data, "key rope"},
        {p->k_rope.pages.table, "key rope block table"},
    };
    _Static_assert(sizeof all / sizeof all[0] == FC_CUDA_OPERANDS, "FC_CUDA_OPERANDS counts the slots");
    memcpy(out, all, sizeof all);
}

/* 1: every operand is device memory; 0: none is; −1: a mix (*which names a host operand). */
static int fc_cuda_claims(const fc_problem *prob, const char **which)
{
    const char *why;
    if (!fc_cuda_available(&why))
        return 0;
    fc_operand_ref ops[FC_CUDA_OPERANDS];
    fc_cuda_operands(prob, ops);
    size_t n = 0, device = 0;
    *which = NULL;
    for (size_t i = 0; i < FC_CUDA_OPERANDS; i++) {
        if (!ops[i].data)
            continue;
        n++;
        if (fc_cuda_is_device_pointer(ops[i].data) == 1)
            device++;
        else if (!*which)
            *which = ops[i].name;
    }
    return device == 0 ? 0 : device == n ? 1 : -1;
}

/* A plan's device state: the tiled forward's, the decode's, the sparse forward's, the
 * backward's or the sparse backward's; and which of its planned operands were found in device memory at planning, so that
 * a run that keeps them asks the driver only about the addresses it brings (read-only after
 * planning). */
typedef struct {
    fc_op op;
    fc_cuda_fwd *fwd;
    fc_cuda_dec *dec;
    fc_cuda_sfa *sfa;
    fc_cuda_bwd *bwd;
    fc_cuda_sfag *sfag;
    const void *device[FC_CUDA_OPERANDS]; /* per slot: the planned address when it is device memory */
    bool lists_device;                    /* every planned key/value list element is */
} fc_cuda_state;

/* The first key/value list element that is not device memory; -1 when none is (or no lists). */
static int64_t fc_cuda_list_host_element(const fc_problem *p)
{
    for (int64_t b = 0; p->k.batch_data && b < p->B; b++)
        if (fc_cuda_is_device_pointer(p->k.batch_data[b]) != 1 || fc_cuda_is_device_pointer(p->v.batch_data[b]) != 1)
            return b;
    return -1;
}

/* What fc_cuda_check_run may take as checked: the planned operands in device memory.  (An
 * address found to be device memory at planning stays so: CUDA reserves device address ranges
 * apart from host allocations.) */
static void fc_cuda_note_device(fc_cuda_state *s, const fc_problem *p)
{
    fc_operand_ref ops[FC_CUDA_OPERANDS];
    fc_cuda_operands(p, ops);
    for (size_t i = 0; i < FC_CUDA_OPERANDS; i++)
        s->device[i] = ops[i].data && fc_cuda_is_device_pointer(ops[i].data) == 1 ? ops[i].data : NULL;
    s->lists_device = fc_cuda_list_host_element(p) < 0;
}

static void fc_cuda_destroy(void *state)
{
    fc_cuda_state *s = state;
    if (!s)
        return;
    fc_cuda_fwd_destroy(s->fwd);
    fc_cuda_dec_destroy(s->dec);
    fc_cuda_sfa_destroy(s->sfa);
    fc_cuda_bwd_destroy(s->bwd);
    fc_cuda_sfag_destroy(s->sfag);
    free(s);
}

static fc_status fc_cuda_plan(fc_plan *plan, const fc_options *options)
{
    (void)options;
    const bool sparse = plan->prob.sparse.data != NULL;
    fc_cuda_state *s = calloc(1, sizeof *s);
    if (!s)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_plan: out of host memory");
    s->op = plan->op;
    bool decode = false;
    const char *why;
    if (plan->op == FC_OP_FORWARD && !sparse)
        fc_cuda_pick(&plan->prob, &decode, &why);
    const fc_status st = plan->op != FC_OP_FORWARD ? (sparse ? fc_cuda_sfag_plan(&plan->prob, &s->sfag)
                                                             : fc_cuda_bwd_plan(&plan->prob, &s->bwd))
                         : sparse                  ? fc_cuda_sfa_plan(&plan->prob, &s->sfa)
                         : decode                  ? fc_cuda_dec_plan(&plan->prob, &s->dec)
                                                   : fc_cuda_fwd_plan(&plan->prob, &s->fwd);
    if (st != FC_OK) {
        fc_cuda_destroy(s);
        return st;
    }
    fc_cuda_note_device(s, &plan->prob);
    plan->state = s;
    return FC_OK;
}

static size_t fc_cuda_workspace_size(const fc_plan *plan)
{
    const fc_cuda_state *s = plan->state;
    /* the forward's planned per-batch facts and tile order live in the plan's device state, a
     * run's own facts in its workspace; the backward needs D = rowsum(dO ∘ O) per query row and
     * head; the decode its splits' (O, m, l) */
    return s->dec                    ? fc_cuda_dec_workspace(s->dec, &plan->prob)
           : s->sfa                 ? fc_cuda_sfa_workspace(&plan->prob, plan->lengths_bindable)
           : s->sfag                ? fc_cuda_sfag_workspace(s->sfag)
           : s->op == FC_OP_FORWARD ? fc_cuda_fwd_workspace(&plan->prob, plan->lengths_bindable)
                                    : fc_cuda_bwd_workspace(s->bwd, &plan->prob);
}

/* Every operand of the run is device memory: the driver is asked only about addresses the plan
 * was not made with (a run's bindings), each once. */
static fc_status fc_cuda_check_run(const fc_plan *plan, const fc_problem *run)
{
    const fc_cuda_state *s = plan->state;
    fc_operand_ref ops[FC_CUDA_OPERANDS];
    fc_cuda_operands(run, ops);
    for (size_t i = 0; i < FC_CUDA_OPERANDS; i++) {
        bool known = !ops[i].data || ops[i].data == s->device[i];
        for (size_t j = 0; j < i && !known; j++)
            known = ops[j].data == ops[i].data; /* checked in an earlier slot */
        if (!known && fc_cuda_is_device_pointer(ops[i].data) != 1)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_check_data: %s is not CUDA device memory (the plan runs on the CUDA backend)",
                           ops[i].name);
    }
    /* the lists are the plan's (a run cannot rebind them) */
    const bool lists_planned = run->k.batch_data == plan->prob.k.batch_data && run->v.batch_data == plan->prob.v.batch_data;
    const int64_t host = lists_planned && s->lists_device ? -1 : fc_cuda_list_host_element(run);
    if (host >= 0)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_check_data: key/value list element %lld is not CUDA device memory",
                       (long long)host);
    /* block-table entries are checked on the GPU by the decode kernels and the tiled forward (a bad
     * one shows here, at the next run), by the sparse forward's and backward's runs before their
     * launches */
    return s->dec ? fc_cuda_dec_check(s->dec, run) : s->fwd ? fc_cuda_fwd_check(s->fwd, run) : FC_OK;
}

/* A run's kv lengths are device memory: the decode kernels read them (the core binds the run
 * without them, host_memory being false, after fc_plan_check_kv_lens).  The other kernels take
 * none. */
static fc_status fc_cuda_check_kv_lens(const fc_plan *plan, const fc_bindings *bind)
{
    const fc_cuda_state *s = plan->state;
    if (!bind->kv_lens)
        return FC_OK;
    if (fc_cuda_is_device_pointer(bind->kv_lens) != 1)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_check_data: io.kv_lens is not CUDA device memory (the plan runs on the CUDA backend)");
    if (!s->dec)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_execute: io.kv_lens: the CUDA backend's tiled forward takes no run-time kv "
                                       "lengths (its decode kernels do: few query rows per kv head)");
    return FC_OK;
}

/* The core calls this before every execute (fc_plan_execute_on). */
static fc_status fc_cuda_check_data(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind)
{
    const fc_status st = fc_cuda_check_kv_lens(plan, bind);
    return st == FC_OK ? fc_cuda_check_run(plan, run) : st;
}

/* The decode kernels and the tiled forward report a bad entry (or run-time kv length) through the
 * plan's host-mapped report; the sparse runs check theirs before they launch. */
static fc_status fc_cuda_check_runs(const fc_plan *plan, void *stream, bool wait)
{
    const fc_cuda_state *s = plan->state;
    if (wait) {
        const fc_status st = fc_cuda_stream_wait(stream);
        if (st != FC_OK)
            return st;
    }
    return s->dec ? fc_cuda_dec_check(s->dec, &plan->prob) : s->fwd ? fc_cuda_fwd_check(s->fwd, &plan->prob) : FC_OK;
}

/* A run with its own lengths keeps the planned facts in `run` (fc_plan_bind, host_memory being
 * false): the kernels' runs derive its facts from bind->lengths into its workspace
 * (plan_facts.h), a fixed chunk at a time, allocating nothing. */
static fc_status fc_cuda_execute(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind, void *workspace,
                                 void *stream)
{
    const fc_cuda_state *s = plan->state;
    const fc_lengths *l = &bind->lengths;
    const fc_cuda_lengths lens = {&plan->rule, l->sq || l->skv || l->kv_lo ? l : NULL};
    return s->dec                  ? fc_cuda_dec_run(s->dec, run, lens, bind->kv_lens, workspace, stream)
           : s->sfa                 ? fc_cuda_sfa_run(s->sfa, run, lens, workspace, stream)
           : s->sfag                ? fc_cuda_sfag_run(s->sfag, run, lens, workspace, stream)
           : s->op == FC_OP_FORWARD ? fc_cuda_fwd_run(s->fwd, run, lens, workspace, stream)
                                    : fc_cuda_bwd_run(s->bwd, run, lens, workspace, stream);
}

/* Visible scores: a sparse problem's index rows are device memory, read back to count them. */
static double fc_cuda_visible(const fc_problem *prob)
{
    return prob->sparse.data ? fc_cuda_sfa_visible(prob) : fc_host_visible(prob);
}

static const char *fc_cuda_variant(void) { return "cuda-mma-sm80"; }
static bool fc_cuda_force_variant(const char *name) { return name && strcmp(name, "cuda-mma-sm80") == 0; }

const fc_backend_ops fc_cuda_backend = {
    .name = "cuda",
    .id = FC_BACKEND_CUDA,
    .supports = fc_cuda_supports,
    .claims = fc_cuda_claims,
    .plan = fc_cuda_plan,
    .workspace_size = fc_cuda_workspace_size,
    .workspace_alloc = fc_cuda_workspace_alloc,
    .workspace_free = fc_cuda_workspace_free,
    .check_data = fc_cuda_check_data,
    .check_runs = fc_cuda_check_runs,
    .execute = fc_cuda_execute,
    .visible = fc_cuda_visible,
    .variant = fc_cuda_variant,
    .force_variant = fc_cuda_force_variant,
    .destroy = fc_cuda_destroy,
};
