/* Semantics §9i (ring attention): kv columns split into two parts, by kv_start across calls or by
 * visibility on one call; merging (out, max, sum) of the parts by log-sum-exp reproduces the full
 * call, and a fully masked part drops out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 12, 10, 10}); }

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


static void body(void)
{
    lse_merge_by_start();
    lse_merge_by_visibility();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identity_merge", body); }
