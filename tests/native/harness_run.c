/* nt_execute: lay the data out for the library, run it and the reference, then check (harness_check.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness_internal.h"
#include "reference/reference.h"
#include "reference/rules_native.h"

/* The operand in the library's buffer: logical values at their offsets, NaN in every gap. */
static void *build_input(const nt_case *c, const nt_data *d, nt_operand which, const double *logical, nt_geom *g)
{
    *g = nt_operand_geom(c, d, which);
    const bool kv = which == NT_K || which == NT_V || which == NT_KR;
    const int E = which == NT_Q || which == NT_K ? c->D : which == NT_QR || which == NT_KR ? c->Dr : d->Dv;
    const int N = kv ? c->N2 : c->N1, cap = kv ? d->S2cap : d->S1cap;
    const int *len = kv ? d->s2 : d->s1;
    const tc_dtype t = nt_tc(c->dt);
    void *buf = nt_xmalloc((size_t)g->count * tc_dtype_size(t));
    for (int64_t k = 0; k < g->count; k++)
        tc_store(t, buf, k, NAN);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (c->packed ? len[b] : cap); s++)
                for (int e = 0; e < E; e++)
                    tc_store(t, buf, nt_offset(c, d, g, which, b, n, s, e),
                             logical[(((int64_t)b * N + n) * cap + s) * E + e]);
    return buf;
}

static fc_tensor tensor(void *data, fc_dtype dt, const nt_geom *g)
{
    return (fc_tensor){.data = data, .dtype = dt, .stride_batch = g->sb, .stride_head = g->sh, .stride_seq = g->ss,
                       .stride_dim = g->sd};
}

static ref_window ref_win(const fc_window *w)
{
    return (ref_window){.enabled = w->enabled, .left = w->left, .right = w->right,
                        .bottom_right = w->align == FC_ALIGN_BOTTOM_RIGHT};
}

static fc_attention_desc make_desc(const nt_case *c, const nt_data *d, nt_bufs *L)
{
    fc_attention_desc a = fc_attention_desc_init();
    a.batch = c->B, a.q_heads = c->N1, a.kv_heads = c->N2;
    a.head_dim = c->D, a.v_head_dim = c->v_dim_zero ? 0 : d->Dv, a.rope_dim = c->Dr;
    a.packed = c->packed;
    a.q_len = c->packed ? 0 : c->Sq; /* ignored when packed */
    a.kv_len = c->packed ? 0 : c->Skv;
    if (c->packed || c->lens) {
        L->q_lens = nt_xmalloc(sizeof(int64_t) * (size_t)c->B);
        L->kv_lens = nt_xmalloc(sizeof(int64_t) * (size_t)c->B);
        for (int b = 0; b < c->B; b++)
            L->q_lens[b] = d->s1[b], L->kv_lens[b] = d->s2[b];
        a.q_lens = L->q_lens, a.kv_lens = L->kv_lens;
    }
    L->q = build_input(c, d, NT_Q, d->q, &L->gq);
    L->k = build_input(c, d, NT_K, d->k, &L->gk);
    L->v = build_input(c, d, NT_V, d->v, &L->gv);
    a.q = tensor(L->q, c->dt, &L->gq), a.k = tensor(L->k, c->dt, &L->gk), a.v = tensor(L->v, c->dt, &L->gv);
    if (c->Dr > 0) {
        L->qr = build_input(c, d, NT_QR, d->qr, &L->gqr);
        L->kr = build_input(c, d, NT_KR, d->kr, &L->gkr);
        a.q_rope = tensor(L->qr, c->dt, &L->gqr), a.k_rope = tensor(L->kr, c->dt, &L->gkr);
    }
    L->gout = nt_operand_geom(c, d, NT_OUT);
    L->out = nt_xmalloc((size_t)L->gout.count * tc_dtype_size(nt_tc(c->out_dt)));
    nt_fill_sentinel(c->out_dt, L->out, L->gout.count);
    a.out = tensor(L->out, c->out_dt, &L->gout);
    a.scale = c->scale;
    a.softcap = c->softcap;
    if (c->bias.on) {
        const nt_bias_spec *s = &c->bias;
        L->bias = nt_xmalloc((size_t)d->bias_n * tc_dtype_size(nt_tc(s->dtype)));
        for (int64_t k = 0; k < d->bias_n; k++)
            tc_store(nt_tc(s->dtype), L->bias, k, d->bias[k]);
        a.bias = (fc_bias){.data = L->bias, .dtype = s->dtype, .order = s->order, .rows = d->bias_rows,
                           .cols = d->bias_cols, .stride_batch = d->bias_st[0], .stride_head = d->bias_st[1],
                           .stride_row = d->bias_st[2], .stride_col = d->bias_st[3],
                           .bottom_right = s->bottom_right, .compressed = s->compressed};
    }
    if (c->alibi.on)
        a.alibi = (fc_alibi){.slopes = d->slopes, .stride_batch = d->slope_st[0], .stride_head = d->slope_st[1],
                             .sqrt_distance = c->alibi.sqrt_distance};
    /* optional data is used only when the case enables it (tests may share nt_data) */
    a.sink = c->sink != NT_SINK_NONE ? d->sink : NULL;
    a.vis.window = c->window;
    a.vis.batch_window = c->batch_windows ? d->bwin : NULL;
    a.vis.prefix = c->prefix ? d->prefix : NULL;
    a.vis.q_start = c->q_start, a.vis.kv_start = c->kv_start;
    if (c->mask.on)
        a.vis.mask = (fc_mask){.data = d->mask, .dtype = c->mask.dtype, .stride_batch = d->mask_st[0],
                               .stride_head = d->mask_st[1], .stride_row = d->mask_st[2],
                               .stride_col = d->mask_st[3], .by_tokens = c->mask.by_tokens};
    a.dropout = (fc_dropout){.keep_bits = d->keep, .keep_bits_bytes = (size_t)d->keep_n, .keep_prob = c->keep_prob};
    if (c->stats) {
        L->stat_n = nt_stat_count(c, d);
        L->smax = nt_xmalloc(sizeof(float) * (size_t)(L->stat_n + NT_STAT_GUARD));
        L->ssum = nt_xmalloc(sizeof(float) * (size_t)(L->stat_n + NT_STAT_GUARD));
        nt_fill_sentinel(FC_F32, L->smax, L->stat_n + NT_STAT_GUARD);
        nt_fill_sentinel(FC_F32, L->ssum, L->stat_n + NT_STAT_GUARD);
        a.stats = (fc_stats){.max = L->smax, .sum = L->ssum, .order = c->stats_order, .replicas = c->replicas};
    }
    return a;
}

static fc_status run_library(const nt_case *c, const fc_attention_desc *a, size_t *ws_bytes)
{
    *ws_bytes = 0;
    if (c->oneshot)
        return fc_attention(a);
    fc_options opt = {.backend = FC_BACKEND_DEFAULT, .threads = c->threads};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(a, &opt, &plan);
    if (st != FC_OK)
        return st;
    if ((st = fc_plan_workspace_size(plan, ws_bytes)) == FC_OK) {
        void *ws = *ws_bytes ? nt_xmalloc(*ws_bytes) : NULL; /* exact size: ASan sees any overrun */
        st = fc_plan_run(plan, NULL, ws, *ws_bytes);
        free(ws);
    }
    fc_plan_destroy(plan);
    return st;
}

/* The reference run on the same logical values (rules_native.h reads the native rules). */
static void run_reference(const nt_case *c, const nt_data *d, nt_result *r)
{
    const int64_t rows = (int64_t)c->B * c->N1 * d->S1cap;
    ref_window *bw = NULL;
    if (c->batch_windows) {
        bw = nt_xmalloc(sizeof(ref_window) * (size_t)c->B);
        for (int b = 0; b < c->B; b++)
            bw[b] = ref_win(&d->bwin[b]);
    }
    double *slopes = NULL, *sink = NULL;
    if (c->alibi.on) {
        slopes = nt_xmalloc(sizeof(double) * (size_t)d->slopes_n);
        for (int64_t k = 0; k < d->slopes_n; k++)
            slopes[k] = d->slopes[k];
    }
    if (c->sink != NT_SINK_NONE) {
        sink = nt_xmalloc(sizeof(double) * (size_t)c->N1);
        for (int n = 0; n < c->N1; n++)
            sink[n] = d->sink[n];
    }
    ref_native rn = {
        .B = c->B, .N1 = c->N1, .S1 = d->s1, .S2 = d->s2,
        .window = ref_win(&c->window), .batch_window = bw, .prefix = c->prefix ? d->prefix : NULL,
        .q_start = c->q_start, .kv_start = c->kv_start,
        .mask = c->mask.on ? d->mask : NULL, .mask_sb = d->mask_st[0], .mask_sh = d->mask_st[1],
        .mask_sr = d->mask_st[2], .mask_sc = d->mask_st[3], .mask_by_tokens = c->mask.by_tokens,
        .bias = c->bias.on ? d->bias : NULL, .bias_before_scale = c->bias.order == FC_BIAS_BEFORE_SCALE,
        .bias_rows = d->bias_rows, .bias_cols = d->bias_cols, .bias_sb = d->bias_st[0], .bias_sh = d->bias_st[1],
        .bias_sr = d->bias_st[2], .bias_sc = d->bias_st[3], .bias_bottom_right = c->bias.bottom_right,
        .bias_compressed = c->bias.compressed,
        .slopes = slopes, .slope_sb = d->slope_st[0], .slope_sh = d->slope_st[1],
        .alibi_sqrt = c->alibi.sqrt_distance, .keep_bits = d->keep,
    };
    ref_fwd f = {
        .B = c->B, .N1 = c->N1, .N2 = c->N2, .D = c->D, .Dv = d->Dv, .Dr = c->Dr,
        .S1cap = d->S1cap, .S2cap = d->S2cap, .S1 = d->s1, .S2 = d->s2,
        .q = d->q, .k = d->k, .v = d->v, .q_rope = d->qr, .k_rope = d->kr,
        .scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)(c->D + c->Dr)),
        .softcap = c->softcap, .sink = sink, .keep_prob = c->keep_prob,
    };
    ref_native_plug(&f, &rn);
    r->ref_out = nt_xmalloc(sizeof(double) * (size_t)(rows * d->Dv));
    r->ref_max = nt_xmalloc(sizeof(double) * (size_t)rows);
    r->ref_sum = nt_xmalloc(sizeof(double) * (size_t)rows);
    r->nvis = nt_xmalloc(sizeof(int) * (size_t)rows);
    ref_forward(&f, r->ref_out, r->ref_max, r->ref_sum);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < c->N1; n++)
            for (int i = 0; i < d->S1cap; i++) {
                const int64_t at = nt_row(c, d->S1cap, b, n, i);
                r->nvis[at] = i < d->s1[b] ? ref_visible(&f, b, n, i) : -1;
            }
    free(bw), free(slopes), free(sink);
}

static void describe(const nt_case *c)
{
    printf("    case: seed=%llu B=%d N1=%d N2=%d D=%d Dv=%d Dr=%d Sq=%d Skv=%d packed=%d lens=%d layout=%d mixed=%d "
           "pad=%d ds=%d kvb=%d qbh=%d dt=%d out=%d scale=%g cap=%g bias=%d(o%d dt%d b%d%d%d%d br%d c%d r%d) "
           "alibi=%d(pb%d sq%d) win=%d(%lld,%lld,%d) bwin=%d prefix=%d qs=%lld ks=%lld mask=%d(dt%d b%d%d%d%d tok%d) "
           "keep=%g all=%d sink=%d stats=%d(o%d r%d) threads=%d oneshot=%d isa=%s\n",
           (unsigned long long)c->seed, c->B, c->N1, c->N2, c->D, c->Dv, c->Dr, c->Sq, c->Skv, c->packed, c->lens,
           c->layout, c->mixed_layouts, c->pad, c->dim_stride, c->kv_bcast_seq, c->q_bcast_head, c->dt, c->out_dt,
           c->scale, c->softcap, c->bias.on, c->bias.order, c->bias.dtype, c->bias.bcast_batch, c->bias.bcast_head,
           c->bias.bcast_row, c->bias.bcast_col, c->bias.bottom_right, c->bias.compressed, c->bias.rows, c->alibi.on,
           c->alibi.per_batch, c->alibi.sqrt_distance, c->window.enabled, (long long)c->window.left,
           (long long)c->window.right, c->window.align, c->batch_windows, c->prefix, (long long)c->q_start,
           (long long)c->kv_start, c->mask.on, c->mask.dtype, c->mask.bcast_batch, c->mask.bcast_head,
           c->mask.bcast_row, c->mask.bcast_col, c->mask.by_tokens, c->keep_prob, c->keep_all, c->sink, c->stats,
           c->stats_order, c->replicas, c->threads, c->oneshot, fc_cpu_isa());
    if (c->sq)
        for (int b = 0; b < c->B; b++)
            printf("      batch %d: sq=%d skv=%d\n", b, c->sq[b], c->skv ? c->skv[b] : c->Skv);
}

int64_t nt_execute(const nt_case *c, const nt_data *d, nt_result *res)
{
    const int before = tc_failures();
    const bool drop = (c->keep_prob > 0 && c->keep_prob < 1) || c->keep_bits_with_p1;
    if (!TC_CHECK((!c->bias.on || d->bias) && (!c->mask.on || d->mask) && (!c->alibi.on || d->slopes) &&
                      (c->sink == NT_SINK_NONE || d->sink) && (!c->prefix || d->prefix) &&
                      (!c->batch_windows || d->bwin) && (!drop || d->keep),
                  "test bug: the case enables a feature its nt_data was not prepared for")) {
        if (res)
            memset(res, 0, sizeof *res);
        return 1;
    }
    nt_bufs L;
    memset(&L, 0, sizeof L);
    nt_result r;
    memset(&r, 0, sizeof r);
    const fc_attention_desc a = make_desc(c, d, &L);
    r.status = run_library(c, &a, &r.workspace);
    const int64_t rows = (int64_t)c->B * c->N1 * d->S1cap;
    r.S1cap = d->S1cap, r.Dv = d->Dv;
    r.out = calloc((size_t)(rows * d->Dv + 1), sizeof(double));
    r.smax = calloc((size_t)rows + 1, sizeof(double));
    r.ssum = calloc((size_t)rows + 1, sizeof(double));
    const bool rejected = c->may_reject && r.status == FC_ERR_INVALID_ARG && strstr(fc_last_error(), c->may_reject);
    if (rejected)
        TC_CHECK(true, "rejected as allowed");
    else if (TC_CHECK(r.status == FC_OK, "library status %s: %s", fc_status_name(r.status), fc_last_error())) {
        run_reference(c, d, &r);
        nt_check_outputs(c, d, &L, &r);
    }
    r.failures = tc_failures() - before;
    if (r.failures)
        describe(c);
    if (res) {
        r.out_raw = L.out, L.out = NULL;
        r.out_bytes = (size_t)L.gout.count * tc_dtype_size(nt_tc(c->out_dt));
        r.stats_raw_max = L.smax, r.stats_raw_sum = L.ssum, L.smax = L.ssum = NULL;
        r.stats_count = (size_t)L.stat_n;
        *res = r;
    } else {
        nt_result_free(&r);
    }
    free(L.q), free(L.k), free(L.v), free(L.qr), free(L.kr), free(L.out), free(L.bias), free(L.smax), free(L.ssum);
    free(L.q_lens), free(L.kv_lens);
    return r.failures;
}

int64_t nt_run(const nt_case *c)
{
    nt_data d = nt_prepare(c);
    const int64_t f = nt_execute(c, &d, NULL);
    nt_data_free(&d);
    return f;
}

void nt_result_free(nt_result *r)
{
    free(r->out), free(r->smax), free(r->ssum), free(r->ref_out), free(r->ref_max), free(r->ref_sum), free(r->nvis);
    free(r->out_raw), free(r->stats_raw_max), free(r->stats_raw_sum);
    memset(r, 0, sizeof *r);
}
