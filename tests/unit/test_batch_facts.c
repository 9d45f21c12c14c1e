/*
 * fc_batch_facts (src/core/batch.h) against its definition, on seeded random rules and lengths:
 * for batch b with lengths (sq_b, skv_b) — the run's, or the rule's len when none are given —
 *   rows     = sq_b on a packed side or one with rows 0, else the side's rows;
 *   tokens   = Σ_{c<b} sq_c (skv_c) on a packed side, else 0;
 *   col_lo   = kv_lo[b] (0 without); the band is the rule's window lowered for (sq_b, skv_b);
 *   mask     = q_tok·si + kv_tok·sj by tokens, else b·mask_sb; bias b·pse_sb;
 *   drop bit = Σ_{c<b} heads·sq_c·skv_c; statistics row = Σ_{c<b} rows_c;
 * and the totals are the maxima and sums of those; made a random chunk at a time
 * (fc_batch_facts_next), the same records and totals bit for bit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/batch.h"
#include "core/lower.h"

static fc_side_rule side(tc_rng *r)
{
    fc_side_rule s = {.packed = tc_rng_bool(r, 0.4), .rows = tc_rng_bool(r, 0.3) ? 0 : tc_rng_int(r, 0, 20),
                      .len = tc_rng_int(r, 0, 20)};
    return s;
}

static int64_t rows_of(const fc_side_rule *s, int64_t len) { return s->packed || s->rows == 0 ? len : s->rows; }

static void random_rules(void)
{
    tc_rng r = tc_rng_seed(1102);
    for (int t = 0; t < 3000; t++) {
        const int64_t B = tc_rng_int(&r, 0, 7);
        fc_batch_rule rule = {.B = B, .q = side(&r), .kv = side(&r), .q_start = tc_rng_int(&r, -5, 5),
                              .kv_start = tc_rng_int(&r, -5, 5), .mask_sb = tc_rng_int(&r, 0, 99),
                              .mask_by_tokens = tc_rng_bool(&r, 0.3), .mask_si = tc_rng_int(&r, 0, 9),
                              .mask_sj = tc_rng_int(&r, 0, 9), .pse_sb = tc_rng_int(&r, 0, 99),
                              .drop_heads = tc_rng_bool(&r, 0.5) ? tc_rng_int(&r, 1, 8) : 0};
        rule.window = (fc_window){.enabled = tc_rng_bool(&r, 0.6), .left = tc_rng_int(&r, -3, 9),
                                  .right = tc_rng_int(&r, -3, 9), .align = (fc_align)tc_rng_int(&r, 0, 1)};
        int64_t sq[8], skv[8], lo[8];
        const bool has_q = tc_rng_bool(&r, 0.6), has_kv = tc_rng_bool(&r, 0.6), has_lo = tc_rng_bool(&r, 0.3);
        for (int64_t b = 0; b < B; b++) {
            sq[b] = tc_rng_int(&r, 0, 20), skv[b] = tc_rng_int(&r, 0, 20);
            lo[b] = tc_rng_int(&r, 0, has_kv ? skv[b] : rule.kv.len);
        }
        const fc_lengths len = {.sq = has_q ? sq : NULL, .skv = has_kv ? skv : NULL, .kv_lo = has_lo ? lo : NULL};
        fc_batch out[8];
        fc_batch_totals tot;
        fc_batch_facts(&rule, &len, out, &tot);
        int64_t q_tok = 0, kv_tok = 0, drop = 0, rows = 0, max_sq = 0, max_skv = 0;
        bool ok = true;
        for (int64_t b = 0; b < B && ok; b++) {
            const fc_batch *bt = &out[b];
            const int64_t s1 = has_q ? sq[b] : rule.q.len, s2 = has_kv ? skv[b] : rule.kv.len;
            const int64_t qt = rule.q.packed ? q_tok : 0, kt = rule.kv.packed ? kv_tok : 0;
            fc_batch band = {.sq = s1, .skv = s2};
            fc_lower_window(&band, rule.window.enabled, rule.window.left, rule.window.right,
                            rule.window.align == FC_ALIGN_BOTTOM_RIGHT, rule.q_start, rule.kv_start);
            ok = TC_CHECK(bt->sq == s1 && bt->skv == s2 && bt->q_rows == rows_of(&rule.q, s1) &&
                              bt->kv_rows == rows_of(&rule.kv, s2) && bt->q_tok == qt && bt->kv_tok == kt,
                          "case %d batch %lld: lengths, rows or tokens", t, (long long)b) &&
                 TC_CHECK(bt->vis_lo == band.vis_lo && bt->vis_hi == band.vis_hi && bt->prefix == 0 &&
                              bt->col_lo == (has_lo ? lo[b] : 0),
                          "case %d batch %lld: band or column floor", t, (long long)b) &&
                 TC_CHECK(bt->mask_base == (rule.mask_by_tokens ? qt * rule.mask_si + kt * rule.mask_sj : b * rule.mask_sb) &&
                              bt->pse_base == b * rule.pse_sb && bt->drop_bit0 == drop && bt->stat_row0 == rows,
                          "case %d batch %lld: bases", t, (long long)b);
            q_tok += s1, kv_tok += s2, drop += rule.drop_heads * s1 * s2, rows += bt->q_rows;
            max_sq = bt->q_rows > max_sq ? bt->q_rows : max_sq;
            max_skv = s2 > max_skv ? s2 : max_skv;
        }
        if (ok)
            TC_CHECK(tot.max_sq == max_sq && tot.max_skv == max_skv && tot.q_rows == rows && tot.drop_bits == drop,
                     "case %d: totals", t);
        /* the same records made a random chunk at a time (fc_batch_facts_next), bit for bit */
        fc_batch_cursor cur = {0};
        fc_batch chunked[8];
        while (cur.next < B) {
            const int64_t n = tc_rng_int(&r, 0, B - cur.next);
            fc_batch_facts_next(&rule, &len, &cur, chunked + cur.next, n);
        }
        TC_CHECK(memcmp(chunked, out, (size_t)B * sizeof *out) == 0 && memcmp(&cur.totals, &tot, sizeof tot) == 0,
                 "case %d: records or totals made in chunks differ from those made at once", t);
    }
}

/* Dropout bits that overflow int64 saturate instead of wrapping. */
static void drop_saturates(void)
{
    const int64_t sq[2] = {INT64_MAX / 4, 3}, skv[2] = {4, 5};
    const fc_batch_rule rule = {.B = 2, .drop_heads = 2};
    const fc_lengths len = {.sq = sq, .skv = skv};
    fc_batch out[2];
    fc_batch_totals tot;
    fc_batch_facts(&rule, &len, out, &tot);
    TC_CHECK(out[1].drop_bit0 == INT64_MAX && tot.drop_bits == INT64_MAX, "dropout bits: %lld, want saturation",
             (long long)tot.drop_bits);
}

int main(void)
{
    random_rules();
    drop_saturates();
    return tc_summary("unit_batch_facts");
}
