#include "sfa_exec.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/plan.h"
#include "cann/common/errmsg.h"
#include "cann/common/executor.h"
#include "sfa_lengths.h"
#include "sfa_lower.h"
#include "sfa_outputs.h"

typedef struct sfa_payload {
    bool noop;
    fc_plan *plan;                /* planned for bounding lengths; runs bind the lengths read */
    sfa_geom g;
    cann_operand act_q, act_kv, table; /* device data read per run (absent: present = false) */
    cann_operand smax, ssum;      /* statistics outputs scattered from the workspace (when strided) */
    size_t plan_bytes;            /* workspace reserved for the plan */
} sfa_payload;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static size_t stage_bytes(const sfa_payload *pl)
{
    return pl->smax.present ? 64 + 2 * (size_t)pl->smax.numel * sizeof(float) : 0;
}

static aclnnStatus plan_failed(const char *fn, fc_status st)
{
    return cann_fail(cann_plan_status(st), "%s: %s", fn, fc_error_message());
}

/* ---- second phase ------------------------------------------------------------------------------- */

typedef struct run_data {
    int64_t *sq, *skv;
    int32_t *table;
} run_data;

/* Host copies of the device data read per run (after the stream's earlier work). */
typedef struct host_data {
    cann_operand act_q, act_kv, table;
    void *buf[3];
} host_data;

static aclnnStatus copy_device_data(const sfa_payload *pl, const char *fn, void *stream, host_data *h)
{
    aclnnStatus st = cann_operand_on_host(fn, &pl->act_q, stream, &h->act_q, &h->buf[0]);
    if (st == ACLNN_SUCCESS)
        st = cann_operand_on_host(fn, &pl->act_kv, stream, &h->act_kv, &h->buf[1]);
    if (st == ACLNN_SUCCESS && pl->g.lkv == SFA_PA_BSND)
        st = cann_operand_on_host(fn, &pl->table, stream, &h->table, &h->buf[2]);
    return st;
}

/* Parses and checks the host copies into d. */
static aclnnStatus read_lengths(const sfa_payload *pl, const char *fn, const host_data *h, run_data *d)
{
    const sfa_geom *g = &pl->g;
    const size_t B = (size_t)g->B;
    d->sq = malloc(B * sizeof *d->sq);
    d->skv = malloc(B * sizeof *d->skv);
    d->table = g->lkv == SFA_PA_BSND ? malloc(B * (size_t)g->width * sizeof *d->table) : NULL;
    if (!d->sq || !d->skv || (g->lkv == SFA_PA_BSND && !d->table))
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the lengths of %lld batches", fn, (long long)g->B);
    aclnnStatus st = sfa_read_lengths(fn, &h->act_q, g->lq, g->B, g->S1, g->T1, d->sq);
    if (st == ACLNN_SUCCESS)
        st = sfa_read_lengths(fn, &h->act_kv, g->lkv, g->B, g->kv_cap, g->T2, d->skv);
    if (st == ACLNN_SUCCESS && d->table)
        st = sfa_read_block_table(fn, &h->table, d->skv, g, d->table);
    return st;
}

/* Reads and checks the lengths and the block table; nothing is written to any output. */
static aclnnStatus read_device_data(const sfa_payload *pl, const char *fn, void *stream, run_data *d)
{
    host_data h = {0};
    aclnnStatus st = copy_device_data(pl, fn, stream, &h);
    if (st == ACLNN_SUCCESS)
        st = read_lengths(pl, fn, &h, d);
    for (int k = 0; k < 3; k++)
        free(h.buf[k]);
    return st;
}

static aclnnStatus sfa_run(void *payload, void *workspace, uint64_t bytes, void *stream, const char *fn)
{
    const sfa_payload *pl = payload;
    (void)bytes;
    if (pl->noop)
        return ACLNN_SUCCESS;
    run_data d = {0};
    float *stats = pl->smax.present ? (float *)align64((uintptr_t)workspace + pl->plan_bytes) : NULL;
    aclnnStatus st = read_device_data(pl, fn, stream, &d);
    if (st == ACLNN_SUCCESS) {
        const fc_bindings run = {.lengths = {.sq = d.sq, .skv = d.skv}, .block_table = d.table,
                                 .stats_max = stats, .stats_sum = stats ? stats + pl->smax.numel : NULL};
        const fc_status fs = fc_plan_execute_on(pl->plan, &run, workspace, pl->plan_bytes, stream);
        if (fs != FC_OK)
            st = plan_failed(fn, fs);
    }
    if (st == ACLNN_SUCCESS && stats) {
        sfa_scatter_floats(&pl->smax, stats);
        sfa_scatter_floats(&pl->ssum, stats + pl->smax.numel);
    }
    free(d.sq);
    free(d.skv);
    free(d.table);
    return st;
}

static void sfa_release(void *payload)
{
    sfa_payload *pl = payload;
    if (pl)
        fc_plan_free(pl->plan);
    free(pl);
}

static const cann_exec_ops sfa_ops = {.run = sfa_run, .release = sfa_release};

/* ---- first phase -------------------------------------------------------------------------------- */

/* The plan: the template with the per-batch facts of the bounding lengths (sfa_lower.h), whose
 * workspace then bounds every run's; each run binds the lengths it reads. */
static aclnnStatus make_plan(sfa_payload *pl, const sfa_state *s, const fc_problem *tmpl)
{
    const size_t B = (size_t)pl->g.B;
    fc_problem p = *tmpl;
    int64_t *len = malloc(2 * B * sizeof *len);
    p.batch = calloc(B ? B : 1, sizeof *p.batch);
    if (!len || !p.batch) {
        free(len);
        free(p.batch);
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batches", s->fn, (long long)pl->g.B);
    }
    sfa_bound_lengths(&pl->g, len, len + B);
    const fc_batch_rule rule = sfa_batch_rule(&pl->g);
    const fc_lengths bound = {.sq = len, .skv = len + B};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &bound, &p, &tot);
    free(len);
    const fc_options opt = {.backend = FC_BACKEND_DEFAULT}; /* the default backend, as for every operator */
    const fc_status st = fc_plan_from_problem(&p, &rule, false, s->c->backward ? FC_OP_BACKWARD : FC_OP_FORWARD, &opt,
                                              &pl->plan); /* owns p.batch from here */
    if (st != FC_OK)
        return plan_failed(s->fn, st);
    pl->plan_bytes = align64(pl->plan->workspace);
    return ACLNN_SUCCESS;
}

/* What the run needs besides the template: device data and staged statistics. */
static void keep_operands(sfa_payload *pl, const sfa_state *s)
{
    pl->act_q = s->t[SFA_ACT_Q];
    pl->act_kv = s->t[SFA_ACT_KV];
    pl->table = s->t[SFA_BLOCK_TABLE];
    if (!s->c->backward && s->c->return_lse &&
        (!sfa_stats_in_place(&s->t[SFA_SMAX]) || !sfa_stats_in_place(&s->t[SFA_SSUM]))) {
        pl->smax = s->t[SFA_SMAX];
        pl->ssum = s->t[SFA_SSUM];
    }
}

aclnnStatus sfa_make_executor(const sfa_state *s, const fc_problem *tmpl, uint64_t *workspaceSize,
                              aclOpExecutor **executor)
{
    sfa_payload *pl = calloc(1, sizeof *pl);
    if (!pl)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory", s->fn);
    pl->g = s->g;
    keep_operands(pl, s);
    aclnnStatus st = make_plan(pl, s, tmpl);
    if (st != ACLNN_SUCCESS) {
        sfa_release(pl);
        return st;
    }
    aclOpExecutor *ex = cann_executor_new(s->fn, s->c->sig->run_fn, &sfa_ops, pl, pl->plan_bytes + stage_bytes(pl));
    if (!ex)
        return ACLNN_ERR_INNER;
    for (int id = 0; id < SFA_NPARAMS; id++)
        if ((st = cann_executor_add(ex, &s->t[id])) != ACLNN_SUCCESS) {
            cann_executor_free(ex);
            return st;
        }
    return cann_executor_publish(ex, s->fn, workspaceSize, executor);
}

aclnnStatus sfa_make_noop_executor(const char *fn, const char *run_fn, uint64_t *workspaceSize,
                                   aclOpExecutor **executor)
{
    sfa_payload *pl = calloc(1, sizeof *pl);
    if (!pl)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory", fn);
    pl->noop = true;
    aclOpExecutor *ex = cann_executor_new(fn, run_fn, &sfa_ops, pl, 0);
    return ex ? cann_executor_publish(ex, fn, workspaceSize, executor) : ACLNN_ERR_INNER;
}
