#include "lower.h"

#include "error.h"
#include "visibility.h"

/* 128-bit arithmetic keeps every combination of int64 positions and bounds exact; v saturated
 * to ±2^62, far beyond any clamp of fc_batch_window (lengths stay far below 2^61), so the bounds
 * come out exact. */
static int64_t fc_sat62(__int128 v)
{
    const int64_t cap = (int64_t)1 << 62;
    return v > cap ? cap : v < -cap ? -cap : (int64_t)v;
}

void fc_lower_window(fc_batch *bt, bool enabled, int64_t left, int64_t right, bool bottom_right, int64_t q_start,
                     int64_t kv_start)
{
    /* visible iff −left ≤ (j − i) + (kv_start − q_start) − diagonal ≤ right */
    const __int128 base = (__int128)q_start - kv_start;
    const int64_t cap = (int64_t)1 << 62;
    bt->win_lo = enabled && left != FC_UNBOUNDED ? fc_sat62(base - left) : -cap;
    bt->win_hi = enabled && right != FC_UNBOUNDED ? fc_sat62(base + right) : cap;
    bt->win_bottom_right = enabled && bottom_right;
    fc_batch_window(bt);
}

fc_stats_view fc_lower_stats(float *max, float *sum, fc_stats_order order, int64_t copies, int64_t Nq, int64_t G,
                             int64_t tokens)
{
    fc_stats_view s = {.max = max, .sum = sum, .copies = copies};
    switch (order) {
    case FC_STATS_TOKEN_MAJOR: /* [tokens, N2, G, copies] */
        s.s_row0 = s.si = Nq * copies, s.sn2 = G * copies, s.sg = copies;
        break;
    case FC_STATS_KV_GROUP: /* per batch [N2, q_rows, G] */
        s.s_row0 = Nq, s.sn2_rows = G, s.sg = 1, s.si = G;
        break;
    case FC_STATS_KV_TOKEN_GROUP: /* [N2, tokens, G] */
        s.s_row0 = s.si = G, s.sn2 = tokens * G, s.sg = 1;
        break;
    case FC_STATS_HEAD_MAJOR: /* per batch [N2, G, q_rows, copies] */
    default:
        s.s_row0 = Nq * copies, s.sn2_rows = G * copies, s.sg_rows = s.si = copies;
        break;
    }
    return s;
}

bool fc_dims_disjoint(const int64_t *ext, const int64_t *stride, int n)
{
    int idx[8], m = 0;
    for (int k = 0; k < n && m < 8; k++)
        if (ext[k] > 1)
            idx[m++] = k;
    for (int a = 1; a < m; a++) /* insertion sort by stride */
        for (int c = a; c > 0 && stride[idx[c]] < stride[idx[c - 1]]; c--) {
            const int t = idx[c];
            idx[c] = idx[c - 1];
            idx[c - 1] = t;
        }
    for (int a = 0; a < m; a++) {
        if (stride[idx[a]] <= 0)
            return false;
        if (a > 0 && stride[idx[a]] < stride[idx[a - 1]] * ext[idx[a - 1]])
            return false;
    }
    return true;
}

fc_status fc_check_pse_extent(const char *fn, const char *name, const fc_batch *bt, int64_t b, int64_t rows,
                              int64_t cols, bool has_rows, bool compressed)
{
    if (bt->sq == 0 || bt->skv == 0)
        return FC_OK;
    if (bt->pse_col_shift < 0 || bt->skv + bt->pse_col_shift > cols)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s has %lld columns, batch %lld needs %lld", fn, name, (long long)cols,
                       (long long)b, (long long)bt->skv);
    if (!has_rows)
        return FC_OK;
    if (bt->sq + bt->pse_row_shift > rows || (!compressed && bt->pse_row_shift < 0))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s has %lld rows, batch %lld needs %lld", fn, name, (long long)rows,
                       (long long)b, (long long)bt->sq);
    if (bt->pse_row_shift < 0 && bt->sq != bt->skv)
        return fc_fail(FC_ERR_INVALID_ARG,
                       "%s: %s is compressed to %lld rows, which needs equal query and key lengths, batch %lld has %lld and %lld",
                       fn, name, (long long)rows, (long long)b, (long long)bt->sq, (long long)bt->skv);
    return FC_OK;
}
