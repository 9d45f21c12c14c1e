/*
 * IncreFlashAttentionV4's first phase end to end (required pointers, rules, lowering, executor)
 * and its executor payload.  The second phase reads the device data the first phase may not:
 * kvPaddingSize (each batch's kv window, §4.3), bound to the run as its lengths, and the block
 * table (entries checked by the backend before anything is written); content errors give 161002
 * with nothing written.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/plan.h"
#include "cann/common/errmsg.h"
#include "cann/common/executor.h"
#include "ifa.h"
#include "runtime/memcheck.h"

typedef struct ifa_payload {
    fc_plan *plan;
    char **batch_data;   /* per-batch lists: key then value element addresses (2·B) */
    int64_t *seq, *len;  /* S_b, L_b */
    const int64_t *pad;  /* kvPaddingSize's device address; NULL = no left padding */
    int64_t *window;     /* the kv windows (2·B: lengths, then floors): planned, then each run's */
    char (*names)[24];   /* "key[k]", "value[k]" for the phase-2 messages */
} ifa_payload;

static void ifa_release(void *payload)
{
    ifa_payload *pl = payload;
    if (!pl)
        return;
    fc_plan_free(pl->plan);
    free(pl->batch_data);
    free(pl->seq);
    free(pl->len);
    free(pl->window);
    free(pl->names);
    free(pl);
}

static aclnnStatus ifa_status(fc_status fs, const char *fn)
{
    if (fs == FC_ERR_INVALID_ARG) /* the run's data check: an entry outside the cache */
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: blocktable: %s (blockNum of the cache)", fn, fc_error_message());
    if (fs != FC_OK)
        return cann_fail(cann_plan_status(fs), "%s: %s", fn, fc_error_message());
    return ACLNN_SUCCESS;
}

static aclnnStatus ifa_run(void *payload, void *workspace, uint64_t bytes, void *stream, const char *fn)
{
    ifa_payload *pl = payload;
    const fc_plan *plan = pl->plan;
    const int64_t B = plan->prob.B;
    fc_bindings run = {0};
    if (pl->pad) { /* the run's kv windows: its lengths, from which the backend derives its batch facts */
        int64_t pad; /* device data: read once the stream's earlier work is done */
        if (fc_rt_read(&pad, pl->pad, sizeof pad, stream) != FC_RT_OK)
            return cann_fail(ACLNN_ERR_RUNTIME_ERROR, "%s: kvPaddingSize: %s", fn, fc_rt_message());
        const ifa_lens lens = {.B = B, .seq = pl->seq, .len = pl->len, .left_padding = true};
        ifa_kv_window(&lens, pad, pl->window, pl->window + B);
        run.lengths = (fc_lengths){.skv = pl->window, .kv_lo = pl->window + B};
    }
    return ifa_status(fc_plan_execute_on(plan, &run, workspace, (size_t)bytes, stream), fn);
}

/* A CUDA run checks its block-table entries on the GPU and reports a bad one afterwards (the
 * plan's next run would): waited for here, so the call that queued it returns 161002. */
static aclnnStatus ifa_finish(void *payload, void *stream, bool wait, const char *fn)
{
    const ifa_payload *pl = payload;
    return ifa_status(fc_plan_check_runs_on(pl->plan, stream, wait), fn);
}

static const cann_exec_ops ifa_exec_ops = {.run = ifa_run, .release = ifa_release, .finish = ifa_finish};

static const ifa_param ifa_operands[] = {IFA_QUERY, IFA_PSE, IFA_MASK, IFA_Q_SCALE2, IFA_Q_OFFSET2, IFA_AQ_SCALE,
                                         IFA_AQ_OFFSET, IFA_BLOCK_TABLE, IFA_KV_PAD, IFA_OUT};

/* Records every operand's byte range for the second phase's allocation re-check (list element
 * names move into the payload: the validation state does not outlive the first phase). */
static aclnnStatus add_ranges(const ifa_state *s, ifa_payload *pl, aclOpExecutor *ex)
{
    aclnnStatus st = ACLNN_SUCCESS;
    for (size_t k = 0; st == ACLNN_SUCCESS && k < sizeof ifa_operands / sizeof ifa_operands[0]; k++)
        st = cann_executor_add(ex, &s->t[ifa_operands[k]]);
    for (int w = 0; w < 2; w++)
        for (uint64_t e = 0; st == ACLNN_SUCCESS && e < s->kv[w].count; e++) {
            cann_operand el = s->kv[w].el[e];
            char *name = pl->names[w * s->kv[0].count + e];
            memcpy(name, s->kv[w].names[e], sizeof pl->names[0]);
            el.name = name;
            st = cann_executor_add(ex, &el);
        }
    return st;
}

static aclnnStatus new_payload(const ifa_state *s, ifa_payload **out)
{
    const size_t B = (size_t)s->g.B;
    ifa_payload *pl = calloc(1, sizeof *pl);
    if (pl) {
        pl->seq = malloc(B * sizeof *pl->seq);
        pl->len = malloc(B * sizeof *pl->len);
        pl->names = malloc(2 * s->kv[0].count * sizeof *pl->names);
        if (s->g.per_batch)
            pl->batch_data = malloc(2 * B * sizeof *pl->batch_data);
        pl->window = malloc(2 * B * sizeof *pl->window);
        if (s->t[IFA_KV_PAD].present)
            pl->pad = (const int64_t *)s->t[IFA_KV_PAD].data;
    }
    if (!pl || !pl->seq || !pl->len || !pl->names || (s->g.per_batch && !pl->batch_data) || !pl->window) {
        ifa_release(pl);
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the executor", s->fn);
    }
    memcpy(pl->len, s->len, B * sizeof *pl->len);
    *out = pl;
    return ACLNN_SUCCESS;
}

aclnnStatus ifa_make_executor(const ifa_state *s, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ifa_payload *pl = NULL;
    aclnnStatus st = new_payload(s, &pl);
    if (st != ACLNN_SUCCESS)
        return st;
    fc_problem p;
    if ((st = ifa_lower(s, pl->batch_data, pl->seq, pl->window, &p)) != ACLNN_SUCCESS) {
        ifa_release(pl);
        return st;
    }
    const fc_batch_rule rule = ifa_batch_rule(s); /* kvPaddingSize moves the windows per run */
    const fc_status fs = fc_plan_from_problem(&p, &rule, false, FC_OP_FORWARD, NULL, &pl->plan); /* owns p.batch from here */
    if (fs != FC_OK) {
        ifa_release(pl);
        return cann_fail(cann_plan_status(fs), "%s: %s", s->fn, fc_error_message());
    }
    aclOpExecutor *ex = cann_executor_new(s->fn, s->c->sig->run_fn, &ifa_exec_ops, pl, pl->plan->workspace);
    if (!ex)
        return ACLNN_ERR_INNER;
    if ((st = add_ranges(s, pl, ex)) != ACLNN_SUCCESS) {
        cann_executor_free(ex);
        return st;
    }
    return cann_executor_publish(ex, s->fn, workspaceSize, executor);
}

aclnnStatus ifa_prepare(const ifa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclnnStatus st;
    ifa_state *s = cann_prepare_state(&ifa_fields, call->sig, call, sizeof *s, &st);
    if (!s)
        return st;
    s->c = call;
    s->fn = call->sig->fn;
    st = ifa_validate(s);
    if (st == ACLNN_SUCCESS)
        st = ifa_make_executor(s, workspaceSize, executor);
    free(s->len);
    free(s);
    return st;
}
