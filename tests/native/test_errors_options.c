/* Bad input through the native API, part 2: options, score modifiers, visibility, dropout,
 * statistics and the plan calls (workspace too small or NULL, NULL plan / outputs). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "errors_common.h"
#include "harness.h"

static void options(void)
{
    fc_attention_desc d = valid();
    fc_options o = {.threads = -1};
    EXPECT_OPT(FC_ERR_INVALID_ARG, "options.threads", d, &o);
    o.threads = 4097;
    EXPECT_OPT(FC_ERR_INVALID_ARG, "options.threads", d, &o);
    o.threads = 0;
    const fc_dtype bad_tolerances[] = {FC_I8, FC_I32, (fc_dtype)99};
    for (int t = 0; t < 3; t++) {
        o.out_tolerance = bad_tolerances[t];
        EXPECT_OPT(FC_ERR_INVALID_ARG, "options.out_tolerance", d, &o);
    }
    o.out_tolerance = FC_F32, o.backend = FC_BACKEND_CUDA; /* not built in this library */
    EXPECT_OPT(FC_ERR_BACKEND, "options.backend", d, &o);
    /* a value that is not an fc_backend at all must not silently run on the CPU */
    o.backend = (fc_backend)7;
    fc_plan *plan = NULL;
    const fc_status st = fc_plan_create(&d, &o, &plan);
    tc_context("options.backend = 7");
    TC_CHECK((st == FC_ERR_INVALID_ARG || st == FC_ERR_BACKEND) && strstr(fc_last_error(), "options.backend"),
             "backend 7 gave %s \"%s\"", fc_status_name(st), fc_last_error());
    if (st == FC_OK)
        fc_plan_destroy(plan);
}

static void score_options(void)
{
    fc_attention_desc d = valid();
    /* finite doubles beyond float's range would become inf in the fp32 problem (NaN outputs) */
    const double bad_scales[] = {NAN, INFINITY, -INFINITY, 1e39, -1e300, 0x1.fffffffp+127};
    for (int t = 0; t < 6; t++) {
        d.scale = bad_scales[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.scale must be finite and within float's range", d);
    }
    d.scale = FLT_MAX; /* the largest that fits */
    EXPECT_OK(d);
    d = valid();
    const float bad_caps[] = {-1.0f, NAN, INFINITY};
    for (int t = 0; t < 3; t++) {
        d.softcap = bad_caps[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.softcap", d);
    }
    d = valid();
    add_options(&d);
    EXPECT_OK(d);
    d.bias.dtype = FC_I32;
    EXPECT(FC_ERR_INVALID_ARG, "desc.bias.dtype", d);
    d.bias.dtype = FC_F32, d.bias.order = (fc_bias_order)2;
    EXPECT(FC_ERR_INVALID_ARG, "desc.bias.order", d);
    d.bias.order = FC_BIAS_BEFORE_SCALE, d.bias.rows = 0;
    EXPECT(FC_ERR_INVALID_ARG, "desc.bias.rows", d);
    d.bias.rows = S, d.bias.cols = 0;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias", "cols", d);
    d.bias.cols = S;
    int64_t *bst[] = {&d.bias.stride_batch, &d.bias.stride_head, &d.bias.stride_row, &d.bias.stride_col};
    for (int s = 0; s < 4; s++) {
        const int64_t keep_s = *bst[s];
        *bst[s] = -1;
        EXPECT(FC_ERR_INVALID_ARG, "desc.bias", d);
        *bst[s] = keep_s;
    }
    /* extents: every batch must find its rows and columns */
    d.bias.cols = S - 1;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias", "columns", d);
    d.bias.cols = S, d.bias.rows = S - 1;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias", "rows", d);
    d.bias.bottom_right = true; /* row shift −1 is only allowed compressed */
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias", "rows", d);
    d.bias.stride_row = 0; /* one broadcast row: the rows extent does not matter */
    EXPECT_OK(d);
    d.bias.compressed = true;
    EXPECT(FC_ERR_INVALID_ARG, "desc.bias.compressed", d);
    d.bias.stride_row = S, d.bias.rows = 2;
    EXPECT_OK(d);
    const int64_t prefix[B] = {1, 1};
    d.vis.prefix = prefix;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias.compressed", "desc.vis.prefix", d);
    d.vis.prefix = NULL;
    int64_t kl[B] = {S, S - 1}; /* compressed rows need Sq_b = Skv_b where Sq_b > rows */
    d.kv_lens = kl;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.bias", "batch 1", d);
    d = valid();
    add_options(&d);
    d.alibi.stride_head = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.alibi", d);
    d.alibi.stride_head = 1, d.alibi.stride_batch = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.alibi", d);
}

static void visibility(void)
{
    fc_attention_desc d = valid();
    add_options(&d);
    d.vis.mask.dtype = FC_F32;
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.mask.dtype", d);
    d.vis.mask.dtype = FC_I32;
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.mask.dtype", d);
    d.vis.mask.dtype = FC_I8;
    int64_t *mst[] = {&d.vis.mask.stride_batch, &d.vis.mask.stride_head, &d.vis.mask.stride_row, &d.vis.mask.stride_col};
    for (int s = 0; s < 4; s++) {
        const int64_t keep_s = *mst[s];
        *mst[s] = -1;
        EXPECT(FC_ERR_INVALID_ARG, "desc.vis.mask", d);
        *mst[s] = keep_s;
    }
    d.vis.mask.by_tokens = true;
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.mask.by_tokens", d);
    d.vis.mask.by_tokens = false;
    d.vis.window = fc_window_causal((fc_align)2);
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.window.align", d);
    d.vis.window.enabled = false; /* a disabled window's alignment is never used */
    EXPECT_OK(d);
    fc_window bw[B] = {fc_window_causal(FC_ALIGN_TOP_LEFT), fc_window_band(1, 1, (fc_align)-1)};
    d.vis.batch_window = bw;
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.batch_window[1].align", d);
    bw[1].align = FC_ALIGN_BOTTOM_RIGHT;
    EXPECT_OK(d);
    int64_t prefix[B] = {0, -1};
    d.vis.prefix = prefix;
    EXPECT(FC_ERR_INVALID_ARG, "desc.vis.prefix[1]", d);
    prefix[1] = 1000; /* beyond Skv: simply everything */
    EXPECT_OK(d);
}

static void dropout_and_stats(void)
{
    fc_attention_desc d = valid();
    add_options(&d);
    const double bad_p[] = {1.5, -0.5, NAN, INFINITY};
    for (int t = 0; t < 4; t++) {
        d.dropout.keep_prob = bad_p[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.dropout.keep_prob", d);
    }
    d.dropout.keep_prob = 0; /* read as 1 */
    EXPECT_OK(d);
    d.dropout.keep_prob = 0.5, d.dropout.keep_bits_bytes = sizeof keep - 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.dropout.keep_bits_bytes", d);
    d.dropout.keep_prob = 1; /* the size is not checked when the bits are ignored */
    EXPECT_OK(d);
    d.dropout.keep_prob = 0.5, d.dropout.keep_bits_bytes = sizeof keep;
    int64_t ql[B] = {S, 2}; /* per-batch lengths need fewer bits */
    d.q_lens = ql;
    d.dropout.keep_bits_bytes = (size_t)(NQ * S * S + NQ * 2 * S + 7) / 8;
    EXPECT_OK(d);
    d.dropout.keep_bits_bytes -= 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.dropout.keep_bits_bytes", d);

    d = valid();
    add_options(&d);
    d.stats.order = (fc_stats_order)3;
    EXPECT(FC_ERR_INVALID_ARG, "desc.stats.order", d);
    d.stats.order = FC_STATS_TOKEN_MAJOR;
    const int64_t bad_r[] = {-1, 65};
    for (int t = 0; t < 2; t++) {
        d.stats.replicas = bad_r[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.stats.replicas", d);
    }
    d.stats.replicas = 64;
    EXPECT_OK(d);
    d.stats.order = FC_STATS_KV_GROUP, d.stats.replicas = 8;
    EXPECT(FC_ERR_INVALID_ARG, "desc.stats.replicas", d);
    d.stats.replicas = 0;
    EXPECT_OK(d);
}

static void plan_calls(void)
{
    tc_context("plan calls");
    fc_attention_desc d = valid();
    add_options(&d);
    fc_plan *plan = NULL;
    if (!TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "valid plan: %s", fc_last_error()))
        return;
    size_t need = 0;
    TC_CHECK(fc_plan_workspace_size(plan, &need) == FC_OK && need > 0, "workspace size %zu", need);
    char *ws = malloc(need);
    TC_CHECK(fc_plan_run(plan, NULL, ws, need - 1) == FC_ERR_WORKSPACE && strstr(fc_last_error(), "workspace"),
             "too small: \"%s\"", fc_last_error());
    TC_CHECK(fc_plan_run(plan, NULL, NULL, need) == FC_ERR_WORKSPACE && strstr(fc_last_error(), "workspace"),
             "NULL workspace: \"%s\"", fc_last_error());
    TC_CHECK(fc_plan_run(plan, NULL, NULL, 0) == FC_ERR_WORKSPACE, "NULL workspace of size 0");
    TC_CHECK(fc_plan_run(NULL, NULL, ws, need) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "run NULL plan");
    TC_CHECK(fc_plan_workspace_size(NULL, &need) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "size NULL plan");
    TC_CHECK(fc_plan_workspace_size(plan, NULL) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "bytes"), "size NULL bytes");
    double f;
    TC_CHECK(fc_plan_flops(NULL, &f) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "flops NULL plan");
    TC_CHECK(fc_plan_flops(plan, NULL) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "flops"), "flops NULL out");
    TC_CHECK(fc_plan_run(plan, NULL, ws, need) == FC_OK, "valid run: %s", fc_last_error());
    TC_CHECK(fc_last_error()[0] == '\0', "a success clears the message: \"%s\"", fc_last_error());
    fc_plan_destroy(plan);
    free(ws);
}

/* A run may rebind the operands its plan has, never add a score term the plan was made without:
 * the plan's kernels were chosen for the terms it has.  Nothing is written. */
static void run_adds_terms(void)
{
    tc_context("a run adds a score term");
    fc_attention_desc d = valid();
    fc_plan *plan = NULL;
    if (!TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "valid plan: %s", fc_last_error()))
        return;
    size_t need = 0;
    fc_plan_workspace_size(plan, &need);
    char *ws = malloc(need ? need : 1);
    static const float sink[NQ];
    const struct {
        fc_attention_io io;
        const char *named;
    } adds[] = {{{.bias = bias}, "bias"}, {{.mask = mask}, "mask"}, {{.slopes = slopes}, "ALiBi"},
                {{.sink = sink}, "sink"}, {{.keep_bits = keep}, "dropout"}};
    for (size_t t = 0; t < sizeof adds / sizeof adds[0]; t++) {
        memset(out, 0x5A, sizeof out);
        const fc_status st = fc_plan_run(plan, &adds[t].io, ws, need);
        TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), adds[t].named), "adding %s: %d \"%s\"",
                 adds[t].named, (int)st, fc_last_error());
        TC_CHECK(out[0] == out[sizeof out / sizeof out[0] - 1] && ((unsigned char *)out)[0] == 0x5A,
                 "adding %s wrote the output", adds[t].named);
    }
    fc_plan_destroy(plan);
    free(ws);
}

/* fc_last_error() is per thread: another thread's failure or success does not touch this one's. */
static void *fail_in_thread(void *arg)
{
    const char **seen = arg;
    seen[0] = fc_last_error()[0] == '\0' ? "" : "not empty";
    fc_attention_desc d = valid();
    d.head_dim = 0;
    fc_plan *plan;
    fc_plan_create(&d, NULL, &plan);
    seen[1] = strstr(fc_last_error(), "desc.head_dim") ? "" : "no message";
    return NULL;
}

static void per_thread_messages(void)
{
    tc_context("fc_last_error per thread");
    fc_attention_desc d = valid();
    d.batch = 0;
    fc_plan *plan;
    fc_plan_create(&d, NULL, &plan);
    const char *seen[2] = {"unset", "unset"};
    pthread_t t;
    pthread_create(&t, NULL, fail_in_thread, seen);
    pthread_join(t, NULL);
    TC_CHECK(seen[0][0] == '\0', "a new thread sees this thread's message (%s)", seen[0]);
    TC_CHECK(seen[1][0] == '\0', "the other thread's failure left no message (%s)", seen[1]);
    TC_CHECK(strstr(fc_last_error(), "desc.batch") != NULL, "this thread's message changed: \"%s\"", fc_last_error());
}

static void body(void)
{
    options();
    score_options();
    visibility();
    dropout_and_stats();
    plan_calls();
    run_adds_terms();
    per_thread_messages();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_errors_options", body); }
