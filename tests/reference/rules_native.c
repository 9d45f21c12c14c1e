#include "rules_native.h"

#include <math.h>

#include "dropout.h"

typedef __int128 wide; /* exact position arithmetic: left/right may be ±INT64_MAX */

static int64_t before(const int *S, int b)
{
    int64_t t = 0;
    for (int c = 0; c < b; c++)
        t += S[c];
    return t;
}

bool ref_native_window_visible(const ref_window *w, int64_t S1b, int64_t S2b, int64_t q_start, int64_t kv_start,
                               int64_t i, int64_t j)
{
    if (!w->enabled)
        return true;
    const wide diagonal = w->bottom_right ? (wide)S2b - S1b : 0;
    const wide d = ((wide)j + kv_start) - ((wide)i + q_start) - diagonal;
    /* FC_UNBOUNDED (INT64_MAX) means no bound on that side, as its name says; every other value,
     * INT64_MAX − 1 included, is a number */
    const bool above_left = w->left == REF_UNBOUNDED || -(wide)w->left <= d;
    const bool below_right = w->right == REF_UNBOUNDED || d <= (wide)w->right;
    return above_left && below_right;
}

/* fc_bias: the block is rows × cols; bottom_right aligns it to the batch's bottom-right corner, a
 * zero row stride broadcasts one row, and compressed recovers rows above the stored ones with the
 * 1024-row rule of semantics §2.4 (m = i mod R, read column c0 + j − i + (L1 − R) + m). */
double ref_native_bias_value(const ref_native *c, int b, int n1, int i, int j)
{
    const int64_t S1b = c->S1[b], S2b = c->S2[b];
    const int64_t row_shift = c->bias_bottom_right ? c->bias_rows - S1b : 0;
    const int64_t col_shift = c->bias_bottom_right ? c->bias_cols - S2b : 0;
    int64_t row = i + row_shift, col = j + col_shift;
    if (c->bias_sr == 0)
        row = 0;
    else if (c->bias_compressed && row < 0) {
        const int64_t R = c->bias_rows, L1 = S1b, m = i % R;
        row = m;
        col = col_shift + j - i + (L1 - R) + m;
    }
    return c->bias[(int64_t)b * c->bias_sb + (int64_t)n1 * c->bias_sh + row * c->bias_sr + col * c->bias_sc];
}

bool ref_native_hidden(void *ctx, int b, int n1, int i, int j)
{
    const ref_native *c = ctx;
    if (c->kv_starts && j < c->kv_starts[b])
        return true;
    if (c->mask) {
        int64_t at;
        if (c->mask_by_tokens)
            at = (int64_t)n1 * c->mask_sh + (before(c->S1, b) + i) * c->mask_sr + (before(c->S2, b) + j) * c->mask_sc;
        else
            at = (int64_t)b * c->mask_sb + (int64_t)n1 * c->mask_sh + (int64_t)i * c->mask_sr + (int64_t)j * c->mask_sc;
        if (c->mask[at] != 0)
            return true;
    }
    /* compressed bias: a batch taller than the stored rows sees only j <= i */
    if (c->bias && c->bias_compressed && c->S1[b] > c->bias_rows && j > i)
        return true;
    if (c->prefix && j < c->prefix[b])
        return false;
    const ref_window *w = c->batch_window ? &c->batch_window[b] : &c->window;
    return !ref_native_window_visible(w, c->S1[b], c->S2[b], c->q_start, c->kv_start, i, j);
}

double ref_native_bias_before(void *ctx, int b, int n1, int i, int j)
{
    const ref_native *c = ctx;
    return c->bias && c->bias_before_scale ? ref_native_bias_value(c, b, n1, i, j) : 0;
}

double ref_native_bias_after(void *ctx, int b, int n1, int i, int j)
{
    const ref_native *c = ctx;
    double x = c->bias && !c->bias_before_scale ? ref_native_bias_value(c, b, n1, i, j) : 0;
    if (c->slopes) {
        const double slope = c->slopes[(int64_t)b * c->slope_sb + (int64_t)n1 * c->slope_sh];
        const wide dpos = ((wide)j + c->kv_start) - ((wide)i + c->q_start) -
                          (c->alibi_bottom_right ? (wide)c->S2[b] - (wide)c->S1[b] : 0);
        const double delta = fabs((double)dpos);
        x -= slope * (c->alibi_sqrt ? sqrt(delta) : delta);
    }
    return x;
}

bool ref_native_keep(void *ctx, int b, int n1, int i, int j)
{
    const ref_native *c = ctx;
    return !c->keep_bits || ref_keep_bit(c->keep_bits, ref_drop_index(c->N1, c->S1, c->S2, b, n1, i, j));
}

void ref_native_plug(ref_fwd *f, ref_native *c)
{
    f->ctx = c;
    f->hidden = ref_native_hidden;
    f->bias_before = ref_native_bias_before;
    f->bias_after = ref_native_bias_after;
    f->keep = ref_native_keep;
}
