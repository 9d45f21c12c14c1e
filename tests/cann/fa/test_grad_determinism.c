/*
 * Determinism of the backward through the CANN face (semantics §3.4, §6.6, §9p): the CPU backend
 * is always deterministic, so every gradient byte is identical across repeated runs, OpenMP
 * thread counts (1, 2, 3) and ACL_OPT_DETERMINISTIC values (0..3, captured by the first phase),
 * also for a repeatable executor run several times.  Cases with many kv tiles and query heads per
 * kv head, so that dk/dv and dsink reductions cross work items.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_grad.h"

/* Every gradient tensor's allocation, concatenated. */
static unsigned char *grad_bytes(const fag_run *g, size_t *n)
{
    const dev_tensor *ts[] = {&g->tdq, &g->tdk, &g->tdv, &g->tdqr, &g->tdkr, &g->tdsink};
    size_t total = 0;
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        total += ts[k]->dev ? ts[k]->bytes : 0;
    unsigned char *all = malloc(total), *at = all;
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        if (ts[k]->dev) {
            unsigned char *img = dt_download(ts[k]);
            memcpy(at, img, ts[k]->bytes);
            at += ts[k]->bytes;
            free(img);
        }
    *n = total;
    return all;
}

static void same_bytes(const unsigned char *a, const unsigned char *b, size_t n, const char *what)
{
    size_t first = n;
    for (size_t k = 0; k < n && first == n; k++)
        if (a[k] != b[k])
            first = k;
    TC_CHECK(first == n, "%s: gradients differ from the first run at byte %zu of %zu", what, first, n);
}

static void one_case(const char *name, const fag_case *c)
{
    tc_context("%s", name);
    fag_run g;
    if (!fag_open(&g, c)) {
        fag_close(&g);
        return;
    }
    const int threads[] = {1, 2, 3, 2};
    const int64_t det[] = {0, 1, 2, 3};
    unsigned char *first = NULL;
    size_t n = 0;
    for (int k = 0; k < 4; k++) {
        omp_set_num_threads(threads[k]);
        TC_CHECK(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, det[k]) == ACL_SUCCESS, "set ACL_OPT_DETERMINISTIC");
        if (!fag_backward(&g))
            break;
        size_t m;
        unsigned char *bytes = grad_bytes(&g, &m);
        char what[64];
        snprintf(what, sizeof what, "%d threads, ACL_OPT_DETERMINISTIC %lld", threads[k], (long long)det[k]);
        if (!first)
            first = bytes, n = m;
        else
            same_bytes(first, bytes, n, what), free(bytes);
    }
    fag_check(&g); /* and they are right */
    /* a repeatable executor: three runs on the same captured addresses, same bytes */
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    omp_set_num_threads(2);
    if (TC_CHECK(fag_prepare(&g, &ws, &ex) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg()) &&
        TC_CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "aclSetAclOpExecutorRepeatable")) {
        void *w = NULL;
        if (ws > 0)
            aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
        for (int k = 0; k < 3; k++) {
            TC_CHECK(fag_call_run(fag_grad_fn(c->f.fn), w, ws, ex, NULL) == ACLNN_SUCCESS, "repeatable run %d: %s", k,
                     aclGetRecentErrMsg());
            size_t m;
            unsigned char *bytes = grad_bytes(&g, &m);
            same_bytes(first, bytes, n, "repeatable executor");
            free(bytes);
        }
        TC_CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "aclDestroyAclOpExecutor");
        if (w)
            aclrtFree(w);
    }
    aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0);
    free(first);
    fag_close(&g);
}

int main(void)
{
    aclrtContext ctx;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateContext(&ctx, 0) != ACL_SUCCESS ||
        aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
        printf("cann_grad_determinism: runtime setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    fag_case g = fag_case_default();
    fa_case *c = &g.f;
    c->fn = FA_V3;
    c->layout = "BSND";
    c->B = 2, c->N1 = 8, c->N2 = 2, c->D = 32, c->Dv = 24, c->S1 = 150, c->S2 = 230;
    c->sink = 1;
    c->keep_prob = 0.9;
    c->mask_rank = 2, c->mask_dims[0] = c->S1, c->mask_dims[1] = c->S2, c->mask_density = 0.1;
    c->seed = 9900;
    one_case("GradV3 BSND GQA sink dropout mask, S 150x230", &g);
    g = fag_case_default();
    c->fn = FA_V5;
    c->layout = "TND";
    c->dtype = TC_BF16;
    c->B = 3, c->N1 = 4, c->N2 = 1, c->D = 16, c->Dr = 8, c->s1[0] = 100, c->s1[1] = 0, c->s1[2] = 170;
    c->s2[0] = 120, c->s2[1] = 40, c->s2[2] = 170;
    c->sink = 2, c->same_as_input = true;
    c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
    c->seed = 9901;
    one_case("V5 TND MQA rope sink causal BFLOAT16", &g);
    aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    aclFinalize();
    return tc_summary("cann_grad_determinism");
}
