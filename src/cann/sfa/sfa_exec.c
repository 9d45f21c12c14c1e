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
    fc_op op;
    fc_problem tmpl;              /* batch facts and block table filled per run */
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

/* A plan of the template with these lengths (threads 0: the default count). */
static aclnnStatus make_plan(const sfa_payload *pl, const char *fn, const int64_t *sq, const int64_t *skv,
                             const int32_t *table, float *stats, int threads, fc_plan **plan)
{
    fc_problem p = pl->tmpl;
    p.batch = calloc((size_t)pl->g.B, sizeof *p.batch);
    if (!p.batch)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batch records", fn, (long long)pl->g.B);
    sfa_lower_batches(&pl->g, sq, skv, &p);
    if (table) {
        p.k.pages.table = p.v.pages.table = table;
        if (p.Dr)
            p.k_rope.pages.table = table;
    }
    if (stats) {
        p.stats.max = stats;
        p.stats.sum = stats + pl->smax.numel;
    }
    const fc_options opt = {.backend = FC_BACKEND_DEFAULT, .threads = threads}; /* the default backend, as for every operator */
    const fc_status st = fc_plan_from_problem(&p, pl->op, &opt, plan);
    return st == FC_OK ? ACLNN_SUCCESS : plan_failed(fn, st);
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

/* The plan for the lengths read, within the declared workspace: a thread count raised since the
 * first phase could need more per-thread space, so the fallback is one thread (same results). */
static aclnnStatus plan_run(const sfa_payload *pl, const char *fn, const run_data *d, float *stats, fc_plan **plan)
{
    aclnnStatus st = make_plan(pl, fn, d->sq, d->skv, d->table, stats, 0, plan);
    if (st == ACLNN_SUCCESS && (*plan)->workspace > pl->plan_bytes) {
        fc_plan_free(*plan);
        *plan = NULL;
        st = make_plan(pl, fn, d->sq, d->skv, d->table, stats, 1, plan);
    }
    if (st == ACLNN_SUCCESS && (*plan)->workspace > pl->plan_bytes)
        st = cann_fail(ACLNN_ERR_INNER, "%s: internal error: the plan needs %zu workspace bytes, %zu were reserved", fn,
                       (*plan)->workspace, pl->plan_bytes);
    return st;
}

static aclnnStatus sfa_run(void *payload, void *workspace, uint64_t bytes, void *stream, const char *fn)
{
    const sfa_payload *pl = payload;
    (void)bytes;
    if (pl->noop)
        return ACLNN_SUCCESS;
    run_data d = {0};
    fc_plan *plan = NULL;
    float *stats = pl->smax.present ? (float *)align64((uintptr_t)workspace + pl->plan_bytes) : NULL;
    aclnnStatus st = read_device_data(pl, fn, stream, &d);
    if (st == ACLNN_SUCCESS)
        st = plan_run(pl, fn, &d, stats, &plan);
    fc_status fs;
    if (st == ACLNN_SUCCESS && (fs = fc_plan_execute_on(plan, &plan->prob, workspace, pl->plan_bytes, stream)) != FC_OK)
        st = plan_failed(fn, fs);
    if (st == ACLNN_SUCCESS && stats) {
        sfa_scatter_floats(&pl->smax, stats);
        sfa_scatter_floats(&pl->ssum, stats + pl->smax.numel);
    }
    fc_plan_free(plan);
    free(d.sq);
    free(d.skv);
    free(d.table);
    return st;
}

static void sfa_release(void *payload) { free(payload); }

static const cann_exec_ops sfa_ops = {sfa_run, sfa_release};

/* ---- first phase -------------------------------------------------------------------------------- */

/* Workspace of the plan for the bounding lengths (sfa_lower.h). */
static aclnnStatus bound_workspace(sfa_payload *pl, const char *fn)
{
    const size_t B = (size_t)pl->g.B;
    int64_t *sq = malloc(B * sizeof *sq), *skv = malloc(B * sizeof *skv);
    aclnnStatus st = ACLNN_SUCCESS;
    fc_plan *plan = NULL;
    if (!sq || !skv)
        st = cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batches", fn, (long long)pl->g.B);
    if (st == ACLNN_SUCCESS) {
        sfa_bound_lengths(&pl->g, sq, skv);
        st = make_plan(pl, fn, sq, skv, NULL, NULL, 0, &plan);
    }
    if (st == ACLNN_SUCCESS)
        pl->plan_bytes = align64(plan->workspace);
    fc_plan_free(plan);
    free(sq);
    free(skv);
    return st;
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
    pl->op = s->c->backward ? FC_OP_BACKWARD : FC_OP_FORWARD;
    pl->tmpl = *tmpl;
    pl->g = s->g;
    keep_operands(pl, s);
    aclnnStatus st = bound_workspace(pl, s->fn);
    if (st != ACLNN_SUCCESS) {
        free(pl);
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
