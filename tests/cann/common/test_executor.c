/*
 * The two-phase contract (semantics §6.6): second-phase checks in order, single-use executors
 * consumed whatever the outcome, repeatable executors, executors of another operator, destroyed
 * streams and workspaces, operands freed or rebound between the phases, concurrent executors.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fa/calls.h"

#define NULLPTR ACLNN_ERR_PARAM_NULLPTR
#define INVALID ACLNN_ERR_PARAM_INVALID

enum { B = 2, N = 2, S = 9, D = 16 };

typedef struct problem {
    dev_tensor q, k, v, smax, ssum, out;
    char layout[8];
} problem;

static void fill(dev_tensor *x, float base)
{
    const size_t n = x->bytes / 4;
    for (size_t i = 0; i < n; i++)
        ((float *)x->host)[i] = base + (float)((i * 7919) % 97) / 97.0f;
    aclrtMemcpy(x->dev, x->bytes, x->host, x->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
}

static void problem_make(problem *p, float base)
{
    const int64_t d[4] = {B, N, S, D}, st[4] = {B, N, S, 8};
    p->q = dt_simple(ACL_FLOAT, 4, d), p->k = dt_simple(ACL_FLOAT, 4, d), p->v = dt_simple(ACL_FLOAT, 4, d);
    p->out = dt_simple(ACL_FLOAT, 4, d);
    p->smax = dt_simple(ACL_FLOAT, 4, st), p->ssum = dt_simple(ACL_FLOAT, 4, st);
    fill(&p->q, base), fill(&p->k, base + 1), fill(&p->v, base + 2);
    strcpy(p->layout, "BNSD");
}

static void problem_free(problem *p)
{
    dt_free(&p->q), dt_free(&p->k), dt_free(&p->v), dt_free(&p->smax), dt_free(&p->ssum), dt_free(&p->out);
}

static aclOpExecutor *prepare(problem *p, fa_fn fn, uint64_t *ws)
{
    aclOpExecutor *ex = NULL;
    fa_args a = {.fn = fn, .q = p->q.t, .k = p->k.t, .v = p->v.t, .smax = p->smax.t, .ssum = p->ssum.t,
                 .out = p->out.t, .scale = 0.25, .keep = 1, .pre = 2147483647, .next = 2147483647, .head_num = N,
                 .pse_type = 1, .layout = p->layout, .ws = ws, .ex = &ex};
    const aclnnStatus st = fa_call(&a);
    TC_CHECK(st == ACLNN_SUCCESS && ex != NULL, "first phase failed: %d %s", st, aclGetRecentErrMsg());
    return ex;
}

static void *ws_alloc(uint64_t bytes)
{
    void *w = NULL;
    if (bytes)
        aclrtMalloc(&w, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    return w;
}

static void expect(aclnnStatus got, aclnnStatus want, const char *needle)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(got == want, "expected %d, got %d (%s)", want, got, msg ? msg : "no message");
    if (want != ACLNN_SUCCESS && needle)
        TC_CHECK(msg && strstr(msg, needle), "message must contain \"%s\": %s", needle, msg ? msg : "(none)");
}

/* Bytes of the output allocation, to see whether a failed run wrote anything. */
static unsigned char *snapshot(const dev_tensor *x) { return dt_download(x); }
static bool same(const dev_tensor *x, const unsigned char *before)
{
    unsigned char *now = dt_download(x);
    const bool eq = memcmp(now, before, x->bytes) == 0;
    free(now);
    return eq;
}

static void second_phase_checks(void)
{
    tc_context("second-phase checks");
    problem p;
    problem_make(&p, 0.f);
    uint64_t ws;
    aclOpExecutor *ex = prepare(&p, FA_V2, &ws);
    TC_CHECK(ws > 0, "this problem needs a workspace");
    void *w = ws_alloc(ws);
    unsigned char *before = snapshot(&p.out);
    expect(aclnnFlashAttentionScoreV2(w, ws, NULL, NULL), NULLPTR, "executor is NULL");
    /* another operator's second phase refuses it and leaves it alive */
    expect(aclnnFlashAttentionScoreV3(w, ws, ex, NULL), INVALID, "created for aclnnFlashAttentionScoreV2");
    expect(aclnnFlashAttentionVarLenScore(w, ws, ex, NULL), INVALID, "created for");
    /* a NULL workspace consumes the single-use executor, and that failure's one message says so */
    TC_CHECK(aclnnFlashAttentionScoreV2(NULL, ws, ex, NULL) == NULLPTR, "a NULL workspace was accepted");
    const char *first = aclGetRecentErrMsg();
    TC_CHECK(first && strstr(first, "workspace is NULL") && strstr(first, "consumed by this failed call") &&
                 strstr(first, "aclnnFlashAttentionScoreV2GetWorkspaceSize") && !strchr(first, '\n'),
             "the first failure must say, in its one message, that the executor is consumed: %s", first);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), INVALID, "not a live aclOpExecutor");
    TC_CHECK(same(&p.out, before), "a failed second phase wrote the output");

    ex = prepare(&p, FA_V2, &ws);
    expect(aclnnFlashAttentionScoreV2(w, ws - 1, ex, NULL), INVALID, "workspaceSize must be at least");
    ex = prepare(&p, FA_V2, &ws);
    void *small = ws_alloc(ws - 1); /* the size argument lies; the tracked allocation is too small */
    expect(aclnnFlashAttentionScoreV2(small, ws, ex, NULL), INVALID, "workspace must hold");
    aclrtFree(small);
    ex = prepare(&p, FA_V2, &ws);
    aclrtStream s;
    aclrtCreateStream(&s);
    aclrtDestroyStream(s);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, s), INVALID, "stream");
    ex = prepare(&p, FA_V2, &ws);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, (aclrtStream)&ws), INVALID, "not a live stream");
    TC_CHECK(same(&p.out, before), "a failed second phase wrote the output");

    /* success once, then the pointer is dead */
    ex = prepare(&p, FA_V2, &ws);
    aclrtStream live;
    aclrtCreateStream(&live);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, live), ACLNN_SUCCESS, NULL);
    TC_CHECK(aclrtSynchronizeStream(live) == ACL_SUCCESS, "synchronize");
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, live), INVALID, "not a live aclOpExecutor");
    TC_CHECK(!same(&p.out, before), "the run wrote nothing");
    aclrtDestroyStream(live);
    /* a larger workspace, and an untracked (host) one, are fine */
    ex = prepare(&p, FA_V2, &ws);
    void *host = malloc(ws + 100);
    expect(aclnnFlashAttentionScoreV2(host, ws + 100, ex, NULL), ACLNN_SUCCESS, NULL);
    free(host);
    free(before);
    aclrtFree(w);
    problem_free(&p);
}

static void lifetimes(void)
{
    tc_context("executor lifetimes");
    problem p;
    problem_make(&p, 0.f);
    uint64_t ws;
    aclOpExecutor *ex = prepare(&p, FA_V2, &ws);
    void *w = ws_alloc(ws);
    /* destroying a single-use executor without running it */
    expect(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS, NULL);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), INVALID, "not a live");
    expect(aclDestroyAclOpExecutor(ex), INVALID, "not a live aclOpExecutor");
    expect(aclDestroyAclOpExecutor(NULL), ACLNN_SUCCESS, NULL);
    expect(aclSetAclOpExecutorRepeatable(NULL), NULLPTR, "executor is NULL");
    expect(aclSetAclOpExecutorRepeatable(ex), INVALID, "not a live");

    /* repeatable: runs any number of times on the captured addresses, new data each time */
    ex = prepare(&p, FA_V2, &ws);
    expect(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS, NULL);
    TC_CHECK(aclnnFlashAttentionScoreV2(NULL, ws, ex, NULL) == NULLPTR, "a NULL workspace was accepted");
    const char *msg = aclGetRecentErrMsg(); /* a repeatable executor survives its failures */
    TC_CHECK(msg && !strstr(msg, "consumed"), "a repeatable executor is not consumed: %s", msg);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), ACLNN_SUCCESS, NULL);
    unsigned char *first = dt_download(&p.out);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), ACLNN_SUCCESS, NULL);
    TC_CHECK(same(&p.out, first), "a repeated run on the same data differs");
    fill(&p.v, 5.f);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), ACLNN_SUCCESS, NULL);
    TC_CHECK(!same(&p.out, first), "the repeatable executor did not read the new data");
    unsigned char *second = dt_download(&p.out);
    aclOpExecutor *fresh = prepare(&p, FA_V2, &ws);
    expect(aclnnFlashAttentionScoreV2(w, ws, fresh, NULL), ACLNN_SUCCESS, NULL);
    TC_CHECK(same(&p.out, second), "repeatable and fresh executors disagree on the same data");
    expect(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS, NULL);
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), INVALID, "not a live");
    free(first), free(second);
    aclrtFree(w);
    problem_free(&p);
}

static void captured_operands(void)
{
    tc_context("operands between the phases");
    problem p;
    problem_make(&p, 0.f);
    uint64_t ws;
    /* the objects may be destroyed after the first phase */
    aclOpExecutor *ex = prepare(&p, FA_V2, &ws);
    void *w = ws_alloc(ws);
    aclDestroyTensor(p.q.t), aclDestroyTensor(p.k.t), aclDestroyTensor(p.v.t), aclDestroyTensor(p.out.t);
    aclDestroyTensor(p.smax.t), aclDestroyTensor(p.ssum.t);
    p.q.t = p.k.t = p.v.t = p.out.t = p.smax.t = p.ssum.t = NULL;
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), ACLNN_SUCCESS, NULL);
    unsigned char *ref = dt_download(&p.out);
    problem_free(&p);

    /* aclSetRawTensorAddr after the first phase does not move the executor */
    problem_make(&p, 0.f);
    ex = prepare(&p, FA_V2, &ws);
    dev_tensor other = dt_simple(ACL_FLOAT, p.out.rank, p.out.dims);
    unsigned char *other_before = dt_download(&other);
    expect(aclSetRawTensorAddr(p.out.t, other.dev), ACLNN_SUCCESS, NULL);
    void *addr = NULL;
    aclGetRawTensorAddr(p.out.t, &addr);
    TC_CHECK(addr == other.dev, "aclGetRawTensorAddr does not report the new address");
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), ACLNN_SUCCESS, NULL);
    TC_CHECK(same(&other, other_before), "the executor wrote to the rebound address");
    TC_CHECK(same(&p.out, ref), "the executor did not write the captured address");
    aclSetRawTensorAddr(p.out.t, p.out.dev);
    dt_free(&other);
    free(other_before);

    /* an operand freed between the phases: 161002, nothing written, the executor consumed */
    ex = prepare(&p, FA_V2, &ws);
    unsigned char *max_before = dt_download(&p.smax);
    aclrtFree(p.k.dev);
    p.k.dev = NULL;
    TC_CHECK(aclnnFlashAttentionScoreV2(w, ws, ex, NULL) == INVALID, "a freed key was accepted");
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(msg && strstr(msg, "key") && strstr(msg, "consumed by this failed call"),
             "the message must name the key and say the executor is consumed: %s", msg ? msg : "(none)");
    TC_CHECK(same(&p.smax, max_before), "a failed run wrote softmaxMaxOut");
    expect(aclnnFlashAttentionScoreV2(w, ws, ex, NULL), INVALID, "not a live");
    free(max_before), free(ref);
    aclrtFree(w);
    problem_free(&p);
}

/* Different executors run from different threads at the same time. */
typedef struct job {
    problem p;
    aclOpExecutor *ex;
    void *w;
    uint64_t ws;
    aclnnStatus st;
} job;

static void *job_run(void *arg)
{
    job *j = arg;
    for (int k = 0; k < 20; k++)
        j->st |= aclnnFlashAttentionScoreV2(j->w, j->ws, j->ex, NULL);
    return NULL;
}

static void threads(void)
{
    tc_context("concurrent executors");
    job jobs[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        problem_make(&jobs[k].p, (float)k);
        jobs[k].ex = prepare(&jobs[k].p, FA_V2, &jobs[k].ws);
        aclSetAclOpExecutorRepeatable(jobs[k].ex);
        jobs[k].w = ws_alloc(jobs[k].ws);
        jobs[k].st = ACLNN_SUCCESS;
    }
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, job_run, &jobs[k]);
    for (int k = 0; k < 2; k++) {
        pthread_join(th[k], NULL);
        TC_CHECK(jobs[k].st == ACLNN_SUCCESS, "thread %d failed", k);
        aclDestroyAclOpExecutor(jobs[k].ex);
        aclrtFree(jobs[k].w);
        problem_free(&jobs[k].p);
    }
}

int main(void)
{
    second_phase_checks();
    lifetimes();
    captured_operands();
    threads();
    return tc_summary("cann_executor");
}
