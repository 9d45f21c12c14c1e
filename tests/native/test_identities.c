/* The identities of semantics §9 that apply to the native forward, library against library
 * (every run is also checked against the reference by the harness):
 *   a plain attention, c causal equivalences, d wide bands, g sink off, i LSE merge,
 *   j dropout, k GQA, l layouts, m bias forms (p determinism is in test_plan.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 16, c.Dv = 12, c.Sq = 10, c.Skv = 10;
    c.stats = true;
    return c;
}

/* Runs two cases on the same logical data; b may enable more features than a (the data is
 * prepared for b, and a ignores what it does not enable). */
static void same_data(const char *what, const nt_case *a, const nt_case *b, bool stats)
{
    nt_data d = nt_prepare(b);
    nt_result ra, rb;
    nt_execute(a, &d, &ra);
    nt_execute(b, &d, &rb);
    nt_compare_results(what, &rb, &ra, a, stats);
    nt_result_free(&ra), nt_result_free(&rb);
    nt_data_free(&d);
}

static void plain(void)
{
    tc_context("§9a plain attention");
    nt_case c = base(5000);
    c.Sq = 7, c.Skv = 23;
    nt_run(&c);
}

static void causal_equivalences(void)
{
    tc_context("§9c causal alignments agree when Sq = Skv");
    nt_case a = base(5100), b = a;
    a.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    b.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    same_data("bottom-right vs top-left causal", &a, &b, true);

    tc_context("§9c band(Sq + Skv, 0) is causal");
    b.window = fc_window_band(a.Sq + a.Skv, 0, FC_ALIGN_BOTTOM_RIGHT);
    same_data("band vs causal", &a, &b, true);

    tc_context("§9c causal equals an explicit (j > i) mask");
    b = a;
    b.window = (fc_window){0};
    b.mask.on = true, b.mask.bcast_batch = b.mask.bcast_head = true, b.mask.density = 0;
    nt_data d = nt_prepare(&b);
    for (int i = 0; i < b.Sq; i++)
        for (int j = 0; j < b.Skv; j++)
            d.mask[i * d.mask_st[2] + j * d.mask_st[3]] = j > i;
    nt_result ra, rb;
    nt_execute(&a, &d, &ra);
    nt_execute(&b, &d, &rb);
    nt_compare_results("mask vs causal", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&d);
}

static void wide_bands(void)
{
    for (int align = 0; align < 2; align++) {
        tc_context("§9d band wider than Sq + Skv is no window (align %d)", align);
        nt_case a = base(5200 + align), b;
        a.Sq = 6, a.Skv = 15;
        b = a;
        b.window = fc_window_band(a.Sq + a.Skv, a.Sq + a.Skv, (fc_align)align);
        same_data("wide band vs none", &a, &b, true);
    }
    tc_context("§9d all-zero mask with a wide band is no masking");
    nt_case a = base(5210), b;
    a.Sq = 6, a.Skv = 15;
    b = a;
    b.mask.on = true, b.mask.density = 0;
    b.window = fc_window_band(15, 15, FC_ALIGN_TOP_LEFT);
    same_data("zero mask vs none", &a, &b, true);
}

static void sink_off(void)
{
    tc_context("§9g sink -inf equals no sink");
    nt_case a = base(5300), b;
    a.window = fc_window_band(3, 3, FC_ALIGN_TOP_LEFT); /* every row sees something */
    b = a;
    b.sink = NT_SINK_ALL_NEG_INF;
    same_data("sink -inf vs none", &a, &b, true);
}

/* out/max/sum of a row merged from two parts (semantics §9i), in double. */
static void merge(const nt_result *A, const nt_result *B, int64_t row, int Dv, double *out, double *m, double *l)
{
    const double ma = A->smax[row], mb = B->smax[row], la = A->ssum[row], lb = B->ssum[row];
    *m = ma > mb ? ma : mb;
    const double wa = la * exp(ma - *m), wb = lb * exp(mb - *m);
    *l = wa + wb;
    for (int e = 0; e < Dv; e++)
        out[e] = (wa * A->out[row * Dv + e] + wb * B->out[row * Dv + e]) / *l;
}

static void check_merge(const char *what, const nt_case *c, const nt_result *A, const nt_result *B,
                        const nt_result *full)
{
    const int64_t rows = (int64_t)c->B * c->N1 * full->S1cap;
    const int Dv = full->Dv;
    double *o = calloc((size_t)(rows * Dv), sizeof(double)), *m = calloc((size_t)rows, sizeof(double));
    double *l = calloc((size_t)rows, sizeof(double));
    for (int64_t r = 0; r < rows; r++)
        merge(A, B, r, Dv, o + r * Dv, m + r, l + r);
    char label[128];
    snprintf(label, sizeof label, "%s: merged out", what);
    tc_compare(label, o, full->out, rows * Dv, tc_tol_out(TC_F32), 1);
    snprintf(label, sizeof label, "%s: merged max", what);
    tc_compare(label, m, full->smax, rows, tc_tol_max(), 1);
    snprintf(label, sizeof label, "%s: merged sum", what);
    tc_compare(label, l, full->ssum, rows, tc_tol_sum(), 1);
    free(o), free(m), free(l);
}

/* Copies kv positions [from, from + n) of every (b, head) into a case with n positions. */
static void slice_kv(const nt_data *src, nt_data *dst, const nt_case *c, int from, int n)
{
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->N2; h++)
            for (int s = 0; s < n; s++) {
                const int64_t si = ((int64_t)b * c->N2 + h) * src->S2cap + from + s;
                const int64_t di = ((int64_t)b * c->N2 + h) * dst->S2cap + s;
                memcpy(dst->k + di * c->D, src->k + si * c->D, sizeof(double) * (size_t)c->D);
                memcpy(dst->v + di * src->Dv, src->v + si * src->Dv, sizeof(double) * (size_t)src->Dv);
            }
}

/* Ring attention: the kv axis split into two calls positioned by kv_start. */
static void lse_merge_by_start(void)
{
    const int64_t q_starts[] = {16, 5, 0};
    for (int k = 0; k < 3; k++) {
        tc_context("§9i LSE merge of kv halves by kv_start (q_start %lld)", (long long)q_starts[k]);
        nt_case full = base(5400 + k);
        full.Sq = 8, full.Skv = 24, full.window = fc_window_causal(FC_ALIGN_TOP_LEFT), full.q_start = q_starts[k];
        nt_case pa = full, pb = full;
        pa.Skv = 10;
        pb.Skv = 14, pb.kv_start = 10;
        nt_data d = nt_prepare(&full), da = nt_prepare(&pa), db = nt_prepare(&pb);
        memcpy(da.q, d.q, sizeof(double) * (size_t)full.B * full.N1 * full.Sq * full.D);
        memcpy(db.q, d.q, sizeof(double) * (size_t)full.B * full.N1 * full.Sq * full.D);
        slice_kv(&d, &da, &full, 0, 10);
        slice_kv(&d, &db, &full, 10, 14);
        nt_result rf, ra, rb;
        nt_execute(&full, &d, &rf);
        nt_execute(&pa, &da, &ra);
        nt_execute(&pb, &db, &rb);
        check_merge("kv_start halves", &full, &ra, &rb, &rf);
        nt_result_free(&rf), nt_result_free(&ra), nt_result_free(&rb);
        nt_data_free(&d), nt_data_free(&da), nt_data_free(&db);
    }
}

/* The same split stated by visibility on one kv: part A = prefix 10 with an empty window, part
 * B = an explicit mask of the columns j < 10. */
static void lse_merge_by_visibility(void)
{
    tc_context("§9i LSE merge of kv parts by prefix / mask");
    nt_case full = base(5410);
    full.Sq = 8, full.Skv = 24;
    nt_case pa = full, pb = full;
    pa.prefix = true, pa.window = fc_window_band(-100, -100, FC_ALIGN_TOP_LEFT);
    pb.mask.on = true, pb.mask.bcast_batch = pb.mask.bcast_head = pb.mask.bcast_row = true;
    nt_data d = nt_prepare(&full), da = nt_prepare(&pa), db = nt_prepare(&pb);
    for (int b = 0; b < full.B; b++)
        da.prefix[b] = 10;
    for (int j = 0; j < full.Skv; j++)
        db.mask[j * db.mask_st[3]] = j < 10;
    /* the parts share the full call's operands */
    nt_data pa_d = d, pb_d = d;
    pa_d.prefix = da.prefix;
    pb_d.mask = db.mask, pb_d.mask_n = db.mask_n;
    memcpy(pb_d.mask_st, db.mask_st, sizeof db.mask_st);
    nt_result rf, ra, rb;
    nt_execute(&full, &d, &rf);
    nt_execute(&pa, &pa_d, &ra);
    nt_execute(&pb, &pb_d, &rb);
    check_merge("prefix/mask parts", &full, &ra, &rb, &rf);
    nt_result_free(&rf), nt_result_free(&ra), nt_result_free(&rb);
    nt_data_free(&d), nt_data_free(&da), nt_data_free(&db);
}

static void dropout(void)
{
    tc_context("§9j keep_prob 1 ignores the keep bits");
    nt_case a = base(5500), b;
    b = a;
    b.keep_bits_with_p1 = true;
    same_data("keep_prob 1 with bits vs none", &a, &b, true);

    tc_context("§9j all-ones bits scale the output by 1/p and keep the statistics");
    b = a;
    b.keep_prob = 0.4, b.keep_all = true;
    nt_data d = nt_prepare(&b);
    nt_result ra, rb;
    nt_execute(&a, &d, &ra);
    nt_execute(&b, &d, &rb);
    const int64_t n = (int64_t)a.B * a.N1 * ra.S1cap * ra.Dv;
    for (int64_t k = 0; k < n; k++)
        ra.out[k] /= 0.4;
    nt_compare_results("all-ones dropout vs out/p", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&d);
}

static void gqa(void)
{
    tc_context("§9k GQA equals MHA with repeated kv heads");
    nt_case g = base(5600), m;
    g.N1 = 6, g.N2 = 2, g.Skv = 13, g.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    m = g;
    m.N2 = 6;
    nt_data dg = nt_prepare(&g), dm = nt_prepare(&m);
    memcpy(dm.q, dg.q, sizeof(double) * (size_t)g.B * g.N1 * g.Sq * g.D);
    const int G = g.N1 / g.N2;
    for (int b = 0; b < g.B; b++)
        for (int h = 0; h < m.N2; h++) {
            const int64_t src = ((int64_t)b * g.N2 + h / G) * g.Skv, dst = ((int64_t)b * m.N2 + h) * m.Skv;
            memcpy(dm.k + dst * g.D, dg.k + src * g.D, sizeof(double) * (size_t)g.Skv * g.D);
            memcpy(dm.v + dst * dg.Dv, dg.v + src * dg.Dv, sizeof(double) * (size_t)g.Skv * dg.Dv);
        }
    nt_result rg, rm;
    nt_execute(&g, &dg, &rg);
    nt_execute(&m, &dm, &rm);
    nt_compare_results("GQA vs repeated MHA", &rg, &rm, &g, true);
    nt_result_free(&rg), nt_result_free(&rm), nt_data_free(&dg), nt_data_free(&dm);
}

static void layouts(void)
{
    tc_context("§9l the same data in every layout");
    nt_case a = base(5700);
    a.Sq = 9, a.Skv = 14, a.dt = a.out_dt = FC_F16, a.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    for (int l = NT_BSND; l <= NT_SBH; l++) {
        nt_case b = a;
        b.layout = (nt_layout)l;
        same_data("layout vs BNSD", &a, &b, true);
    }
    tc_context("§9l TND with equal lengths equals dense");
    const int sq[2] = {9, 9}, skv[2] = {14, 14};
    nt_case t = a;
    t.packed = true, t.sq = sq, t.skv = skv;
    same_data("TND vs BNSD", &a, &t, true);
}

/* TND with B batches equals B separate dense calls. */
static void tnd_as_separate_calls(void)
{
    tc_context("§9l TND batches equal separate dense calls");
    static const int sq[4] = {5, 0, 8, 3}, skv[4] = {7, 4, 2, 0};
    nt_case t = base(5710);
    t.B = 4, t.packed = true, t.sq = sq, t.skv = skv, t.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    nt_data dt = nt_prepare(&t);
    nt_result rt;
    nt_execute(&t, &dt, &rt);
    for (int b = 0; b < t.B; b++) {
        if (sq[b] == 0 || skv[b] == 0)
            continue; /* a dense call needs at least one position on each side */
        nt_case one = t;
        one.B = 1, one.packed = false, one.sq = one.skv = NULL, one.Sq = sq[b], one.Skv = skv[b];
        nt_data d1 = nt_prepare(&one);
        for (int n = 0; n < t.N1; n++)
            memcpy(d1.q + (int64_t)n * sq[b] * t.D, dt.q + ((int64_t)b * t.N1 + n) * dt.S1cap * t.D,
                   sizeof(double) * (size_t)sq[b] * t.D);
        for (int n = 0; n < t.N2; n++) {
            memcpy(d1.k + (int64_t)n * skv[b] * t.D, dt.k + ((int64_t)b * t.N2 + n) * dt.S2cap * t.D,
                   sizeof(double) * (size_t)skv[b] * t.D);
            memcpy(d1.v + (int64_t)n * skv[b] * dt.Dv, dt.v + ((int64_t)b * t.N2 + n) * dt.S2cap * dt.Dv,
                   sizeof(double) * (size_t)skv[b] * dt.Dv);
        }
        nt_result r1;
        nt_execute(&one, &d1, &r1);
        double *y = calloc((size_t)t.N1 * sq[b] * dt.Dv, sizeof(double)), *ym = calloc((size_t)t.N1 * sq[b], sizeof(double));
        for (int n = 0; n < t.N1; n++)
            for (int i = 0; i < sq[b]; i++) {
                const int64_t rp = ((int64_t)b * t.N1 + n) * rt.S1cap + i, r1i = (int64_t)n * sq[b] + i;
                memcpy(y + r1i * dt.Dv, rt.out + rp * dt.Dv, sizeof(double) * (size_t)dt.Dv);
                ym[r1i] = rt.smax[rp];
            }
        tc_compare("TND batch vs its dense call: out", y, r1.out, (int64_t)t.N1 * sq[b] * dt.Dv, tc_tol_out(TC_F32), 1);
        tc_compare("TND batch vs its dense call: max", ym, r1.smax, (int64_t)t.N1 * sq[b], tc_tol_max(), 1);
        free(y), free(ym);
        nt_result_free(&r1), nt_data_free(&d1);
    }
    nt_result_free(&rt), nt_data_free(&dt);
}

static void bias_forms(void)
{
    tc_context("§9m bias after scale (scale·bias) equals bias before scale");
    nt_case a = base(5800), b;
    a.scale = 0.3, a.bias.on = true, a.bias.order = FC_BIAS_BEFORE_SCALE;
    b = a;
    b.bias.order = FC_BIAS_AFTER_SCALE;
    nt_data da = nt_prepare(&a), db = nt_prepare(&b);
    for (int64_t k = 0; k < db.bias_n; k++)
        db.bias[k] = (double)(float)(0.3 * da.bias[k]);
    nt_result ra, rb;
    nt_execute(&a, &da, &ra);
    nt_execute(&b, &db, &rb);
    nt_compare_results("after(scale·bias) vs before(bias)", &rb, &ra, &a, true);
    nt_result_free(&ra), nt_result_free(&rb), nt_data_free(&da), nt_data_free(&db);

    for (int sq = 0; sq < 2; sq++) {
        tc_context("§9m ALiBi equals the explicit bias -slope·%s", sq ? "sqrt|Δ|" : "|Δ|");
        nt_case al = base(5810 + sq), ex;
        al.Skv = 15, al.alibi.on = true, al.alibi.per_batch = true, al.alibi.sqrt_distance = sq;
        al.q_start = 7, al.kv_start = 2, al.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        ex = al;
        ex.alibi.on = false, ex.bias.on = true;
        nt_data dl = nt_prepare(&al), dx = nt_prepare(&ex);
        for (int bb = 0; bb < al.B; bb++)
            for (int n = 0; n < al.N1; n++)
                for (int i = 0; i < al.Sq; i++)
                    for (int j = 0; j < al.Skv; j++) {
                        const double slope = dl.slopes[bb * dl.slope_st[0] + n * dl.slope_st[1]];
                        const double dist = fabs((double)((j + al.kv_start) - (i + al.q_start)));
                        dx.bias[bb * dx.bias_st[0] + n * dx.bias_st[1] + i * dx.bias_st[2] + j * dx.bias_st[3]] =
                            (double)(float)(-slope * (sq ? sqrt(dist) : dist));
                    }
        nt_result rl, rx;
        nt_execute(&al, &dl, &rl);
        nt_data mix = dl; /* dl's operands with dx's bias */
        mix.bias = dx.bias, mix.bias_n = dx.bias_n, mix.bias_rows = dx.bias_rows, mix.bias_cols = dx.bias_cols;
        memcpy(mix.bias_st, dx.bias_st, sizeof dx.bias_st);
        nt_execute(&ex, &mix, &rx);
        nt_compare_results("alibi vs explicit bias", &rx, &rl, &al, true);
        nt_result_free(&rl), nt_result_free(&rx), nt_data_free(&dl), nt_data_free(&dx);
    }

    tc_context("§9m a Toeplitz bias compressed to R rows equals the full bias under a causal mask");
    nt_case full = base(5820), comp;
    full.Sq = full.Skv = 20, full.bias.on = true, full.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    comp = full;
    comp.bias.bottom_right = comp.bias.compressed = true, comp.bias.rows = 6;
    nt_data df = nt_prepare(&full), dc = nt_prepare(&comp);
    /* t(d) per (batch, head): a smooth function of d = j − i */
    for (int bb = 0; bb < full.B; bb++)
        for (int n = 0; n < full.N1; n++) {
            for (int i = 0; i < 20; i++)
                for (int j = 0; j < 20; j++)
                    df.bias[bb * df.bias_st[0] + n * df.bias_st[1] + i * df.bias_st[2] + j * df.bias_st[3]] =
                        (double)(float)(0.1 * (bb + 1) * sin(0.7 * (j - i) + n));
            for (int m = 0; m < 6; m++)
                for (int j = 0; j < 20; j++)
                    dc.bias[bb * dc.bias_st[0] + n * dc.bias_st[1] + m * dc.bias_st[2] + j * dc.bias_st[3]] =
                        (double)(float)(0.1 * (bb + 1) * sin(0.7 * (j - (20 - 6 + m)) + n));
        }
    nt_data mix = df;
    mix.bias = dc.bias, mix.bias_n = dc.bias_n, mix.bias_rows = dc.bias_rows, mix.bias_cols = dc.bias_cols;
    memcpy(mix.bias_st, dc.bias_st, sizeof dc.bias_st);
    nt_result rf, rc;
    nt_execute(&full, &df, &rf);
    nt_execute(&comp, &mix, &rc);
    nt_compare_results("compressed vs full bias", &rc, &rf, &full, true);
    nt_result_free(&rf), nt_result_free(&rc), nt_data_free(&df), nt_data_free(&dc);
}

static void body(void)
{
    plain();
    causal_equivalences();
    wide_bands();
    sink_off();
    lse_merge_by_start();
    lse_merge_by_visibility();
    dropout();
    gqa();
    layouts();
    tnd_as_separate_calls();
    bias_forms();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identities", body); }
