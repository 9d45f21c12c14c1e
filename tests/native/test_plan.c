/* Plans: fc_plan_run with a rebound fc_attention_io, repeated runs, bit-identical results for
 * every thread count and for fc_attention (semantics §9p, §8.17), workspace handling, FLOP counts,
 * the description of what a plan runs (fc_plan_describe) and the tensor helpers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"

/* ---------------------------------------------------------------------------------------------- */
/* Rebinding: one problem with every operand, two complete sets of buffers. */

enum { B = 2, N1 = 4, N2 = 2, S = 12, D = 8, DR = 4, DV = 6 };

typedef struct io_set {
    float q[B * N1 * S * D], k[B * N2 * S * D], v[B * N2 * S * DV], qr[B * N1 * S * DR], kr[B * N2 * S * DR];
    float out[B * N1 * S * DV], bias[N1 * S * S], slopes[N1], sink[N1], smax[B * N1 * S * 8], ssum[B * N1 * S * 8];
    uint8_t mask[S * S], keep[(B * N1 * S * S + 7) / 8];
} io_set;

static void fill(io_set *s, uint64_t seed)
{
    tc_rng r = tc_rng_seed(seed);
#define FILL(a, lo, hi) for (size_t t = 0; t < sizeof s->a / sizeof s->a[0]; t++) s->a[t] = (float)tc_rng_uniform(&r, lo, hi)
    FILL(q, -1, 1); FILL(k, -1, 1); FILL(v, -1, 1); FILL(qr, -1, 1); FILL(kr, -1, 1);
    FILL(bias, -1, 1); FILL(slopes, 0.05, 0.5); FILL(sink, -1, 1);
#undef FILL
    for (int t = 0; t < S * S; t++)
        s->mask[t] = tc_rng_bool(&r, 0.2);
    for (size_t t = 0; t < sizeof s->keep; t++)
        s->keep[t] = (uint8_t)tc_rng_u64(&r);
    memset(s->out, 0xA5, sizeof s->out);
    memset(s->smax, 0xA5, sizeof s->smax);
    memset(s->ssum, 0xA5, sizeof s->ssum);
}

static fc_attention_desc full_desc(io_set *s)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = N1, d.kv_heads = N2, d.head_dim = D, d.v_head_dim = DV, d.rope_dim = DR;
    d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(s->q, FC_F32, N1, S, D);
    d.k = fc_tensor_bnsd(s->k, FC_F32, N2, S, D);
    d.v = fc_tensor_bnsd(s->v, FC_F32, N2, S, DV);
    d.q_rope = fc_tensor_bnsd(s->qr, FC_F32, N1, S, DR);
    d.k_rope = fc_tensor_bnsd(s->kr, FC_F32, N2, S, DR);
    d.out = fc_tensor_bnsd(s->out, FC_F32, N1, S, DV);
    d.bias = (fc_bias){.data = s->bias, .dtype = FC_F32, .rows = S, .cols = S, .stride_head = S * S,
                       .stride_row = S, .stride_col = 1};
    d.alibi = (fc_alibi){.slopes = s->slopes, .stride_head = 1};
    d.sink = s->sink;
    d.vis.window = fc_window_band(6, 1, FC_ALIGN_TOP_LEFT);
    d.vis.mask = (fc_mask){.data = s->mask, .dtype = FC_U8, .stride_row = S, .stride_col = 1};
    d.dropout = (fc_dropout){.keep_bits = s->keep, .keep_bits_bytes = sizeof s->keep, .keep_prob = 0.8};
    d.stats = (fc_stats){.max = s->smax, .sum = s->ssum, .order = FC_STATS_HEAD_MAJOR, .replicas = 8};
    return d;
}

static fc_attention_io io_of(io_set *s)
{
    return (fc_attention_io){.q = s->q, .k = s->k, .v = s->v, .q_rope = s->qr, .k_rope = s->kr, .out = s->out,
                             .bias = s->bias, .mask = s->mask, .slopes = s->slopes, .sink = s->sink,
                             .keep_bits = s->keep, .stats_max = s->smax, .stats_sum = s->ssum};
}

static bool same_outputs(const io_set *a, const io_set *b)
{
    return memcmp(a->out, b->out, sizeof a->out) == 0 && memcmp(a->smax, b->smax, sizeof a->smax) == 0 &&
           memcmp(a->ssum, b->ssum, sizeof a->ssum) == 0;
}

static void rebind(void)
{
    tc_context("fc_plan_run with a rebound fc_attention_io");
    io_set *A = malloc(sizeof *A), *Bs = malloc(sizeof *Bs), *want = malloc(sizeof *want);
    fill(A, 1), fill(Bs, 2);
    fc_attention_desc da = full_desc(A);
    fc_plan *plan = NULL;
    TC_CHECK(fc_plan_create(&da, NULL, &plan) == FC_OK, "plan: %s", fc_last_error());
    size_t ws_bytes = 0;
    fc_plan_workspace_size(plan, &ws_bytes);
    void *ws = malloc(ws_bytes ? ws_bytes : 1);

    /* every address rebound: equals a fresh call on set B, and set A stays untouched */
    *want = *Bs;
    fc_attention_desc dw = full_desc(want);
    TC_CHECK(fc_attention(&dw) == FC_OK, "fc_attention: %s", fc_last_error());
    const fc_attention_io io = io_of(Bs);
    TC_CHECK(fc_plan_run(plan, &io, ws, ws_bytes) == FC_OK, "run: %s", fc_last_error());
    TC_CHECK(same_outputs(Bs, want), "all fields rebound: outputs differ from a fresh call on the new buffers");
    io_set pristine;
    fill(&pristine, 1);
    TC_CHECK(same_outputs(A, &pristine), "the planned output buffers were written although out was rebound");

    /* a NULL io and an all-NULL io use the planned addresses */
    TC_CHECK(fc_plan_run(plan, NULL, ws, ws_bytes) == FC_OK, "run NULL io");
    *want = *A;
    dw = full_desc(want);
    fc_attention(&dw);
    TC_CHECK(same_outputs(A, want), "io = NULL: planned addresses");
    memset(A->out, 0, sizeof A->out);
    const fc_attention_io none = {0};
    fc_plan_run(plan, &none, ws, ws_bytes);
    TC_CHECK(same_outputs(A, want), "all-NULL io: planned addresses");

    /* each input rebound alone (the rest planned): equals a fresh call with that one field from B */
    const char *names[] = {"q", "k", "v", "q_rope", "k_rope", "bias", "mask", "slopes", "sink", "keep_bits"};
    for (int f = 0; f < 10; f++) {
        fc_attention_io one = {0};
        *want = *A;
        switch (f) {
        case 0: one.q = Bs->q, memcpy(want->q, Bs->q, sizeof Bs->q); break;
        case 1: one.k = Bs->k, memcpy(want->k, Bs->k, sizeof Bs->k); break;
        case 2: one.v = Bs->v, memcpy(want->v, Bs->v, sizeof Bs->v); break;
        case 3: one.q_rope = Bs->qr, memcpy(want->qr, Bs->qr, sizeof Bs->qr); break;
        case 4: one.k_rope = Bs->kr, memcpy(want->kr, Bs->kr, sizeof Bs->kr); break;
        case 5: one.bias = Bs->bias, memcpy(want->bias, Bs->bias, sizeof Bs->bias); break;
        case 6: one.mask = Bs->mask, memcpy(want->mask, Bs->mask, sizeof Bs->mask); break;
        case 7: one.slopes = Bs->slopes, memcpy(want->slopes, Bs->slopes, sizeof Bs->slopes); break;
        case 8: one.sink = Bs->sink, memcpy(want->sink, Bs->sink, sizeof Bs->sink); break;
        default: one.keep_bits = Bs->keep, memcpy(want->keep, Bs->keep, sizeof Bs->keep); break;
        }
        dw = full_desc(want);
        fc_attention(&dw);
        fc_plan_run(plan, &one, ws, ws_bytes);
        TC_CHECK(same_outputs(A, want), "only %s rebound: outputs differ", names[f]);
    }
    fc_plan_destroy(plan);
    free(ws), free(A), free(Bs), free(want);
}

/* ---------------------------------------------------------------------------------------------- */

/* Bit-identical outputs for threads 1, 2, 3 and the default, for fc_attention and repeated runs. */
static void determinism(void)
{
    static const int sq[3] = {70, 0, 33}, skv[3] = {50, 9, 130};
    for (int v = 0; v < 5; v++) {
        nt_case c = nt_default();
        c.seed = 6000 + v;
        c.B = 3, c.N1 = 6, c.N2 = 2, c.D = 24, c.Dv = 20, c.Sq = 70, c.Skv = 130;
        c.stats = true, c.replicas = 8;
        c.packed = v == 1, c.lens = v == 2;
        c.sq = c.packed || c.lens ? sq : NULL, c.skv = c.packed || c.lens ? skv : NULL;
        c.window = v == 3 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
        c.keep_prob = v == 4 ? 0.7 : 1;
        c.sink = v == 4 ? NT_SINK_FINITE : NT_SINK_NONE;
        c.dt = c.out_dt = v == 2 ? FC_BF16 : FC_F32;
        tc_context("determinism variant %d", v);
        nt_data d = nt_prepare(&c);
        nt_result r1, r;
        c.threads = 1;
        nt_execute(&c, &d, &r1);
        const int threads[] = {2, 3, 0, 2};
        for (int t = 0; t < 4; t++) {
            c.threads = threads[t];
            c.oneshot = t == 3;
            nt_execute(&c, &d, &r);
            TC_CHECK(nt_bitwise_equal(&r1, &r), "threads=%d oneshot=%d differs bitwise from threads=1", threads[t],
                     c.oneshot);
            nt_result_free(&r);
        }
        nt_result_free(&r1);
        nt_data_free(&d);
    }
}

/* The same plan run repeatedly, and with a workspace larger than asked for. */
static void repeated_runs(void)
{
    tc_context("repeated runs of one plan");
    io_set *A = malloc(sizeof *A);
    fill(A, 3);
    fc_attention_desc d = full_desc(A);
    fc_options opt = {.threads = 2};
    fc_plan *plan;
    TC_CHECK(fc_plan_create(&d, &opt, &plan) == FC_OK, "plan");
    size_t ws_bytes;
    fc_plan_workspace_size(plan, &ws_bytes);
    char *ws = malloc(ws_bytes + 4096);
    fc_plan_run(plan, NULL, ws, ws_bytes);
    float first[sizeof A->out / sizeof(float)];
    memcpy(first, A->out, sizeof first);
    int same = 1;
    for (int k = 0; k < 5; k++) {
        memset(A->out, 0, sizeof A->out);
        TC_CHECK(fc_plan_run(plan, NULL, ws, ws_bytes + 4096 * (k & 1)) == FC_OK, "run %d", k);
        same &= memcmp(first, A->out, sizeof first) == 0;
    }
    TC_CHECK(same, "repeated runs differ");
    TC_CHECK(fc_last_error()[0] == '\0', "fc_last_error after success: \"%s\"", fc_last_error());
    /* a CPU run fails before it writes: nothing is left for a later report */
    TC_CHECK(fc_plan_check_runs(plan, true) == FC_OK && fc_plan_check_runs(plan, false) == FC_OK, "check_runs: %s",
             fc_last_error());
    TC_CHECK(fc_plan_check_runs(NULL, true) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "fc_plan_check_runs: plan is NULL"),
             "check_runs of NULL: %s", fc_last_error());
    fc_plan_destroy(plan);
    fc_plan_destroy(NULL); /* allowed, does nothing */
    free(ws), free(A);
}

/* options.backend = FC_BACKEND_CPU and any options.stream give the bytes of the default (the CPU
 * runs in the caller's thread: the results are there when fc_plan_run returns). */
static void backend_and_stream(void)
{
    tc_context("options.backend CPU with a stream");
    io_set *A = malloc(sizeof *A);
    fill(A, 5);
    fc_attention_desc d = full_desc(A);
    float want[sizeof A->out / sizeof(float)];
    TC_CHECK(fc_attention(&d) == FC_OK, "default run: %s", fc_last_error());
    memcpy(want, A->out, sizeof want);
    static int some_stream;
    const fc_options opt = {.backend = FC_BACKEND_CPU, .stream = &some_stream};
    fc_plan *plan = NULL;
    if (TC_CHECK(fc_plan_create(&d, &opt, &plan) == FC_OK, "plan: %s", fc_last_error())) {
        size_t n = 0;
        fc_plan_workspace_size(plan, &n);
        void *ws = malloc(n ? n : 1);
        memset(A->out, 0, sizeof A->out);
        TC_CHECK(fc_plan_run(plan, NULL, ws, n) == FC_OK, "run: %s", fc_last_error());
        TC_CHECK(memcmp(want, A->out, sizeof want) == 0, "the CPU backend with a stream differs from the default");
        free(ws);
        fc_plan_destroy(plan);
    }
    free(A);
}

/* A plan keeps what it needs: the description and its per-batch arrays (lengths, prefixes,
 * windows) may be gone when the plan runs (ASan sees any use after free). */
static void plan_owns_its_description(void)
{
    tc_context("plan outlives its description");
    enum { NB = 3, H = 2, E = 8, T = 12 };
    static float qb[T * H * E], kb[T * H * E], vb[T * H * E], o1[T * H * E], o2[T * H * E];
    tc_rng r = tc_rng_seed(11);
    for (int t = 0; t < T * H * E; t++)
        qb[t] = (float)tc_rng_uniform(&r, -1, 1), kb[t] = (float)tc_rng_uniform(&r, -1, 1), vb[t] = (float)tc_rng_uniform(&r, -1, 1);
    int64_t *ql = malloc(NB * sizeof(int64_t)), *kl = malloc(NB * sizeof(int64_t)), *pre = malloc(NB * sizeof(int64_t));
    fc_window *bw = malloc(NB * sizeof(fc_window));
    const int64_t lq[NB] = {5, 0, 7}, lk[NB] = {4, 6, 2}, pf[NB] = {1, 0, 2};
    for (int b = 0; b < NB; b++)
        ql[b] = lq[b], kl[b] = lk[b], pre[b] = pf[b], bw[b] = fc_window_band(b, 0, (fc_align)(b & 1));
    fc_attention_desc *d = malloc(sizeof *d);
    *d = fc_attention_desc_init();
    d->batch = NB, d->q_heads = d->kv_heads = H, d->head_dim = E, d->packed = true, d->q_lens = ql, d->kv_lens = kl;
    d->q = fc_tensor_tnd(qb, FC_F32, H, E), d->k = fc_tensor_tnd(kb, FC_F32, H, E), d->v = fc_tensor_tnd(vb, FC_F32, H, E);
    d->out = fc_tensor_tnd(o1, FC_F32, H, E);
    d->vis.prefix = pre, d->vis.batch_window = bw;
    fc_plan *plan = NULL;
    if (!TC_CHECK(fc_plan_create(d, NULL, &plan) == FC_OK, "plan: %s", fc_last_error()))
        return;
    size_t n;
    fc_plan_workspace_size(plan, &n);
    void *ws = malloc(n ? n : 1);
    fc_plan_run(plan, NULL, ws, n);
    memset(d, 0xff, sizeof *d);
    free(d), free(ql), free(kl), free(pre), free(bw);
    const fc_attention_io io = {.out = o2};
    TC_CHECK(fc_plan_run(plan, &io, ws, n) == FC_OK, "run after the description is gone: %s", fc_last_error());
    TC_CHECK(memcmp(o1, o2, sizeof o1) == 0, "results changed once the description was freed");
    fc_plan_destroy(plan);
    free(ws);
}

/* fc_plan_flops counts 2·(D + Dr) + 2·Dv per visible score. */
static void flops(void)
{
    tc_context("fc_plan_flops");
    static float buf[4 * 64 * 64];
    const int64_t lens[2] = {5, 64};
    struct { fc_window w; const int64_t *qlens; int64_t prefix; double visible; } cases[] = {
        {{0}, NULL, 0, 2.0 * 64 * 64},
        {fc_window_causal(FC_ALIGN_TOP_LEFT), NULL, 0, 2.0 * 64 * 65 / 2},
        {fc_window_band(3, 0, FC_ALIGN_TOP_LEFT), NULL, 0, 2.0 * (64 * 4 - 6)},
        {fc_window_band(0, 0, FC_ALIGN_TOP_LEFT), NULL, 10, 2.0 * (10 * 10 + 54 * 11)},
        {{0}, lens, 0, (5.0 + 64) * 64},
    };
    for (int k = 0; k < 5; k++) {
        fc_attention_desc d = fc_attention_desc_init();
        d.batch = 2, d.q_heads = 2, d.kv_heads = 1, d.head_dim = 8, d.v_head_dim = 4, d.rope_dim = 2;
        d.q_len = d.kv_len = 64;
        d.q_lens = cases[k].qlens;
        d.q = d.k = d.q_rope = d.k_rope = fc_tensor_bnsd(buf, FC_F32, 2, 64, 8);
        d.v = fc_tensor_bnsd(buf, FC_F32, 2, 64, 4);
        d.out = fc_tensor_bnsd(buf, FC_F32, 2, 64, 4);
        d.vis.window = cases[k].w;
        const int64_t prefix[2] = {cases[k].prefix, cases[k].prefix};
        d.vis.prefix = cases[k].prefix ? prefix : NULL;
        fc_plan *plan;
        double f = -1;
        TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "plan %d: %s", k, fc_last_error());
        TC_CHECK(fc_plan_flops(plan, &f) == FC_OK, "flops %d", k);
        const double want = cases[k].visible * 2 /* heads */ * (2 * (8 + 2) + 2 * 4);
        TC_CHECK(f == want, "case %d: %.0f flops, want %.0f", k, f, want);
        fc_plan_destroy(plan);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* fc_plan_describe: the kernels chosen at planning, per kernel set. */

typedef struct dsc_case {
    fc_dtype dt;
    int N1, N2, Sq, Skv, D;
    bool backward;
    int threads; /* 0: the default */
} dsc_case;

/* The description of a plan for c (false when the plan fails). */
static bool describe_case(const dsc_case *c, char *text, size_t len)
{
    const size_t es = fc_dtype_size(c->dt), nq = (size_t)c->N1 * c->Sq * c->D, nkv = (size_t)c->N2 * c->Skv * c->D;
    void *q = calloc(nq, es), *k = calloc(nkv, es), *v = calloc(nkv, es), *o = calloc(nq, es);
    void *dq = calloc(nq, es), *dk = calloc(nkv, es), *dv = calloc(nkv, es);
    float *mx = calloc((size_t)c->N1 * c->Sq, sizeof(float)), *sm = calloc((size_t)c->N1 * c->Sq, sizeof(float));
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = c->N1, d.kv_heads = c->N2, d.head_dim = c->D, d.q_len = c->Sq, d.kv_len = c->Skv;
    d.q = fc_tensor_bnsd(q, c->dt, c->N1, c->Sq, c->D);
    d.k = fc_tensor_bnsd(k, c->dt, c->N2, c->Skv, c->D);
    d.v = fc_tensor_bnsd(v, c->dt, c->N2, c->Skv, c->D);
    d.out = fc_tensor_bnsd(o, c->dt, c->N1, c->Sq, c->D);
    d.stats = (fc_stats){.max = mx, .sum = sm, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    const fc_attention_grads g = {.d_out = d.out, .dq = fc_tensor_bnsd(dq, c->dt, c->N1, c->Sq, c->D),
                                  .dk = fc_tensor_bnsd(dk, c->dt, c->N2, c->Skv, c->D),
                                  .dv = fc_tensor_bnsd(dv, c->dt, c->N2, c->Skv, c->D)};
    fc_plan *plan = NULL;
    const fc_options opts = {.threads = c->threads};
    const fc_options *o_or_default = c->threads ? &opts : NULL;
    const fc_status st = c->backward ? fc_plan_create_backward(&d, &g, o_or_default, &plan)
                                     : fc_plan_create(&d, o_or_default, &plan);
    const bool ok = TC_CHECK(st == FC_OK, "plan: %s", fc_last_error()) &&
                    TC_CHECK(fc_plan_describe(plan, text, len) == FC_OK, "describe: %s", fc_last_error());
    fc_plan_destroy(plan);
    free(q), free(k), free(v), free(o), free(dq), free(dk), free(dv), free(mx), free(sm);
    return ok;
}

static void expect_in(const char *text, const char *part)
{
    TC_CHECK(strstr(text, part) != NULL, "the description lacks \"%s\": %s", part, text);
}

static void describe(void)
{
    tc_context("fc_plan_describe");
    const char *isa = fc_cpu_isa();
    const bool tile_set = !strcmp(isa, "amx") || !strcmp(isa, "avx512bf16"), wide = tile_set || !strcmp(isa, "avx512");
    const bool bfdot_set = !strcmp(isa, "neonbf16"); /* bf16 products without the fused pipeline */
    char text[512], key[64];
    snprintf(key, sizeof key, "isa=%s ", isa);
    const dsc_case fp32 = {FC_F32, 4, 2, 300, 300, 64, false, 0};
    if (describe_case(&fp32, text, sizeof text)) {
        expect_in(text, "backend=cpu op=forward "), expect_in(text, key), expect_in(text, "kernel=gemm ");
        expect_in(text, wide || !strcmp(isa, "avx2") ? "item_rows=192 kv_cols=128 " : "item_rows=64 kv_cols=64 ");
        char part[12]; /* truncated: the first len − 1 characters, terminated */
        describe_case(&fp32, part, sizeof part);
        TC_CHECK(strlen(part) == sizeof part - 1 && !strncmp(part, text, sizeof part - 1), "truncated: \"%s\"", part);
        TC_CHECK(fc_plan_describe(NULL, text, sizeof text) == FC_ERR_NULL_ARG, "a NULL plan");
    }
    const dsc_case bf16 = {FC_BF16, 4, 2, 300, 300, 64, false, 0}; /* bf16 output: the fused pipeline where tiles pay */
    if (describe_case(&bf16, text, sizeof text))
        expect_in(text, tile_set    ? "kernel=fused few_rows_kernel=decode item_rows=512 kv_cols=512 "
                        : bfdot_set ? "kernel=tiles few_rows_kernel=decode item_rows=128 kv_cols=256 "
                                    : "kernel=gemm ");
    const dsc_case dec = {FC_F16, 8, 2, 1, 4096, 128, false, 0}; /* 4 rows per item, 2 items: kv slices */
    if (describe_case(&dec, text, sizeof text)) {
        expect_in(text, strcmp(isa, "scalar") ? "few_rows_kernel=decode " : "few_rows_kernel=dots ");
        expect_in(text, !strcmp(isa, "amx") ? "items=2 splits=2 " : "items=2 splits=8 "); /* amx: 512-column tiles */
    }
    const dsc_case bwd = {FC_F32, 2, 1, 200, 200, 32, true, 0};
    if (describe_case(&bwd, text, sizeof text))
        expect_in(text, "op=backward "), expect_in(text, "products=fp32 schedule=two_passes ");
    /* 8 kv heads at 1 thread: one item per kv head, 512 kv rows of fp32 tiles at a time */
    const dsc_case fused = {FC_F32, 8, 8, 200, 200, 32, true, 1};
    if (describe_case(&fused, text, sizeof text))
        expect_in(text, "products=fp32 schedule=fused_heads "), expect_in(text, " items=8 threads=1 ");
    const dsc_case bwd16 = {FC_BF16, 4, 2, 200, 200, 64, true, 0};
    if (describe_case(&bwd16, text, sizeof text))
        expect_in(text, !strcmp(isa, "amx") ? "products=elements " : "products=fp32 "),
            expect_in(text, tile_set || bfdot_set || !strcmp(isa, "avx2") ? "item_rows=128 kv_cols=128 kv_item_rows=128 "
                                                                         : "item_rows=64 kv_cols=64 ");
}

static void tensor_helpers(void)
{
    tc_context("fc_tensor helpers");
    char x[2];
    fc_tensor t = fc_tensor_bnsd(x, FC_F16, 3, 5, 7);
    TC_CHECK(t.data == x && t.dtype == FC_F16 && t.stride_dim == 1 && t.stride_seq == 7 && t.stride_head == 35 &&
                 t.stride_batch == 105, "bnsd strides %lld %lld %lld %lld", (long long)t.stride_batch,
             (long long)t.stride_head, (long long)t.stride_seq, (long long)t.stride_dim);
    t = fc_tensor_bsnd(x, FC_F32, 3, 5, 7);
    TC_CHECK(t.stride_dim == 1 && t.stride_head == 7 && t.stride_seq == 21 && t.stride_batch == 105, "bsnd strides");
    t = fc_tensor_sbnd(x, FC_BF16, 4, 3, 7);
    TC_CHECK(t.stride_dim == 1 && t.stride_head == 7 && t.stride_batch == 21 && t.stride_seq == 84, "sbnd strides");
    t = fc_tensor_tnd(x, FC_F32, 3, 7);
    TC_CHECK(t.stride_dim == 1 && t.stride_head == 7 && t.stride_seq == 21, "tnd strides");
    TC_CHECK(fc_dtype_size(FC_F32) == 4 && fc_dtype_size(FC_BF16) == 2 && fc_dtype_size(FC_BOOL) == 1 &&
                 fc_dtype_size(FC_I64) == 8 && fc_dtype_size((fc_dtype)99) == 0, "fc_dtype_size");
    TC_CHECK(strcmp(fc_status_name(FC_ERR_WORKSPACE), "FC_ERR_WORKSPACE") == 0, "fc_status_name");
    const fc_attention_desc d = fc_attention_desc_init();
    TC_CHECK(d.dropout.keep_prob == 1 && d.scale == 0 && !d.vis.window.enabled && !d.packed && d.stats.max == NULL,
             "fc_attention_desc_init: every option off");
    const fc_window w = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    TC_CHECK(w.enabled && w.left == FC_UNBOUNDED && w.right == 0 && w.align == FC_ALIGN_BOTTOM_RIGHT, "causal window");
}

static void body(void)
{
    rebind();
    determinism();
    repeated_runs();
    backend_and_stream();
    plan_owns_its_description();
    flops();
    describe();
    tensor_helpers();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_plan", body); }
