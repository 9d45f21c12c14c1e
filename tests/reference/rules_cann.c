#include "rules_cann.h"

#include <math.h>

#include "dropout.h"

typedef __int128 wide; /* exact band arithmetic: pre/next may be INT64_MAX or negative */

static int64_t cum(const int *S, int b)
{
    int64_t t = 0;
    for (int c = 0; c < b; c++)
        t += S[c];
    return t;
}

static int64_t max_len(const int *S, int B)
{
    int64_t m = 0;
    for (int b = 0; b < B; b++)
        m = S[b] > m ? S[b] : m;
    return m;
}

int ref_cann_band_batch(const ref_cann *c)
{
    if (c->sparse_mode == 7) {
        for (int b = c->B - 1; b >= 0; b--)
            if (c->S1[b] > 0)
                return b;
    } else if (c->sparse_mode == 8) {
        for (int b = 0; b < c->B; b++)
            if (c->S1[b] > 0)
                return b;
    }
    return -1;
}

bool ref_cann_user_mask(const ref_cann *c, int b, int n1, int i, int j)
{
    const int r = c->mask_rank;
    const int64_t rows = c->mask_dims[r - 2], cols = c->mask_dims[r - 1];
    int64_t mb = 0, mn = 0, mi = i, mj = j;
    if (c->tnd) {
        /* [maxS1, maxS2]: top-left window of every batch; otherwise [T1, T2]: diagonal blocks */
        if (!(rows == max_len(c->S1, c->B) && cols == max_len(c->S2, c->B))) {
            mi = cum(c->S1, b) + i;
            mj = cum(c->S2, b) + j;
        }
    } else if (r == 4) {
        mb = c->mask_dims[0] == 1 ? 0 : b;
        mn = c->mask_dims[1] == 1 ? 0 : n1;
    }
    const int64_t heads = r == 4 ? c->mask_dims[1] : 1;
    return c->mask[((mb * heads + mn) * rows + mi) * cols + mj] != 0;
}

bool ref_cann_pse_compressed(const ref_cann *c, int b)
{
    if (!c->pse || (c->pse_type != 0 && c->pse_type != 1))
        return false;
    const int64_t R = c->pse_dims[2];
    return R > 1 && c->S1[b] > R;
}

/* §2.4: pse(i, j) of batch b, head n1 for pseType 0/1. */
double ref_cann_pse_value(const ref_cann *c, int b, int n1, int i, int j)
{
    const int64_t *d = c->pse_dims;
    const int64_t bp = d[0] == 1 ? 0 : b, np = d[1] == 1 ? 0 : n1, R = d[2], C = d[3];
    const double *blk = c->pse + (bp * d[1] + np) * R * C;
    if (!c->tnd && R == 1)
        return blk[j]; /* [B, N1, 1, S2]: one row for all rows */
    if (!c->tnd && !ref_cann_pse_compressed(c, b))
        return blk[(int64_t)i * C + j]; /* [B|1, N1, S1, S2] */
    /* compressed rows, and every TND batch: m and the column from the 1024-row formula */
    const int64_t L1 = c->S1[b], c0 = c->tnd ? C - c->S2[b] : 0;
    const int64_t m = (i >= L1 - R) ? i - (L1 - R) : i % R;
    return blk[m * C + c0 + j - i + (L1 - R) + m];
}

bool ref_cann_masked(void *ctx, int b, int n1, int i, int j)
{
    const ref_cann *c = ctx;
    if (ref_cann_pse_compressed(c, b) && j > i)
        return true; /* §2.4: compressed pse is defined for j <= i only */
    if (!c->mask)
        return false; /* Rule 0 */
    const wide d = (wide)j - i, delta = (wide)c->S2[b] - c->S1[b];
    const wide pre = c->pre_tokens, next = c->next_tokens;
    int mode = c->sparse_mode;
    if (mode == 7 || mode == 8)
        mode = b == ref_cann_band_batch(c) ? 4 : mode == 7 ? 3 : 2;
    switch (mode) {
    case 0: return ref_cann_user_mask(c, b, n1, i, j) || d > next || d < -pre;
    case 1: return ref_cann_user_mask(c, b, n1, i, j);
    case 2: return d > 0;
    case 3: return d > delta;
    case 4: return d > next + delta || d < delta - pre;
    case 5: return ref_cann_user_mask(c, b, n1, i, j);
    case 6: return d > delta && j >= c->prefix[b];
    default: return false;
    }
}

double ref_cann_bias_before(void *ctx, int b, int n1, int i, int j)
{
    const ref_cann *c = ctx;
    return c->pse && c->pse_type == 1 ? ref_cann_pse_value(c, b, n1, i, j) : 0;
}

double ref_cann_bias_after(void *ctx, int b, int n1, int i, int j)
{
    const ref_cann *c = ctx;
    if (!c->pse)
        return 0;
    if (c->pse_type == 0)
        return ref_cann_pse_value(c, b, n1, i, j);
    if (c->pse_type != 2 && c->pse_type != 3)
        return 0;
    const double slope = c->pse_rank == 2 ? c->pse[(int64_t)b * c->pse_dims[1] + n1] : c->pse[n1];
    /* start indices: every batch, except TND mode 8 where only batch 0 uses them */
    const bool starts = !(c->tnd && c->sparse_mode == 8 && b > 0);
    const int64_t qs = starts ? c->q_start_idx : 0, ks = starts ? c->kv_start_idx : 0;
    const double dpos = fabs((double)(((wide)j + ks) - ((wide)i + qs)));
    return -slope * (c->pse_type == 3 ? sqrt(dpos) : dpos);
}

bool ref_cann_keep(void *ctx, int b, int n1, int i, int j)
{
    const ref_cann *c = ctx;
    return !c->drop_mask || ref_keep_bit(c->drop_mask, ref_drop_index(c->N1, c->S1, c->S2, b, n1, i, j));
}

void ref_cann_plug(ref_fwd *f, ref_cann *c)
{
    f->ctx = c;
    f->hidden = ref_cann_masked;
    f->bias_before = ref_cann_bias_before;
    f->bias_after = ref_cann_bias_after;
    f->keep = ref_cann_keep;
}
