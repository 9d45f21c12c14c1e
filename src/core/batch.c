#include "batch.h"

#include <string.h>

#include "lower.h"

static int64_t fc_sat_mul_add(int64_t acc, int64_t a, int64_t b, int64_t c)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) || __builtin_add_overflow(acc, r, &r))
        return INT64_MAX;
    return r;
}

void fc_batch_facts_next(const fc_batch_rule *r, const fc_lengths *len, fc_batch_cursor *cur, fc_batch *out, int64_t n)
{
    /* the running sums in locals: the compiler cannot tell that the records written do not alias them */
    int64_t q_tok = cur->q_tok, kv_tok = cur->kv_tok;
    fc_batch_totals t = cur->totals, *tot = &t;
    const fc_window *w = &r->window;
    for (int64_t k = 0; k < n; k++) {
        const int64_t b = cur->next + k;
        fc_batch *bt = &out[k];
        memset(bt, 0, sizeof *bt);
        bt->sq = len->sq ? len->sq[b] : r->q.len;
        bt->skv = len->skv ? len->skv[b] : r->kv.len;
        bt->q_rows = r->q.packed || r->q.rows == 0 ? bt->sq : r->q.rows;
        bt->kv_rows = r->kv.packed || r->kv.rows == 0 ? bt->skv : r->kv.rows;
        bt->q_tok = r->q.packed ? q_tok : 0;
        bt->kv_tok = r->kv.packed ? kv_tok : 0;
        fc_lower_window(bt, w->enabled, w->left, w->right, w->align == FC_ALIGN_BOTTOM_RIGHT, r->q_start, r->kv_start);
        bt->col_lo = len->kv_lo ? len->kv_lo[b] : 0;
        bt->mask_base = r->mask_by_tokens ? bt->q_tok * r->mask_si + bt->kv_tok * r->mask_sj : b * r->mask_sb;
        bt->pse_base = b * r->pse_sb;
        bt->drop_bit0 = tot->drop_bits;
        bt->stat_row0 = tot->q_rows;
        if (r->drop_heads)
            tot->drop_bits = fc_sat_mul_add(tot->drop_bits, r->drop_heads, bt->sq, bt->skv);
        tot->q_rows += bt->q_rows;
        q_tok += bt->sq;
        kv_tok += bt->skv;
        tot->max_sq = bt->q_rows > tot->max_sq ? bt->q_rows : tot->max_sq;
        tot->max_skv = bt->skv > tot->max_skv ? bt->skv : tot->max_skv;
    }
    cur->next += n;
    cur->q_tok = q_tok, cur->kv_tok = kv_tok;
    cur->totals = t;
}

void fc_batch_facts(const fc_batch_rule *r, const fc_lengths *len, fc_batch *out, fc_batch_totals *tot)
{
    fc_batch_cursor cur = {0};
    fc_batch_facts_next(r, len, &cur, out, r->B);
    *tot = cur.totals;
}

void fc_batch_facts_into(const fc_batch_rule *rule, const fc_lengths *len, fc_problem *p, fc_batch_totals *totals)
{
    fc_batch_facts(rule, len, p->batch, totals);
    p->max_sq = totals->max_sq;
    p->max_skv = totals->max_skv;
}
