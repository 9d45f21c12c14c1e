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
#include "reference/sparse.h"

/* The operand in the library's buffer: logical values at their offsets, NaN in every gap (int8
 * key/value: their raw values, gaps 0x5A). */
void *nt_build_input(const nt_case *c, const nt_data *d, nt_operand which, const double *logical, fc_dtype dt, nt_geom *g)
{
    *g = nt_operand_geom(c, d, which);
    const bool kv = which == NT_K || which == NT_V || which == NT_KR;
    const int E = which == NT_Q || which == NT_K ? c->D : which == NT_QR || which == NT_KR ? c->Dr : d->Dv;
    const int N = kv ? c->N2 : c->N1, cap = kv ? d->S2cap : d->S1cap;
    const int *len = kv ? d->s2 : d->s1;
    const int8_t *raw = dt == FC_I8 ? (which == NT_K ? d->k8 : d->v8) : NULL;
    const tc_dtype t = nt_tc(dt);
    void *buf = nt_xmalloc((size_t)g->count * nt_dtype_bytes(dt));
    if (raw)
        memset(buf, 0x5A, (size_t)g->count);
    else
        for (int64_t k = 0; k < g->count; k++)
            tc_store(t, buf, k, NAN);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < N; n++)
            for (int s = 0; s < (c->packed ? len[b] : cap); s++)
                for (int e = 0; e < E; e++) {
                    const int64_t at = nt_offset(c, d, g, which, b, n, s, e), l = (((int64_t)b * N + n) * cap + s) * E + e;
                    if (raw)
                        ((int8_t *)buf)[at] = raw[l];
                    else
                        tc_store(t, buf, at, logical[l]);
                }
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

/* An affine map (fc_affine) from its double values: per channel over (head, feature) or one value. */
static fc_affine affine(double *const m[2], fc_dtype dt, bool per_channel, int64_t heads, int64_t E, void *buf[2])
{
    const int64_t n = per_channel ? heads * E : 1;
    for (int t = 0; t < 2; t++) {
        buf[t] = NULL;
        if (!m[t])
            continue;
        buf[t] = nt_xmalloc((size_t)n * nt_dtype_bytes(dt));
        for (int64_t k = 0; k < n; k++)
            tc_store(nt_tc(dt), buf[t], k, m[t][k]);
    }
    return (fc_affine){.scale = buf[0], .offset = buf[1], .dtype = dt, .stride_head = per_channel ? E : 0,
                       .stride_dim = per_channel ? 1 : 0};
}

/* A physical paged cache in the library's dtype (NaN / int8 raw values as prepared). */
static void *paged_buffer(const nt_case *c, const nt_data *d, int which, fc_dtype dt)
{
    const int64_t n = d->pcount[which];
    const int8_t *raw = which == 0 ? d->kp8 : which == 1 ? d->vp8 : NULL;
    const double *val = which == 0 ? d->kp : which == 1 ? d->vp : d->krp;
    void *buf = nt_xmalloc((size_t)n * nt_dtype_bytes(dt));
    for (int64_t k = 0; k < n; k++) {
        if (dt == FC_I8)
            ((int8_t *)buf)[k] = raw[k];
        else
            tc_store(nt_tc(dt), buf, k, val[k]);
    }
    return buf;
}

static fc_tensor paged_tensor(void *data, fc_dtype dt, const int64_t st[4])
{
    return (fc_tensor){.data = data, .dtype = dt, .stride_batch = st[0], .stride_seq = st[1], .stride_head = st[2],
                       .stride_dim = st[3]};
}

/* Per-batch storage: batch b's rows in an allocation of exactly the size they need (same head,
 * position and feature strides as the one-tensor layout). */
static void **batch_buffers(const nt_case *c, const nt_data *d, nt_operand which, fc_dtype dt, const double *logical)
{
    const nt_geom g = nt_operand_geom(c, d, which);
    const int E = which == NT_K ? c->D : d->Dv;
    const int8_t *raw = dt == FC_I8 ? (which == NT_K ? d->k8 : d->v8) : NULL;
    void **bufs = nt_xmalloc(sizeof(void *) * (size_t)c->B);
    for (int b = 0; b < c->B; b++) {
        int64_t n = 1;
        for (int h = 0; h < c->N2; h++)
            for (int s = 0; s < d->s2[b]; s++) {
                const int64_t last = h * g.sh + (int64_t)s * g.ss + (int64_t)(E - 1) * g.sd + 1;
                n = last > n ? last : n;
            }
        bufs[b] = nt_xmalloc((size_t)n * nt_dtype_bytes(dt));
        if (raw)
            memset(bufs[b], 0x5A, (size_t)n);
        else
            for (int64_t k = 0; k < n; k++)
                tc_store(nt_tc(dt), bufs[b], k, NAN);
        for (int h = 0; h < c->N2; h++)
            for (int s = 0; s < d->s2[b]; s++)
                for (int e = 0; e < E; e++) {
                    const int64_t at = h * g.sh + (int64_t)s * g.ss + (int64_t)e * g.sd;
                    const int64_t l = (((int64_t)b * c->N2 + h) * d->S2cap + s) * E + e;
                    if (raw)
                        ((int8_t *)bufs[b])[at] = raw[l];
                    else
                        tc_store(nt_tc(dt), bufs[b], at, logical[l]);
                }
    }
    return bufs;
}

fc_attention_desc nt_make_desc(const nt_case *c, const nt_data *d, nt_bufs *L)
{
    memset(L, 0, sizeof *L);
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
    const fc_dtype kvdt = c->kv.int8 ? FC_I8 : c->dt;
    L->q = nt_build_input(c, d, NT_Q, d->q, c->dt, &L->gq);
    a.q = tensor(L->q, c->dt, &L->gq);
    if (c->Dr > 0) {
        L->qr = nt_build_input(c, d, NT_QR, d->qr, c->dt, &L->gqr);
        a.q_rope = tensor(L->qr, c->dt, &L->gqr);
    }
    if (c->kv.mode == NT_KV_PAGED) {
        L->k = paged_buffer(c, d, 0, kvdt);
        L->v = paged_buffer(c, d, 1, kvdt);
        a.k = paged_tensor(L->k, kvdt, d->pst[0]), a.v = paged_tensor(L->v, kvdt, d->pst[1]);
        if (c->Dr > 0) {
            L->kr = paged_buffer(c, d, 2, c->dt);
            a.k_rope = paged_tensor(L->kr, c->dt, d->pst[2]);
        }
        a.kv.block_table = d->table, a.kv.table_stride = d->table_stride;
        a.kv.block_size = c->kv.block_size, a.kv.num_blocks = d->num_blocks;
    } else {
        if (c->kv.mode == NT_KV_BATCHES) {
            L->nbatches = c->B;
            L->k_batches = batch_buffers(c, d, NT_K, kvdt, d->k);
            L->v_batches = batch_buffers(c, d, NT_V, kvdt, d->v);
            L->gk = nt_operand_geom(c, d, NT_K), L->gv = nt_operand_geom(c, d, NT_V);
            a.k = tensor(NULL, kvdt, &L->gk), a.v = tensor(NULL, kvdt, &L->gv); /* data not needed */
            a.kv.k_batches = (const void *const *)L->k_batches, a.kv.v_batches = (const void *const *)L->v_batches;
        } else {
            L->k = nt_build_input(c, d, NT_K, d->k, kvdt, &L->gk);
            L->v = nt_build_input(c, d, NT_V, d->v, kvdt, &L->gv);
            a.k = tensor(L->k, kvdt, &L->gk), a.v = tensor(L->v, kvdt, &L->gv);
        }
        if (c->Dr > 0) {
            L->kr = nt_build_input(c, d, NT_KR, d->kr, c->dt, &L->gkr);
            a.k_rope = tensor(L->kr, c->dt, &L->gkr);
        }
    }
    if (c->kv.int8) {
        a.kv.k_dequant = affine((double *const *)d->kdq, c->kv.affine_dt, c->kv.per_channel, c->N2, c->D, L->kdq);
        a.kv.v_dequant = affine((double *const *)d->vdq, c->kv.affine_dt, c->kv.per_channel, c->N2, d->Dv, L->vdq);
    }
    a.kv_starts = c->kv_starts ? d->kv_starts : NULL;
    L->gout = nt_operand_geom(c, d, NT_OUT);
    L->out = nt_xmalloc((size_t)L->gout.count * nt_dtype_bytes(c->out_dt));
    nt_fill_sentinel(c->out_dt, L->out, L->gout.count);
    a.out = tensor(L->out, c->out_dt, &L->gout);
    if (c->out_dt == FC_I8)
        a.out_quant = affine((double *const *)d->oq, c->out_quant.dtype, c->out_quant.per_channel, c->N1, d->Dv, L->oq);
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
                             .sqrt_distance = c->alibi.sqrt_distance, .bottom_right = c->alibi.bottom_right};
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
    if (c->sparse.on) {
        const bool i64 = c->sparse.dtype == FC_I64;
        L->sparse = nt_xmalloc((size_t)d->sp_n * (i64 ? 8 : 4));
        for (int64_t k = 0; k < d->sp_n; k++) {
            if (i64)
                ((int64_t *)L->sparse)[k] = d->sp[k];
            else
                ((int32_t *)L->sparse)[k] = (int32_t)d->sp[k];
        }
        a.sparse = (fc_sparse){.indices = L->sparse, .dtype = c->sparse.dtype, .count = c->sparse.count,
                               .block_size = c->sparse.block_size, .stride_batch = d->sp_st[0],
                               .stride_seq = d->sp_st[1], .stride_head = d->sp_st[2], .stride_entry = d->sp_st[3],
                               .causal = c->sparse.causal};
    }
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

void nt_bufs_free(nt_bufs *L)
{
    free(L->q), free(L->k), free(L->v), free(L->qr), free(L->kr), free(L->out), free(L->bias), free(L->smax), free(L->ssum);
    free(L->q_lens), free(L->kv_lens), free(L->sparse);
    for (int t = 0; t < 2; t++)
        free(L->kdq[t]), free(L->vdq[t]), free(L->oq[t]);
    for (int64_t b = 0; L->k_batches && b < L->nbatches; b++)
        free(L->k_batches[b]), free(L->v_batches[b]);
    free(L->k_batches), free(L->v_batches);
    memset(L, 0, sizeof *L);
}

nt_runner_fn nt_runner;

fc_status nt_run_library(const nt_case *c, const fc_attention_desc *a, size_t *ws_bytes)
{
    *ws_bytes = 0;
    if (c->oneshot)
        return fc_attention(a);
    fc_options opt = {.backend = FC_BACKEND_DEFAULT, .threads = c->threads, .out_tolerance = c->out_tolerance};
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

void nt_ref_init(const nt_case *c, const nt_data *d, nt_ref *R)
{
    memset(R, 0, sizeof *R);
    if (c->batch_windows) {
        R->bw = nt_xmalloc(sizeof(ref_window) * (size_t)c->B);
        for (int b = 0; b < c->B; b++)
            R->bw[b] = ref_win(&d->bwin[b]);
    }
    if (c->alibi.on) {
        R->slopes = nt_xmalloc(sizeof(double) * (size_t)d->slopes_n);
        for (int64_t k = 0; k < d->slopes_n; k++)
            R->slopes[k] = d->slopes[k];
    }
    if (c->sink != NT_SINK_NONE) {
        R->sink = nt_xmalloc(sizeof(double) * (size_t)c->N1);
        for (int n = 0; n < c->N1; n++)
            R->sink[n] = d->sink[n];
    }
    R->rn = (ref_native){
        .B = c->B, .N1 = c->N1, .S1 = d->s1, .S2 = d->s2,
        .window = ref_win(&c->window), .batch_window = R->bw, .prefix = c->prefix ? d->prefix : NULL,
        .q_start = c->q_start, .kv_start = c->kv_start,
        .mask = c->mask.on ? d->mask : NULL, .mask_sb = d->mask_st[0], .mask_sh = d->mask_st[1],
        .mask_sr = d->mask_st[2], .mask_sc = d->mask_st[3], .mask_by_tokens = c->mask.by_tokens,
        .bias = c->bias.on ? d->bias : NULL, .bias_before_scale = c->bias.order == FC_BIAS_BEFORE_SCALE,
        .bias_rows = d->bias_rows, .bias_cols = d->bias_cols, .bias_sb = d->bias_st[0], .bias_sh = d->bias_st[1],
        .bias_sr = d->bias_st[2], .bias_sc = d->bias_st[3], .bias_bottom_right = c->bias.bottom_right,
        .bias_compressed = c->bias.compressed,
        .slopes = R->slopes, .slope_sb = d->slope_st[0], .slope_sh = d->slope_st[1],
        .alibi_sqrt = c->alibi.sqrt_distance, .alibi_bottom_right = c->alibi.bottom_right, .keep_bits = d->keep,
        .kv_starts = c->kv_starts ? d->kv_starts : NULL,
    };
    R->f = (ref_fwd){
        .B = c->B, .N1 = c->N1, .N2 = c->N2, .D = c->D, .Dv = d->Dv, .Dr = c->Dr,
        .S1cap = d->S1cap, .S2cap = d->S2cap, .S1 = d->s1, .S2 = d->s2,
        .q = d->q, .k = d->k, .v = d->v, .q_rope = d->qr, .k_rope = d->kr,
        .scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)(c->D + c->Dr)),
        .softcap = c->softcap, .sink = R->sink, .keep_prob = c->keep_prob,
    };
    ref_native_plug(&R->f, &R->rn);
}

void nt_ref_free(nt_ref *R)
{
    free(R->bw), free(R->slopes), free(R->sink);
    memset(R, 0, sizeof *R);
}

void nt_sparse_ref(const nt_case *c, const nt_data *d, ref_sparse *p)
{
    memset(p, 0, sizeof *p);
    p->B = c->B, p->N1 = c->N1, p->N2 = c->N2, p->D = c->D, p->Dv = d->Dv, p->Dr = c->Dr;
    p->S1cap = d->S1cap, p->S2cap = d->S2cap, p->S1 = d->s1, p->S2 = d->s2;
    p->q = d->q, p->k = d->k, p->v = d->v, p->q_rope = d->qr, p->k_rope = d->kr;
    p->scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)(c->D + c->Dr));
    p->indices = d->sp, p->indices_i64 = true;
    p->K = c->sparse.count, p->block_size = c->sparse.block_size;
    p->st_batch = d->sp_st[0], p->st_seq = d->sp_st[1], p->st_head = d->sp_st[2], p->st_entry = d->sp_st[3];
    p->tnd = c->packed, p->causal = c->sparse.causal;
}

static void run_sparse_reference(const nt_case *c, const nt_data *d, nt_result *r)
{
    ref_sparse p;
    nt_sparse_ref(c, d, &p);
    const int64_t ns = ref_sparse_stat_count(&p);
    double *m = nt_xmalloc(sizeof(double) * (size_t)(ns + 1)), *l = nt_xmalloc(sizeof(double) * (size_t)(ns + 1));
    ref_sparse_forward(&p, r->ref_out, m, l);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < c->N1; n++)
            for (int i = 0; i < d->S1cap; i++) {
                const int64_t at = nt_row(c, d->S1cap, b, n, i);
                const bool real = i < d->s1[b];
                r->nvis[at] = real ? (int)ref_sparse_select(&p, b, i, n / (c->N1 / c->N2), NULL) : -1;
                r->ref_max[at] = real ? m[ref_sparse_stat_index(&p, b, n, i)] : 0;
                r->ref_sum[at] = real ? l[ref_sparse_stat_index(&p, b, n, i)] : 0;
            }
    free(m), free(l);
}

/* The reference run on the same logical values (rules_native.h reads the native rules). */
void nt_run_reference(const nt_case *c, const nt_data *d, nt_result *r)
{
    const int64_t rows = (int64_t)c->B * c->N1 * d->S1cap;
    r->ref_out = nt_xmalloc(sizeof(double) * (size_t)(rows * d->Dv + 1));
    r->ref_max = nt_xmalloc(sizeof(double) * (size_t)rows + 8);
    r->ref_sum = nt_xmalloc(sizeof(double) * (size_t)rows + 8);
    r->nvis = nt_xmalloc(sizeof(int) * (size_t)rows + 8);
    if (c->sparse.on) {
        run_sparse_reference(c, d, r);
        return;
    }
    nt_ref R;
    nt_ref_init(c, d, &R);
    ref_forward(&R.f, r->ref_out, r->ref_max, r->ref_sum);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < c->N1; n++)
            for (int i = 0; i < d->S1cap; i++) {
                const int64_t at = nt_row(c, d->S1cap, b, n, i);
                r->nvis[at] = i < d->s1[b] ? ref_visible(&R.f, b, n, i) : -1;
            }
    nt_ref_free(&R);
}

void nt_describe(const nt_case *c)
{
    printf("    case: seed=%llu B=%d N1=%d N2=%d D=%d Dv=%d Dr=%d Sq=%d Skv=%d packed=%d lens=%d layout=%d mixed=%d "
           "pad=%d ds=%d kvb=%d qbh=%d dt=%d out=%d scale=%g cap=%g bias=%d(o%d dt%d b%d%d%d%d br%d c%d r%d) "
           "alibi=%d(pb%d sq%d br%d) win=%d(%lld,%lld,%d) bwin=%d prefix=%d qs=%lld ks=%lld mask=%d(dt%d b%d%d%d%d tok%d) "
           "keep=%g all=%d sink=%d stats=%d(o%d r%d) threads=%d oneshot=%d tol=%d isa=%s\n",
           (unsigned long long)c->seed, c->B, c->N1, c->N2, c->D, c->Dv, c->Dr, c->Sq, c->Skv, c->packed, c->lens,
           c->layout, c->mixed_layouts, c->pad, c->dim_stride, c->kv_bcast_seq, c->q_bcast_head, c->dt, c->out_dt,
           c->scale, c->softcap, c->bias.on, c->bias.order, c->bias.dtype, c->bias.bcast_batch, c->bias.bcast_head,
           c->bias.bcast_row, c->bias.bcast_col, c->bias.bottom_right, c->bias.compressed, c->bias.rows, c->alibi.on,
           c->alibi.per_batch, c->alibi.sqrt_distance, c->alibi.bottom_right, c->window.enabled, (long long)c->window.left,
           (long long)c->window.right, c->window.align, c->batch_windows, c->prefix, (long long)c->q_start,
           (long long)c->kv_start, c->mask.on, c->mask.dtype, c->mask.bcast_batch, c->mask.bcast_head,
           c->mask.bcast_row, c->mask.bcast_col, c->mask.by_tokens, c->keep_prob, c->keep_all, c->sink, c->stats,
           c->stats_order, c->replicas, c->threads, c->oneshot, c->out_tolerance, fc_cpu_isa());
    if (c->kv.mode != NT_KV_TENSOR || c->kv.int8 || c->kv_starts || c->out_dt == FC_I8 || c->sparse.on)
        printf("      kv: mode=%d bs=%d headmajor=%d spare=%d shared=%d int8=%d(pc%d off%d dt%d) kv_starts=%d "
               "out_quant=(pc%d off%d dt%d) sparse=%d(dt%d K%d bs%d causal%d end%g dup%g late%g all%d pad%d)\n",
               c->kv.mode, c->kv.block_size, c->kv.head_major_blocks, c->kv.spare_blocks, c->kv.shared_blocks,
               c->kv.int8, c->kv.per_channel, c->kv.offset, c->kv.affine_dt, c->kv_starts, c->out_quant.per_channel,
               c->out_quant.offset, c->out_quant.dtype, c->sparse.on, c->sparse.dtype, c->sparse.count,
               c->sparse.block_size, c->sparse.causal, c->sparse.end_p, c->sparse.dup_p, c->sparse.late_p,
               c->sparse.all_blocks, c->sparse.pad);
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
    nt_result r;
    memset(&r, 0, sizeof r);
    const fc_attention_desc a = nt_make_desc(c, d, &L);
    r.status = nt_runner ? nt_runner(c, d, &a, &L, &r.workspace) : nt_run_library(c, &a, &r.workspace);
    const int64_t rows = (int64_t)c->B * c->N1 * d->S1cap;
    r.S1cap = d->S1cap, r.Dv = d->Dv;
    r.out = calloc((size_t)(rows * d->Dv + 1), sizeof(double));
    r.smax = calloc((size_t)rows + 1, sizeof(double));
    r.ssum = calloc((size_t)rows + 1, sizeof(double));
    const bool rejected = c->may_reject && r.status == FC_ERR_INVALID_ARG && strstr(fc_last_error(), c->may_reject);
    if (rejected)
        TC_CHECK(true, "rejected as allowed");
    else if (TC_CHECK(r.status == FC_OK, "library status %s: %s", fc_status_name(r.status), fc_last_error())) {
        nt_run_reference(c, d, &r);
        nt_check_outputs(c, d, &L, &r);
    }
    r.failures = tc_failures() - before;
    if (r.failures)
        nt_describe(c);
    if (res) {
        r.out_raw = L.out, L.out = NULL;
        r.out_bytes = (size_t)L.gout.count * nt_dtype_bytes(c->out_dt);
        r.stats_raw_max = L.smax, r.stats_raw_sum = L.ssum, L.smax = L.ssum = NULL;
        r.stats_count = (size_t)L.stat_n;
        *res = r;
    } else {
        nt_result_free(&r);
    }
    nt_bufs_free(&L);
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
