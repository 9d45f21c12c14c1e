/*
 * The CUDA backend where no GPU can run it (this is how CI and build machines see it): the
 * library loads, the CPU backend works, and asking for CUDA is FC_ERR_BACKEND with a message
 * that says why (no driver: cudaErrorInsufficientDriver; no device).  Where a GPU is present the
 * request succeeds and this test reports "skipped": tests/cuda/test_forward covers that machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "flashc.h"

enum { S = 8, E = 16 };

static fc_status plan_on(fc_backend backend, float *q, float *o, fc_plan **plan)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = E, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, S, E);
    d.k = d.v = d.q;
    d.out = fc_tensor_bnsd(o, FC_F32, 1, S, E);
    fc_options opt = {.backend = backend, .threads = 1};
    return fc_plan_create(&d, &opt, plan);
}

int main(void)
{
    static float q[S * E], o[S * E];
    for (int i = 0; i < S * E; i++)
        q[i] = (float)(i % 7) * 0.25f;
    fc_plan *plan = NULL;
    const fc_status st = plan_on(FC_BACKEND_CUDA, q, o, &plan);
    /* a usable GPU: the request reached the feature checks, or the check that the operands (host
     * memory here) are device memory */
    if (st == FC_OK || (st == FC_ERR_BACKEND && strstr(fc_last_error(), "fp16/bf16")) ||
        (st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "device memory"))) {
        fc_plan_destroy(plan);
        printf("test_cuda_no_driver: a CUDA device is present; skipped\n");
        return TC_SKIP;
    }
    const char *msg = fc_last_error();
    TC_CHECK(st == FC_ERR_BACKEND, "backend CUDA without a GPU: status %s, want FC_ERR_BACKEND", fc_status_name(st));
    TC_CHECK(strstr(msg, "CUDA") != NULL && (strstr(msg, "cudaErrorInsufficientDriver") || strstr(msg, "no CUDA device")),
             "the message says why: \"%s\"", msg);
    printf("refusal: %s\n", msg);

    /* The CPU backend is unaffected, explicitly and by default (host memory). */
    for (int b = 0; b < 2; b++) {
        const fc_backend be = b ? FC_BACKEND_CPU : FC_BACKEND_DEFAULT;
        plan = NULL;
        memset(o, 0, sizeof o);
        fc_status s2 = plan_on(be, q, o, &plan);
        TC_CHECK(s2 == FC_OK, "backend %d on host memory: %s (%s)", (int)be, fc_status_name(s2), fc_last_error());
        if (s2 == FC_OK) {
            size_t ws = 0;
            fc_plan_workspace_size(plan, &ws);
            void *w = malloc(ws ? ws : 1);
            s2 = fc_plan_run(plan, NULL, w, ws);
            free(w);
            TC_CHECK(s2 == FC_OK && o[E + 1] != 0.0f, "backend %d runs: %s", (int)be, fc_status_name(s2));
        }
        fc_plan_destroy(plan);
    }
    return tc_summary("test_cuda_no_driver");
}
