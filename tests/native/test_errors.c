/* Bad input through the native API: every rule of src/native/attention.c, src/core/lower.c and
 * src/core/plan.c gets its status (FC_ERR_NULL_ARG / FC_ERR_INVALID_ARG / FC_ERR_WORKSPACE /
 * FC_ERR_BACKEND) and an fc_last_error() message naming the field at fault; fc_attention reports
 * the same; a failed fc_plan_create leaves *plan NULL. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "harness.h"

enum { B = 2, NQ = 4, NKV = 2, D = 8, S = 6 };

static float q[B * NQ * S * D], k[B * NKV * S * D], v[B * NKV * S * D], qr[B * NQ * S * D], kr[B * NKV * S * D];
static float out[B * NQ * S * D], bias[B * NQ * S * S], slopes[NQ], smax[B * NQ * S * 8], ssum[B * NQ * S * 8];
static uint8_t mask[S * S], keep[(B * NQ * S * S + 7) / 8];

/* A valid problem using most options; each test breaks exactly one thing. */
static fc_attention_desc valid(void)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(q, FC_F32, NQ, S, D);
    d.k = fc_tensor_bnsd(k, FC_F32, NKV, S, D);
    d.v = fc_tensor_bnsd(v, FC_F32, NKV, S, D);
    d.out = fc_tensor_bnsd(out, FC_F32, NQ, S, D);
    return d;
}

static void add_options(fc_attention_desc *d)
{
    d->bias = (fc_bias){.data = bias, .dtype = FC_F32, .rows = S, .cols = S, .stride_batch = NQ * S * S,
                        .stride_head = S * S, .stride_row = S, .stride_col = 1};
    d->alibi = (fc_alibi){.slopes = slopes, .stride_head = 1};
    d->vis.mask = (fc_mask){.data = mask, .dtype = FC_U8, .stride_row = S, .stride_col = 1};
    d->dropout = (fc_dropout){.keep_bits = keep, .keep_bits_bytes = sizeof keep, .keep_prob = 0.9};
    d->stats = (fc_stats){.max = smax, .sum = ssum, .replicas = 8};
}

#define EXPECT(want, field, desc) expect_at(__LINE__, want, field, NULL, desc, NULL)
#define EXPECT2(want, field, field2, desc) expect_at(__LINE__, want, field, field2, desc, NULL)
#define EXPECT_OPT(want, field, desc, opt) expect_at(__LINE__, want, field, NULL, desc, opt)

/* The status and message of fc_plan_create, and the same from fc_attention. */
static void expect_at(int line, fc_status want, const char *field, const char *field2, fc_attention_desc d,
                      const fc_options *opt)
{
    fc_plan *plan = (fc_plan *)&plan; /* garbage the call must overwrite */
    const fc_status st = fc_plan_create(&d, opt, &plan);
    const char *msg = fc_last_error();
    tc_context("line %d: %s", line, field);
    TC_CHECK(st == want, "status %s, want %s (message \"%s\")", fc_status_name(st), fc_status_name(want), msg);
    TC_CHECK(strstr(msg, field) != NULL, "message \"%s\" does not name %s", msg, field);
    if (field2)
        TC_CHECK(strstr(msg, field2) != NULL, "message \"%s\" does not name %s", msg, field2);
    TC_CHECK(plan == NULL, "*plan not NULL after a failure");
    if (st == FC_OK)
        fc_plan_destroy(plan);
    if (!opt) {
        const fc_status st2 = fc_attention(&d);
        TC_CHECK(st2 == want, "fc_attention status %s, want %s", fc_status_name(st2), fc_status_name(want));
    }
}

static void expect_ok(int line, fc_attention_desc d)
{
    tc_context("line %d: accepted", line);
    fc_plan *plan = NULL;
    TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "rejected: %s", fc_last_error());
    TC_CHECK(fc_last_error()[0] == '\0', "message after success: \"%s\"", fc_last_error());
    fc_plan_destroy(plan);
}
#define EXPECT_OK(desc) expect_ok(__LINE__, desc)

static void null_pointers(void)
{
    fc_plan *plan;
    tc_context("NULL desc / plan");
    TC_CHECK(fc_plan_create(NULL, NULL, &plan) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "desc"), "desc NULL");
    TC_CHECK(fc_attention(NULL) == FC_ERR_NULL_ARG, "fc_attention(NULL)");
    fc_attention_desc d = valid();
    TC_CHECK(fc_plan_create(&d, NULL, NULL) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "plan NULL");

    const char *names[] = {"desc.q.data", "desc.k.data", "desc.v.data", "desc.out.data"};
    for (int t = 0; t < 4; t++) {
        d = valid();
        fc_tensor *ts[] = {&d.q, &d.k, &d.v, &d.out};
        ts[t]->data = NULL;
        EXPECT(FC_ERR_NULL_ARG, names[t], d);
    }
    d = valid();
    d.rope_dim = 4;
    d.k_rope = fc_tensor_bnsd(kr, FC_F32, NKV, S, 4);
    EXPECT(FC_ERR_NULL_ARG, "desc.q_rope.data", d);
    d.q_rope = fc_tensor_bnsd(qr, FC_F32, NQ, S, 4);
    d.k_rope.data = NULL;
    EXPECT(FC_ERR_NULL_ARG, "desc.k_rope.data", d);
    d.k_rope.data = kr;
    EXPECT_OK(d);
    d = valid();
    d.packed = true;
    const int64_t lens[B] = {S, S};
    d.kv_lens = lens;
    EXPECT(FC_ERR_NULL_ARG, "desc.q_lens", d);
    d.q_lens = lens, d.kv_lens = NULL;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv_lens", d);
    d = valid();
    d.dropout = (fc_dropout){.keep_prob = 0.5};
    EXPECT(FC_ERR_NULL_ARG, "desc.dropout.keep_bits", d);
    d = valid();
    d.stats.max = smax;
    EXPECT(FC_ERR_NULL_ARG, "desc.stats.sum", d);
    d.stats.max = NULL, d.stats.sum = ssum;
    EXPECT(FC_ERR_NULL_ARG, "desc.stats.max", d);
}

static void sizes(void)
{
    const struct { int which; int64_t bad; const char *name; } s[] = {
        {0, 0, "desc.batch"}, {0, -1, "desc.batch"}, {0, 2097153, "desc.batch"},
        {1, 0, "desc.q_heads"}, {1, 257, "desc.q_heads"},
        {2, 0, "desc.kv_heads"}, {2, 3, "desc.kv_heads"}, {2, 8, "desc.kv_heads"}, {2, -2, "desc.kv_heads"},
        {3, 0, "desc.head_dim"}, {3, 1025, "desc.head_dim"},
        {4, -1, "desc.v_head_dim"}, {4, 1025, "desc.v_head_dim"},
        {5, -1, "desc.rope_dim"}, {5, 1025, "desc.rope_dim"},
        {6, 0, "desc.q_len"}, {6, 1048577, "desc.q_len"}, {7, 0, "desc.kv_len"}, {7, -3, "desc.kv_len"},
    };
    for (unsigned t = 0; t < sizeof s / sizeof s[0]; t++) {
        fc_attention_desc d = valid();
        int64_t *f[] = {&d.batch, &d.q_heads, &d.kv_heads, &d.head_dim, &d.v_head_dim, &d.rope_dim, &d.q_len, &d.kv_len};
        *f[s[t].which] = s[t].bad;
        EXPECT(FC_ERR_INVALID_ARG, s[t].name, d);
    }
    fc_attention_desc d = valid();
    int64_t ql[B] = {S, S + 1}, kl[B] = {S, S};
    d.q_lens = ql, d.kv_lens = kl;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 0, kl[0] = S + 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_lens[0]", d);
    kl[0] = 0;
    EXPECT_OK(d); /* zero lengths are fine */
    d = valid();
    d.packed = true, d.q_lens = ql, d.kv_lens = kl;
    d.q = fc_tensor_tnd(q, FC_F32, NQ, D), d.k = fc_tensor_tnd(k, FC_F32, NKV, D), d.v = fc_tensor_tnd(v, FC_F32, NKV, D);
    d.out = fc_tensor_tnd(out, FC_F32, NQ, D);
    ql[0] = 2, ql[1] = -1, kl[0] = 3, kl[1] = 3;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 1048577;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 4, kl[1] = -2;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_lens[1]", d);
    kl[1] = 3;
    d.q_len = d.kv_len = 0; /* ignored when packed */
    d.q.stride_batch = -5;  /* ignored when packed */
    EXPECT_OK(d);
}

static void operands(void)
{
    const char *names[] = {"desc.q", "desc.k", "desc.v", "desc.out"};
    for (int t = 0; t < 4; t++) {
        fc_attention_desc d = valid();
        fc_tensor *ts[] = {&d.q, &d.k, &d.v, &d.out};
        char dt[32], al[32];
        snprintf(dt, sizeof dt, "%s.dtype", names[t]);
        snprintf(al, sizeof al, "%s.data", names[t]);
        const fc_dtype bad[] = {FC_I8, FC_U8, FC_BOOL, FC_I32, FC_I64, (fc_dtype)99};
        for (int b = 0; b < 6; b++) {
            ts[t]->dtype = bad[b];
            EXPECT(FC_ERR_INVALID_ARG, dt, d);
        }
        ts[t]->dtype = FC_F32;
        int64_t *strides[] = {&ts[t]->stride_batch, &ts[t]->stride_head, &ts[t]->stride_seq, &ts[t]->stride_dim};
        for (int s = 0; s < 4; s++) {
            const int64_t keep_s = *strides[s];
            *strides[s] = -1;
            EXPECT2(FC_ERR_INVALID_ARG, names[t], "stride", d);
            *strides[s] = keep_s;
        }
        ts[t]->data = (char *)ts[t]->data + 2; /* not a multiple of 4 bytes */
        EXPECT(FC_ERR_INVALID_ARG, al, d);
        ts[t]->dtype = FC_F16; /* 2-byte aligned is fine for fp16 */
        EXPECT_OK(d);
        ts[t]->data = (char *)ts[t]->data + 1;
        EXPECT(FC_ERR_INVALID_ARG, al, d);
    }
    fc_attention_desc d = valid();
    d.rope_dim = 4;
    d.q_rope = fc_tensor_bnsd(qr, FC_I8, NQ, S, 4), d.k_rope = fc_tensor_bnsd(kr, FC_F32, NKV, S, 4);
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_rope.dtype", d);
    d.q_rope.dtype = FC_F32, d.k_rope.stride_seq = -4;
    EXPECT(FC_ERR_INVALID_ARG, "desc.k_rope", d);
    d = valid();
    d.rope_dim = 0, d.q_rope.dtype = (fc_dtype)77; /* rope operands unused without rope_dim */
    EXPECT_OK(d);

    /* outputs that overlap themselves */
    const struct { int64_t sb, sh, ss, sd; } ov[] = {
        {NQ * S * D, S * D, 0, 1}, {NQ * S * D, 1, D, 1}, {0, S * D, D, 1}, {NQ * S * D, S * D, D, 0},
        {NQ * S * D, S * D, 4, 1},
    };
    for (int t = 0; t < 5; t++) {
        d = valid();
        d.out.stride_batch = ov[t].sb, d.out.stride_head = ov[t].sh, d.out.stride_seq = ov[t].ss, d.out.stride_dim = ov[t].sd;
        EXPECT(FC_ERR_INVALID_ARG, "desc.out", d);
    }
    d = valid();
    d.out = fc_tensor_bsnd(out, FC_F32, NQ, S, D); /* other orders are fine */
    EXPECT_OK(d);
}

static void options(void)
{
    fc_attention_desc d = valid();
    fc_options o = {.threads = -1};
    EXPECT_OPT(FC_ERR_INVALID_ARG, "options.threads", d, &o);
    o.threads = 4097;
    EXPECT_OPT(FC_ERR_INVALID_ARG, "options.threads", d, &o);
    o.threads = 0, o.backend = FC_BACKEND_CUDA; /* not built in this library */
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
    const double bad_scales[] = {NAN, INFINITY, -INFINITY};
    for (int t = 0; t < 3; t++) {
        d.scale = bad_scales[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.scale", d);
    }
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

static void body(void)
{
    EXPECT_OK(valid());
    null_pointers();
    sizes();
    operands();
    options();
    score_options();
    visibility();
    dropout_and_stats();
    plan_calls();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_errors", body); }
