/* nt_bwd_run and nt_bwd_finite_differences (harness_bwd.h). */
#include "harness_bwd.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "common/tolerance.h"
#include "harness_internal.h"
#include "reference/backward.h"
#include "reference/sparse.h"

nt_bwd nt_bwd_default(void)
{
    nt_bwd o;
    memset(&o, 0, sizeof o);
    o.grad_dt = FC_F32;
    o.threads = 1;
    return o;
}

enum { G_DQ, G_DK, G_DV, G_DQR, G_DKR, G_N };
static const nt_operand g_operand[G_N] = {NT_Q, NT_K, NT_V, NT_QR, NT_KR};
static const char *const g_name[G_N] = {"dq", "dk", "dv", "dq_rope", "dk_rope"};

#define DSINK_GUARD 8

typedef struct gbufs {
    void *g[G_N];
    nt_geom geo[G_N];
    float *dsink; /* N1 + DSINK_GUARD */
} gbufs;

/* The case whose geometry the gradients use: no broadcast strides (outputs may not overlap). */
static nt_case grad_case(const nt_case *c, const nt_bwd *o)
{
    nt_case g = *c;
    g.kv_bcast_seq = g.q_bcast_head = false;
    g.pad = o->grad_pad;
    if (o->grad_layout_set && !c->packed)
        g.layout = o->grad_layout, g.mixed_layouts = false;
    return g;
}

static int operand_dim(const nt_case *c, const nt_data *d, int k)
{
    return k == G_DQ || k == G_DK ? c->D : k == G_DV ? d->Dv : c->Dr;
}

static void gbufs_alloc(const nt_case *cg, const nt_data *d, fc_dtype dt, gbufs *G)
{
    memset(G, 0, sizeof *G);
    for (int k = 0; k < G_N; k++) {
        if (operand_dim(cg, d, k) == 0)
            continue;
        G->geo[k] = nt_operand_geom(cg, d, g_operand[k]);
        G->g[k] = nt_xmalloc((size_t)G->geo[k].count * nt_dtype_bytes(dt));
        nt_fill_sentinel(dt, G->g[k], G->geo[k].count);
    }
    G->dsink = nt_xmalloc(sizeof(float) * (size_t)(cg->N1 + DSINK_GUARD));
    nt_fill_sentinel(FC_F32, G->dsink, cg->N1 + DSINK_GUARD);
}

static void gbufs_free(gbufs *G)
{
    for (int k = 0; k < G_N; k++)
        free(G->g[k]);
    free(G->dsink);
    memset(G, 0, sizeof *G);
}

static fc_tensor gtensor(const gbufs *G, int k, fc_dtype dt)
{
    const nt_geom *g = &G->geo[k];
    return (fc_tensor){.data = G->g[k], .dtype = dt, .stride_batch = g->sb, .stride_head = g->sh, .stride_seq = g->ss,
                       .stride_dim = g->sd};
}

static fc_attention_grads make_grads(const gbufs *G, void *dout, const nt_geom *gd, fc_dtype dout_dt, fc_dtype dt,
                                     bool with_dsink)
{
    fc_attention_grads gr;
    memset(&gr, 0, sizeof gr);
    gr.d_out = (fc_tensor){.data = dout, .dtype = dout_dt, .stride_batch = gd->sb, .stride_head = gd->sh,
                           .stride_seq = gd->ss, .stride_dim = gd->sd};
    gr.dq = gtensor(G, G_DQ, dt), gr.dk = gtensor(G, G_DK, dt), gr.dv = gtensor(G, G_DV, dt);
    if (G->g[G_DQR])
        gr.dq_rope = gtensor(G, G_DQR, dt), gr.dk_rope = gtensor(G, G_DKR, dt);
    gr.dsink = with_dsink ? G->dsink : NULL;
    return gr;
}

/* Plan (or one call), exact workspace.  With decoys: the plan is made on plan_desc / decoy (other
 * buffers) and run with a's and gr's addresses through fc_attention_io. */
static fc_status run_backward(const fc_attention_desc *a, const fc_attention_grads *gr, int threads, bool oneshot,
                              const fc_attention_grads *decoy, const fc_attention_desc *plan_desc)
{
    if (oneshot)
        return fc_attention_backward(a, gr);
    fc_options opt = {.backend = FC_BACKEND_DEFAULT, .threads = threads};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create_backward(decoy ? plan_desc : a, decoy ? decoy : gr, &opt, &plan);
    if (st != FC_OK)
        return st;
    size_t ws = 0;
    if ((st = fc_plan_workspace_size(plan, &ws)) == FC_OK) {
        void *w = ws ? nt_xmalloc(ws) : NULL;
        fc_attention_io io;
        memset(&io, 0, sizeof io);
        io.d_out = gr->d_out.data, io.dq = gr->dq.data, io.dk = gr->dk.data, io.dv = gr->dv.data;
        io.dq_rope = gr->dq_rope.data, io.dk_rope = gr->dk_rope.data, io.dsink = gr->dsink;
        io.q = a->q.data, io.k = a->k.data, io.v = a->v.data, io.q_rope = a->q_rope.data, io.k_rope = a->k_rope.data;
        io.out = a->out.data, io.stats_max = a->stats.max, io.stats_sum = a->stats.sum;
        st = fc_plan_run(plan, decoy ? &io : NULL, w, ws);
        free(w);
    }
    fc_plan_destroy(plan);
    return st;
}

/* Library gradient k as logical doubles (reference layout); counts unwritten elements and gap
 * writes. */
static double *read_grad(const nt_case *cg, const nt_data *d, const gbufs *G, int k, fc_dtype dt, int64_t *unwritten,
                         int64_t *gaps, int64_t *n_out)
{
    const bool kv = k == G_DK || k == G_DV || k == G_DKR;
    const int E = operand_dim(cg, d, k), N = kv ? cg->N2 : cg->N1, cap = kv ? d->S2cap : d->S1cap;
    const int *len = kv ? d->s2 : d->s1;
    const int64_t n = (int64_t)cg->B * N * cap * E;
    double *y = calloc((size_t)n + 1, sizeof(double));
    char *written = calloc((size_t)G->geo[k].count + 1, 1);
    *unwritten = 0;
    for (int b = 0; b < cg->B; b++)
        for (int h = 0; h < N; h++)
            for (int s = 0; s < (cg->packed ? len[b] : cap); s++)
                for (int e = 0; e < E; e++) {
                    const int64_t off = nt_offset(cg, d, &G->geo[k], g_operand[k], b, h, s, e);
                    written[off] = 1;
                    if (nt_is_sentinel(dt, G->g[k], off))
                        (*unwritten)++;
                    y[(((int64_t)b * N + h) * cap + s) * E + e] = tc_load(nt_tc(dt), G->g[k], off);
                }
    *gaps = 0;
    for (int64_t t = 0; t < G->geo[k].count; t++)
        *gaps += !written[t] && !nt_is_sentinel(dt, G->g[k], t);
    free(written);
    *n_out = n;
    return y;
}

static double *random_dout(const nt_case *c, const nt_data *d, fc_dtype dt)
{
    const int64_t n = (int64_t)c->B * c->N1 * d->S1cap * d->Dv;
    double *y = nt_xmalloc(sizeof(double) * (size_t)(n + 1));
    tc_rng r = tc_rng_seed(c->seed * 31 + 7);
    for (int64_t t = 0; t < n; t++)
        y[t] = tc_round(nt_tc(dt), tc_rng_uniform(&r, -1, 1));
    return y;
}

/* A runner's gradients (G; with_dsink: and dsink) against its other configurations (bit for bit)
 * and against the CPU backend's (within the gradient tolerance of the reference's magnitudes, want;
 * dsink's, want_dsink). */
static void elsewhere_checks(const nt_case *c, const nt_data *d, const fc_attention_desc *a, const nt_bufs *L, const nt_bwd *o,
                             const nt_case *cg, const gbufs *G, void *dout_buf, const nt_geom *gd, fc_dtype dout_dt,
                             const size_t bytes[6], double *const want[G_N], bool with_dsink, const double *want_dsink)
{
    gbufs G2;
    for (int cfg = 1; cfg < o->runner_configs; cfg++) {
        gbufs_alloc(cg, d, o->grad_dt, &G2);
        const fc_attention_grads gr2 = make_grads(&G2, dout_buf, gd, dout_dt, o->grad_dt, with_dsink);
        const fc_status st = o->runner(c, d, a, L, &gr2, bytes, cfg);
        bool same = st == FC_OK;
        for (int k = 0; same && k < G_N; k++)
            same = !G->g[k] || memcmp(G->g[k], G2.g[k], bytes[k]) == 0;
        same = same && (!with_dsink || memcmp(G->dsink, G2.dsink, sizeof(float) * (size_t)cg->N1) == 0);
        TC_CHECK(same, "gradients of launch configurations 0 and %d are not bit-identical (status %s)", cfg, fc_status_name(st));
        gbufs_free(&G2);
    }
    gbufs_alloc(cg, d, o->grad_dt, &G2);
    const fc_attention_grads gc = make_grads(&G2, dout_buf, gd, dout_dt, o->grad_dt, with_dsink);
    if (TC_CHECK(run_backward(a, &gc, 1, false, NULL, NULL) == FC_OK, "the CPU backward: %s", fc_last_error())) {
        if (with_dsink) {
            double *y = nt_xmalloc(sizeof(double) * (size_t)cg->N1), *x = nt_xmalloc(sizeof(double) * (size_t)cg->N1);
            for (int k = 0; k < cg->N1; k++)
                y[k] = G->dsink[k], x[k] = G2.dsink[k];
            tc_compare("dsink against the CPU backend", y, x, cg->N1, tc_tol_out(TC_F32), tc_grad_scale(want_dsink, cg->N1));
            free(y), free(x);
        }
        for (int k = 0; k < G_N; k++) {
            if (!G->g[k])
                continue;
            int64_t unwritten, gaps, n;
            double *y = read_grad(cg, d, G, k, o->grad_dt, &unwritten, &gaps, &n);
            double *x = read_grad(cg, d, &G2, k, o->grad_dt, &unwritten, &gaps, &n);
            char what[64];
            snprintf(what, sizeof what, "%s against the CPU backend", g_name[k]);
            tc_compare(what, y, x, n, tc_tol_out(nt_tc(o->grad_dt)), tc_grad_scale(want[k], n));
            free(y), free(x);
        }
    }
    gbufs_free(&G2);
}


int64_t nt_bwd_run(const nt_case *c0, const nt_bwd *o)
{
    const int before = tc_failures();
    nt_case c = *c0;
    c.stats = true;
    nt_data d = nt_prepare(&c);
    if (o->edit_data)
        o->edit_data(&c, &d);
    nt_result fr;
    if (nt_execute(&c, &d, &fr) != 0 || fr.status != FC_OK) {
        TC_CHECK(false, "backward case: the forward failed (see above)");
        nt_result_free(&fr);
        nt_data_free(&d);
        return tc_failures() - before;
    }
    const int64_t rows = (int64_t)c.B * c.N1 * d.S1cap;
    const int rep = nt_replicas(&c);

    /* the backward's description: the forward's output and statistics as written, optionally
     * shifted (used as given) and with poisoned replicas (only replica 0 is read) */
    nt_bufs L;
    fc_attention_desc a = nt_make_desc(&c, &d, &L);
    memcpy(L.out, fr.out_raw, fr.out_bytes);
    memcpy(L.smax, fr.stats_raw_max, sizeof(float) * fr.stats_count);
    memcpy(L.ssum, fr.stats_raw_sum, sizeof(float) * fr.stats_count);
    double *m = nt_xmalloc(sizeof(double) * (size_t)rows + 8), *l = nt_xmalloc(sizeof(double) * (size_t)rows + 8);
    for (int b = 0; b < c.B; b++)
        for (int n = 0; n < c.N1; n++)
            for (int i = 0; i < nt_q_rows(&c, &d, b); i++) {
                const int64_t so = nt_stat_offset(&c, &d, b, n, i), row = nt_row(&c, d.S1cap, b, n, i);
                if (o->stat_shift != 0 && L.smax[so] != -FLT_MAX)
                    for (int k = 0; k < rep; k++)
                        L.smax[so + k] += o->stat_shift, L.ssum[so + k] *= 1.3f;
                if (o->edit_stats) {
                    float mx = L.smax[so], sm = L.ssum[so];
                    o->edit_stats(&c, b, n, i, &mx, &sm);
                    for (int k = 0; k < rep; k++)
                        L.smax[so + k] = mx, L.ssum[so + k] = sm;
                }
                if (o->poison_replicas)
                    for (int k = 1; k < rep; k++)
                        L.smax[so + k] = L.ssum[so + k] = NAN;
                m[row] = L.smax[so], l[row] = L.ssum[so];
            }
    void *out_copy = nt_xmalloc(fr.out_bytes), *max_copy = nt_xmalloc(sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD)),
         *sum_copy = nt_xmalloc(sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD));
    memcpy(out_copy, L.out, fr.out_bytes);
    memcpy(max_copy, L.smax, sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD));
    memcpy(sum_copy, L.ssum, sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD));

    const fc_dtype dout_dt = o->dout_dt_set ? o->dout_dt : c.out_dt;
    double *dout = random_dout(&c, &d, dout_dt);
    if (o->edit_dout)
        o->edit_dout(&c, &d, dout);
    nt_geom gd;
    void *dout_buf = nt_build_input(&c, &d, NT_OUT, dout, dout_dt, &gd);
    const nt_case cg = grad_case(&c, o);
    const bool sink = c.sink != NT_SINK_NONE;
    gbufs G, G2, Gd;
    gbufs_alloc(&cg, &d, o->grad_dt, &G);
    fc_attention_grads gr = make_grads(&G, dout_buf, &gd, dout_dt, o->grad_dt, sink || o->dsink_without_sink);
    fc_attention_grads decoy;
    fc_attention_desc plan_desc = a;
    void *decoy_dout = NULL, *decoy_in[8] = {NULL};
    if (o->use_io) { /* decoys full of NaN: reading any of them poisons the gradients */
        gbufs_alloc(&cg, &d, o->grad_dt, &Gd);
        decoy_dout = nt_xmalloc((size_t)gd.count * nt_dtype_bytes(dout_dt));
        nt_fill_sentinel(dout_dt, decoy_dout, gd.count);
        decoy = make_grads(&Gd, decoy_dout, &gd, dout_dt, o->grad_dt, sink || o->dsink_without_sink);
        fc_tensor *ts[6] = {&plan_desc.q, &plan_desc.k, &plan_desc.v, &plan_desc.q_rope, &plan_desc.k_rope, &plan_desc.out};
        const nt_geom *gs[6] = {&L.gq, &L.gk, &L.gv, &L.gqr, &L.gkr, &L.gout};
        for (int t = 0; t < 6; t++)
            if (ts[t]->data) {
                decoy_in[t] = nt_xmalloc((size_t)gs[t]->count * nt_dtype_bytes(ts[t]->dtype));
                nt_fill_sentinel(ts[t]->dtype, decoy_in[t], gs[t]->count);
                ts[t]->data = decoy_in[t];
            }
        decoy_in[6] = nt_xmalloc(sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD));
        decoy_in[7] = nt_xmalloc(sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD));
        nt_fill_sentinel(FC_F32, decoy_in[6], L.stat_n + NT_STAT_GUARD);
        nt_fill_sentinel(FC_F32, decoy_in[7], L.stat_n + NT_STAT_GUARD);
        plan_desc.stats.max = decoy_in[6], plan_desc.stats.sum = decoy_in[7];
    }
    size_t bytes[6] = {0};
    for (int k = 0; k < G_N; k++)
        bytes[k] = G.g[k] ? (size_t)G.geo[k].count * nt_dtype_bytes(o->grad_dt) : 0;
    bytes[5] = (size_t)gd.count * nt_dtype_bytes(dout_dt);
    const fc_status st = o->runner ? o->runner(&c, &d, &a, &L, &gr, bytes, 0)
                                   : run_backward(&a, &gr, o->threads, o->oneshot, o->use_io ? &decoy : NULL, &plan_desc);
    const bool rejected = o->may_reject && st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), o->may_reject);
    if (rejected) {
        TC_CHECK(true, "backward rejected as allowed");
    } else if (TC_CHECK(st == FC_OK, "backward status %s: %s", fc_status_name(st), fc_last_error())) {
        /* the reference on the same values */
        ref_grads rg;
        int *nvis = nt_xmalloc(sizeof(int) * (size_t)rows + 8);
        nt_ref R;
        nt_ref_init(&c, &d, &R);
        rg = ref_grads_alloc(&R.f);
        if (c.sparse.on) {
            ref_sparse p;
            nt_sparse_ref(&c, &d, &p);
            const int64_t ns = ref_sparse_stat_count(&p);
            double *ms = nt_xmalloc(sizeof(double) * (size_t)ns + 8), *ls = nt_xmalloc(sizeof(double) * (size_t)ns + 8);
            for (int b = 0; b < c.B; b++)
                for (int n = 0; n < c.N1; n++)
                    for (int i = 0; i < d.s1[b]; i++)
                        ms[ref_sparse_stat_index(&p, b, n, i)] = m[nt_row(&c, d.S1cap, b, n, i)],
                        ls[ref_sparse_stat_index(&p, b, n, i)] = l[nt_row(&c, d.S1cap, b, n, i)];
            ref_sparse_backward(&p, dout, fr.out, ms, ls, &rg);
            for (int b = 0; b < c.B; b++)
                for (int n = 0; n < c.N1; n++)
                    for (int i = 0; i < d.S1cap; i++)
                        nvis[nt_row(&c, d.S1cap, b, n, i)] =
                            i < d.s1[b] ? (int)ref_sparse_select(&p, b, i, n / (c.N1 / c.N2), NULL) : -1;
            free(ms), free(ls);
        } else {
            ref_backward(&R.f, dout, fr.out, m, l, &rg);
            for (int b = 0; b < c.B; b++)
                for (int n = 0; n < c.N1; n++)
                    for (int i = 0; i < d.S1cap; i++)
                        nvis[nt_row(&c, d.S1cap, b, n, i)] = i < d.s1[b] ? ref_visible(&R.f, b, n, i) : -1;
        }
        double *const want[G_N] = {rg.dq, rg.dk, rg.dv, rg.dq_rope, rg.dk_rope};
        for (int k = 0; k < G_N; k++) {
            if (!G.g[k])
                continue;
            int64_t unwritten, gaps, n;
            double *y = read_grad(&cg, &d, &G, k, o->grad_dt, &unwritten, &gaps, &n);
            char what[64];
            snprintf(what, sizeof what, "%s", g_name[k]);
            tc_compare(what, y, want[k], n, tc_tol_out(nt_tc(o->grad_dt)), tc_grad_scale(want[k], n));
            for (int64_t t = 0; o->ref_nonfinite && t < n; t++)
                ++*(isfinite(want[k][t]) ? o->ref_finite : o->ref_nonfinite);
            TC_CHECK(unwritten == 0, "%s: %lld elements not written", g_name[k], (long long)unwritten);
            TC_CHECK(gaps == 0, "%s: %lld elements written outside the logical tensor", g_name[k], (long long)gaps);
            if (k == G_DQ || k == G_DQR) { /* rows that see nothing: exactly 0 */
                const int E = operand_dim(&c, &d, k);
                int64_t bad = 0;
                for (int64_t r = 0; r < rows; r++)
                    if (nvis[r] <= 0)
                        for (int e = 0; e < E; e++)
                            bad += y[r * E + e] != 0;
                TC_CHECK(bad == 0, "%s: %lld elements of rows that see nothing are not 0", g_name[k], (long long)bad);
            }
            free(y);
        }
        if (sink) {
            double ys[256];
            for (int n = 0; n < c.N1; n++)
                ys[n] = G.dsink[n];
            tc_compare("dsink", ys, rg.dsink, c.N1, tc_tol_out(TC_F32), tc_grad_scale(rg.dsink, c.N1));
        }
        int64_t stray = 0;
        for (int t = sink ? c.N1 : 0; t < c.N1 + DSINK_GUARD; t++)
            stray += !nt_is_sentinel(FC_F32, G.dsink, t);
        TC_CHECK(stray == 0, "dsink: %lld floats written %s", (long long)stray, sink ? "after N1" : "without a sink");
        TC_CHECK(memcmp(out_copy, L.out, fr.out_bytes) == 0, "the backward modified desc.out");
        TC_CHECK(memcmp(max_copy, L.smax, sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD)) == 0 &&
                     memcmp(sum_copy, L.ssum, sizeof(float) * (size_t)(L.stat_n + NT_STAT_GUARD)) == 0,
                 "the backward modified desc.stats");
        if (o->use_io) {
            int64_t touched = 0;
            for (int k = 0; k < G_N; k++)
                for (int64_t t = 0; Gd.g[k] && t < Gd.geo[k].count; t++)
                    touched += !nt_is_sentinel(o->grad_dt, Gd.g[k], t);
            for (int t = 0; t < c.N1 + DSINK_GUARD; t++)
                touched += !nt_is_sentinel(FC_F32, Gd.dsink, t);
            TC_CHECK(touched == 0, "fc_attention_io: %lld elements written to the planned (replaced) gradient buffers",
                     (long long)touched);
        }
        if (o->runner)
            elsewhere_checks(&c, &d, &a, &L, o, &cg, &G, dout_buf, &gd, dout_dt, bytes, want, sink, sink ? rg.dsink : NULL);
        if (o->check_threads) {
            gbufs_alloc(&cg, &d, o->grad_dt, &G2);
            fc_attention_grads gr2 = make_grads(&G2, dout_buf, &gd, dout_dt, o->grad_dt, sink || o->dsink_without_sink);
            const int t2 = o->threads == 1 ? nt_other_threads() : 1;
            const fc_status st2 = run_backward(&a, &gr2, t2, false, NULL, NULL);
            bool same = st2 == FC_OK;
            for (int k = 0; same && k < G_N; k++)
                same = !G.g[k] || memcmp(G.g[k], G2.g[k], (size_t)G.geo[k].count * nt_dtype_bytes(o->grad_dt)) == 0;
            same = same && memcmp(G.dsink, G2.dsink, sizeof(float) * (size_t)(c.N1 + DSINK_GUARD)) == 0;
            TC_CHECK(same, "gradients with %d and %d threads are not bit-identical (status %s)", o->threads, t2,
                     fc_status_name(st2));
            gbufs_free(&G2);
        }
        ref_grads_free(&rg);
        nt_ref_free(&R);
        free(nvis);
    }
    const int64_t failures = tc_failures() - before;
    if (failures)
        printf("    backward: grad_dt=%d dout_dt=%d layout=%d/%d pad=%d shift=%g poison=%d threads=%d oneshot=%d io=%d\n",
               o->grad_dt, dout_dt, o->grad_layout_set, o->grad_layout, o->grad_pad, o->stat_shift, o->poison_replicas,
               o->threads, o->oneshot, o->use_io);
    if (failures && !fr.failures)
        nt_describe(&c);
    if (o->use_io)
        gbufs_free(&Gd), free(decoy_dout);
    for (int t = 0; t < 8; t++)
        free(decoy_in[t]);
    gbufs_free(&G);
    free(dout), free(dout_buf), free(m), free(l), free(out_copy), free(max_copy), free(sum_copy);
    nt_bufs_free(&L);
    nt_result_free(&fr);
    nt_data_free(&d);
    return failures;
}

/* L = Σ d_out·out over the real rows, from a run of the forward plan on its current buffers. */
typedef struct fd_plan {
    fc_plan *plan;
    void *ws;
    size_t bytes;
} fd_plan;

static double fd_loss(const nt_case *c, const nt_data *d, fd_plan *P, const nt_bufs *L, const double *dout)
{
    if (fc_plan_run(P->plan, NULL, P->ws, P->bytes) != FC_OK)
        return NAN;
    double s = 0;
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < c->N1; n++)
            for (int i = 0; i < d->s1[b]; i++)
                for (int e = 0; e < d->Dv; e++)
                    s += dout[(nt_row(c, d->S1cap, b, n, i)) * d->Dv + e] *
                         tc_load(TC_F32, L->out, nt_offset(c, d, &L->gout, NT_OUT, b, n, i, e));
    return s;
}

int64_t nt_bwd_finite_differences(const nt_case *c0)
{
    const int before = tc_failures();
    nt_case c = *c0;
    c.stats = true, c.dt = c.out_dt = FC_F32;
    nt_data d = nt_prepare(&c);
    nt_bufs L;
    fc_attention_desc a = nt_make_desc(&c, &d, &L);
    fc_status st = fc_attention(&a);
    if (!TC_CHECK(st == FC_OK, "finite differences: forward %s: %s", fc_status_name(st), fc_last_error())) {
        nt_bufs_free(&L), nt_data_free(&d);
        return tc_failures() - before;
    }
    double *dout = random_dout(&c, &d, FC_F32);
    nt_geom gd;
    void *dout_buf = nt_build_input(&c, &d, NT_OUT, dout, FC_F32, &gd);
    const nt_bwd o = nt_bwd_default();
    const nt_case cg = grad_case(&c, &o);
    gbufs G;
    gbufs_alloc(&cg, &d, FC_F32, &G);
    const bool sink = c.sink != NT_SINK_NONE;
    fc_attention_grads gr = make_grads(&G, dout_buf, &gd, FC_F32, FC_F32, sink);
    st = run_backward(&a, &gr, 1, false, NULL, NULL);
    TC_CHECK(st == FC_OK, "finite differences: backward %s: %s", fc_status_name(st), fc_last_error());
    a.stats = (fc_stats){0}; /* the perturbed forwards leave the statistics alone */
    fd_plan P = {0};
    const fc_options one = {.threads = 1};
    if (st == FC_OK && !TC_CHECK((st = fc_plan_create(&a, &one, &P.plan)) == FC_OK, "fd plan: %s", fc_last_error()))
        P.plan = NULL;
    if (P.plan) {
        fc_plan_workspace_size(P.plan, &P.bytes);
        P.ws = P.bytes ? nt_xmalloc(P.bytes) : NULL;
    }
    void *const in[G_N] = {L.q, L.k, L.v, L.qr, L.kr};
    for (int k = 0; st == FC_OK && k < G_N; k++) {
        if (!G.g[k])
            continue;
        const bool kv = k == G_DK || k == G_DV || k == G_DKR;
        const int E = operand_dim(&c, &d, k), N = kv ? c.N2 : c.N1;
        const int *len = kv ? d.s2 : d.s1;
        const nt_geom *gi = k == G_DQ ? &L.gq : k == G_DK ? &L.gk : k == G_DV ? &L.gv : k == G_DQR ? &L.gqr : &L.gkr;
        double worst = 0, M = 1;
        int64_t n = 0, at = -1;
        double *fd = nt_xmalloc(sizeof(double) * (size_t)c.B * N * (kv ? d.S2cap : d.S1cap) * E + 8);
        double *g = nt_xmalloc(sizeof(double) * (size_t)c.B * N * (kv ? d.S2cap : d.S1cap) * E + 8);
        for (int b = 0; b < c.B; b++)
            for (int h = 0; h < N; h++)
                for (int s = 0; s < len[b]; s++)
                    for (int e = 0; e < E; e++) {
                        float *x = (float *)in[k] + nt_offset(&c, &d, gi, g_operand[k], b, h, s, e);
                        const float x0 = *x, xp = x0 + 0x1p-7f, xm = x0 - 0x1p-7f;
                        *x = xp;
                        const double lp = fd_loss(&c, &d, &P, &L, dout);
                        *x = xm;
                        const double lm = fd_loss(&c, &d, &P, &L, dout);
                        *x = x0;
                        fd[n] = (lp - lm) / ((double)xp - (double)xm);
                        g[n] = tc_load(TC_F32, G.g[k], nt_offset(&cg, &d, &G.geo[k], g_operand[k], b, h, s, e));
                        M = fmax(M, fabs(fd[n]));
                        n++;
                    }
        for (int64_t t = 0; t < n; t++) {
            const double err = fabs(fd[t] - g[t]) / (1e-3 * M + 1e-2 * fabs(fd[t]));
            if (!(err <= worst))
                worst = err, at = t;
        }
        TC_CHECK(worst <= 1, "%s vs finite differences of the forward: worst element [%lld] fd %.7g, backward %.7g (%.3gx tolerance)",
                 g_name[k], (long long)at, at >= 0 ? fd[at] : 0, at >= 0 ? g[at] : 0, worst);
        free(fd), free(g);
    }
    for (int n = 0; st == FC_OK && sink && n < c.N1; n++) {
        if (isinf(d.sink[n]))
            continue;
        const float s0 = d.sink[n], sp = s0 + 0x1p-7f, sm = s0 - 0x1p-7f;
        d.sink[n] = sp;
        const double lp = fd_loss(&c, &d, &P, &L, dout);
        d.sink[n] = sm;
        const double lm = fd_loss(&c, &d, &P, &L, dout);
        d.sink[n] = s0;
        const double fd = (lp - lm) / ((double)sp - (double)sm);
        TC_CHECK(fabs(fd - G.dsink[n]) <= 1e-3 * fmax(1, fabs(fd)) + 1e-2 * fabs(fd),
                 "dsink[%d] vs finite differences: fd %.7g, backward %.7g", n, fd, G.dsink[n]);
    }
    fc_plan_destroy(P.plan);
    free(P.ws);
    const int64_t failures = tc_failures() - before;
    if (failures)
        nt_describe(&c);
    gbufs_free(&G);
    free(dout), free(dout_buf);
    nt_bufs_free(&L);
    nt_data_free(&d);
    return failures;
}
