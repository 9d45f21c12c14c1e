/*
 * The core's shared pieces against their definitions (semantics §2.5, §5.3, §2.8), on seeded
 * random inputs: every (row, column) of small batches, with bounds from tiny to int64 extremes.
 *   - fc_lower_window + fc_row_spans: column j of row i is visible iff col_lo <= j < Skv and
 *     (j < prefix or −left <= (j + kv_start) − (i + q_start) − diagonal <= right), with the
 *     diagonal Skv − Sq for bottom-right alignment, every bound in exact (128-bit) arithmetic;
 *     spans are sorted, disjoint and count the visible columns; fc_batch_relength to another
 *     kv length gives the spans of that length.
 *   - fc_sparse_span: entry k selects block idx = [idx·bs, min(idx·bs + bs, thr)) when idx·bs < thr,
 *     nothing at or past the threshold, and −1 ends the list.
 *   - fc_stat_offset: every (batch, head, row) of every order lands on its own slot, and the
 *     slots fill [0, rows·Nq) (× replicas), i.e. the orders are permutations of the statistics.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/lower.h"
#include "core/visibility.h"

static int64_t pick_bound(tc_rng *r)
{
    switch (tc_rng_int(r, 0, 5)) {
    case 0: return FC_UNBOUNDED;
    case 1: return INT64_MIN + tc_rng_int(r, 0, 3);
    case 2: return INT64_MAX - 1 - tc_rng_int(r, 0, 3);
    default: return tc_rng_int(r, -14, 14);
    }
}

static int64_t pick_start(tc_rng *r)
{
    switch (tc_rng_int(r, 0, 4)) {
    case 0: return tc_rng_int(r, 0, 1) ? INT64_MAX - tc_rng_int(r, 0, 20) : INT64_MIN + tc_rng_int(r, 0, 20);
    case 1: return tc_rng_int(r, -1000000, 1000000);
    default: return tc_rng_int(r, -6, 6);
    }
}

static bool visible(int64_t i, int64_t j, int64_t sq, int64_t skv, bool on, int64_t left, int64_t right, bool br,
                    int64_t qs, int64_t ks, int64_t prefix, int64_t col_lo)
{
    if (j < col_lo || j >= skv)
        return false;
    if (j < prefix || !on)
        return true;
    const __int128 d = ((__int128)j + ks) - ((__int128)i + qs) - (br ? skv - sq : 0);
    return (left == FC_UNBOUNDED || d >= -(__int128)left) && (right == FC_UNBOUNDED || d <= (__int128)right);
}

static void window_spans(void)
{
    tc_rng r = tc_rng_seed(1101);
    for (int t = 0; t < 20000; t++) {
        fc_batch bt = {0};
        bt.sq = tc_rng_int(&r, 0, 12), bt.skv = tc_rng_int(&r, 0, 12);
        const bool on = tc_rng_bool(&r, 0.85), br = tc_rng_bool(&r, 0.5);
        const int64_t left = pick_bound(&r), right = pick_bound(&r), qs = pick_start(&r), ks = pick_start(&r);
        fc_lower_window(&bt, on, left, right, br, qs, ks);
        if (tc_rng_bool(&r, 0.5)) /* a run's own kv length moves the window as lowering with it would */
            fc_batch_relength(&bt, tc_rng_int(&r, 0, 12));
        bt.prefix = tc_rng_bool(&r, 0.3) ? tc_rng_int(&r, 0, 14) : 0;
        bt.col_lo = tc_rng_bool(&r, 0.2) ? tc_rng_int(&r, 0, 5) : 0;
        tc_context("case %d: sq %lld skv %lld on %d left %lld right %lld br %d q_start %lld kv_start %lld prefix %lld col_lo %lld",
                   t, (long long)bt.sq, (long long)bt.skv, on, (long long)left, (long long)right, br, (long long)qs,
                   (long long)ks, (long long)bt.prefix, (long long)bt.col_lo);
        for (int64_t i = 0; i < bt.sq + 2; i++) {
            int64_t sp[4];
            const int64_t n = fc_row_spans(&bt, i, sp);
            bool ok = sp[0] <= sp[1] && sp[2] <= sp[3] && n == (sp[1] - sp[0]) + (sp[3] - sp[2]);
            if (sp[2] < sp[3])
                ok = ok && sp[1] < sp[2]; /* a second span only after the first, not touching it */
            int64_t want = 0;
            for (int64_t j = -2; j < bt.skv + 3; j++) {
                const bool in = (j >= sp[0] && j < sp[1]) || (j >= sp[2] && j < sp[3]);
                const bool vis = i < bt.sq && visible(i, j, bt.sq, bt.skv, on, left, right, br, qs, ks, bt.prefix, bt.col_lo);
                want += vis;
                if (in != vis) {
                    TC_CHECK(false, "row %lld column %lld: spans say %d, the definition %d", (long long)i, (long long)j,
                             in, vis);
                    return;
                }
            }
            if (!TC_CHECK(ok && n == want, "row %lld: spans [%lld,%lld) [%lld,%lld) count %lld, want %lld", (long long)i,
                          (long long)sp[0], (long long)sp[1], (long long)sp[2], (long long)sp[3], (long long)n,
                          (long long)want))
                return;
        }
    }
    tc_context("%s", "");
}

static void sparse_spans(void)
{
    tc_rng r = tc_rng_seed(1102);
    for (int t = 0; t < 5000; t++) {
        const bool wide = tc_rng_bool(&r, 0.5);
        fc_sparse_view sv = {.dtype = wide ? FC_I64 : FC_I32, .sk = tc_rng_int(&r, 1, 3),
                             .count = tc_rng_int(&r, 0, 6), .block_size = tc_rng_int(&r, 1, 5)};
        int64_t row64[32];
        int32_t row32[32];
        for (int k = 0; k < 32; k++) {
            int64_t v = tc_rng_int(&r, -2, 9);
            if (wide && tc_rng_bool(&r, 0.05))
                v = INT64_MAX - tc_rng_int(&r, 0, 3);
            row64[k] = v;
            row32[k] = (int32_t)(v > INT32_MAX ? INT32_MAX : v);
        }
        const int64_t thr = tc_rng_int(&r, 0, 30);
        const char *row = wide ? (const char *)row64 : (const char *)row32;
        tc_context("case %d: count %lld bs %lld thr %lld", t, (long long)sv.count, (long long)sv.block_size,
                   (long long)thr);
        for (int64_t k = 0; k <= sv.count; k++) {
            int64_t a = -7, z = -7;
            const int got = fc_sparse_span(&sv, row, k, thr, &a, &z);
            const int64_t idx = wide ? row64[k * sv.sk] : row32[k * sv.sk];
            int want;
            int64_t wa = -7, wz = -7;
            if (k >= sv.count || idx < 0)
                want = -1;
            else if ((__int128)idx * sv.block_size >= thr)
                want = 0;
            else {
                want = 1, wa = idx * sv.block_size;
                wz = wa + sv.block_size < thr ? wa + sv.block_size : thr;
            }
            if (!TC_CHECK(got == want && (want != 1 || (a == wa && z == wz)),
                          "entry %lld (index %lld): got %d [%lld, %lld), want %d [%lld, %lld)", (long long)k,
                          (long long)idx, got, (long long)a, (long long)z, want, (long long)wa, (long long)wz))
                return;
            if (got == -1)
                break;
        }
    }
    tc_context("%s", "");
}

static void stat_offsets(void)
{
    tc_rng r = tc_rng_seed(1103);
    const fc_stats_order orders[] = {FC_STATS_HEAD_MAJOR, FC_STATS_TOKEN_MAJOR, FC_STATS_KV_GROUP,
                                     FC_STATS_KV_TOKEN_GROUP};
    for (int t = 0; t < 400; t++) {
        fc_problem p = {0};
        fc_batch bt[4] = {{0}};
        p.B = tc_rng_int(&r, 1, 4), p.Nkv = tc_rng_int(&r, 1, 3), p.G = tc_rng_int(&r, 1, 4);
        p.Nq = p.Nkv * p.G, p.batch = bt;
        int64_t rows = 0;
        for (int64_t b = 0; b < p.B; b++) {
            bt[b].q_rows = tc_rng_int(&r, 0, 5);
            bt[b].stat_row0 = rows;
            rows += bt[b].q_rows;
        }
        const fc_stats_order order = orders[t % 4];
        /* the grouped orders store one value per row; the head- and token-major ones replicas */
        const int64_t rep = order == FC_STATS_HEAD_MAJOR || order == FC_STATS_TOKEN_MAJOR ? tc_rng_int(&r, 1, 8) : 1;
        p.stats = fc_lower_stats(NULL, NULL, order, rep, p.Nq, p.G, rows);
        const int64_t slots = rows * p.Nq;
        char *seen = calloc((size_t)(slots ? slots : 1), 1);
        tc_context("case %d: order %d B %lld Nkv %lld G %lld replicas %lld", t, (int)order, (long long)p.B,
                   (long long)p.Nkv, (long long)p.G, (long long)rep);
        bool ok = true;
        for (int64_t b = 0; b < p.B && ok; b++)
            for (int64_t n1 = 0; n1 < p.Nq && ok; n1++)
                for (int64_t i = 0; i < bt[b].q_rows && ok; i++) {
                    const int64_t off = fc_stat_offset(&p, &bt[b], n1, i);
                    ok = TC_CHECK(off >= 0 && off % rep == 0 && off / rep < slots && !seen[off / rep],
                                  "(b %lld, n1 %lld, i %lld) -> %lld: outside [0, %lld) or taken twice", (long long)b,
                                  (long long)n1, (long long)i, (long long)off, (long long)(slots * rep));
                    if (ok)
                        seen[off / rep] = 1;
                }
        free(seen);
    }
    tc_context("%s", "");
}

int main(void)
{
    window_spans();
    sparse_spans();
    stat_offsets();
    return tc_summary("unit_core");
}
