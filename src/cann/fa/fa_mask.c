#include "fa_mask.h"

#include <stdio.h>

#include "core/lower.h"
#include "cann/common/errmsg.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

aclnnStatus fa_check_sparse_mode(const char *fn, const char *name, int64_t mode, bool tnd)
{
    if (tnd ? (mode < 0 || mode > 8 || mode == 5) : (mode < 0 || mode > 6))
        return INVALID("%s: %s must be %s, got %lld", fn, name, tnd ? "in [0, 8] except 5 (layout TND)" : "in [0, 6]",
                       (long long)mode);
    return ACLNN_SUCCESS;
}

/* Whether the mask's last two dims are (rows, cols) with rank 2, or rank 4 with leading (lead0, lead1). */
static bool shape_is(const cann_operand *m, int64_t lead0, int64_t lead1, int64_t rows, int64_t cols, bool allow2)
{
    const int64_t *d = m->dims;
    if (m->rank == 2)
        return allow2 && d[0] == rows && d[1] == cols;
    return m->rank == 4 && d[0] == lead0 && d[1] == lead1 && d[2] == rows && d[3] == cols;
}

/* Row and column strides of the last two dims; broadcast dims of extent 1 read stride 0. */
static void element_view(const cann_operand *m, fa_mask_plan *mp)
{
    const int r = m->rank;
    mp->kind = FA_MASK_ELEMENT;
    mp->view.data = (const uint8_t *)m->data;
    mp->view.si = m->dims[r - 2] > 1 ? m->strides[r - 2] : 0;
    mp->view.sj = m->dims[r - 1] > 1 ? m->strides[r - 1] : 0;
    mp->view.sn = r == 4 && m->dims[1] > 1 ? m->strides[1] : 0;
    mp->sb = r == 4 && m->dims[0] > 1 ? m->strides[0] : 0;
}

static aclnnStatus bad_shape(const cann_operand *m, int64_t mode, const char *mode_name, const char *expected)
{
    char got[160];
    return INVALID("%s: %s must have shape %s for %s %lld, got %s", m->fn, m->name, expected, mode_name, (long long)mode,
                   cann_shape_str(m->dims, m->rank, got, sizeof got));
}

static aclnnStatus prepare_dense(const fa_geom *g, const cann_operand *m, int64_t mode, const char *mode_name,
                                 fa_mask_plan *mp)
{
    const int64_t B = g->B, N = g->N1, S1 = g->S1, S2 = g->S2;
    const bool shared_ok = mode != 5 || B == 1; /* mode 5 shares one mask only for B = 1 */
    if (shape_is(m, B, N, S1, S2, false) || shape_is(m, B, 1, S1, S2, false) ||
        (shared_ok && shape_is(m, 1, 1, S1, S2, true))) {
        element_view(m, mp);
        return ACLNN_SUCCESS;
    }
    char want[200];
    snprintf(want, sizeof want, "[B, N1, S1, S2] = [%lld, %lld, %lld, %lld], [B, 1, S1, S2]%s", (long long)B,
             (long long)N, (long long)S1, (long long)S2, shared_ok ? ", [1, 1, S1, S2] or [S1, S2]" : " (B > 1)");
    return bad_shape(m, mode, mode_name, want);
}

static aclnnStatus prepare_tnd(const fa_geom *g, const cann_operand *m, int64_t mode, const char *mode_name,
                               fa_mask_plan *mp)
{
    if (shape_is(m, 1, 1, g->S1, g->S2, true)) { /* [maxS1, maxS2]: the top-left window */
        element_view(m, mp);
        return ACLNN_SUCCESS;
    }
    if (shape_is(m, 1, 1, g->T1, g->T2, true)) { /* [T1, T2]: each batch's diagonal block */
        element_view(m, mp);
        mp->diagonal = true;
        return ACLNN_SUCCESS;
    }
    char want[200];
    snprintf(want, sizeof want, "[maxS1, maxS2] = [%lld, %lld] or [T1, T2] = [%lld, %lld] (optionally with leading 1, 1)",
             (long long)g->S1, (long long)g->S2, (long long)g->T1, (long long)g->T2);
    return bad_shape(m, mode, mode_name, want);
}

aclnnStatus fa_mask_prepare(const fa_geom *g, const cann_operand *mask, int64_t mode, const char *mode_name,
                            fa_mask_plan *mp)
{
    *mp = (fa_mask_plan){.kind = FA_MASK_NONE};
    if (!mask->present)
        return ACLNN_SUCCESS;
    if (mode == 0 || mode == 1 || mode == 5)
        return g->layout == FA_LAYOUT_TND ? prepare_tnd(g, mask, mode, mode_name, mp)
                                          : prepare_dense(g, mask, mode, mode_name, mp);
    const int64_t rows = mode == 6 ? 3072 : 2048;
    if (!shape_is(mask, 1, 1, rows, 2048, true))
        return bad_shape(mask, mode, mode_name, mode == 6 ? "[3072, 2048] or [1, 1, 3072, 2048] (compressed)"
                                                          : "[2048, 2048] or [1, 1, 2048, 2048] (compressed)");
    mp->kind = FA_MASK_COMPRESSED;
    return ACLNN_SUCCESS;
}

aclnnStatus fa_prefix_check(const fa_geom *g, const char *fn, const cann_ints *prefix, const char *prefix_name,
                            int64_t mode, const char *mode_name, bool has_mask)
{
    if (mode != 6 || !has_mask)
        return ACLNN_SUCCESS; /* read only by mode 6 with a mask (rule 0) */
    if (!prefix->present)
        return INVALID("%s: %s is absent, but %s 6 needs one entry per batch (B = %lld)", fn, prefix_name, mode_name,
                       (long long)g->B);
    if ((int64_t)prefix->size != g->B)
        return INVALID("%s: %s must have exactly B = %lld entries for %s 6, got %llu", fn, prefix_name, (long long)g->B,
                       mode_name, (unsigned long long)prefix->size);
    for (int64_t b = 0; b < g->B; b++)
        if (prefix->value[b] < 0)
            return INVALID("%s: %s[%lld] must be >= 0, got %lld", fn, prefix_name, (long long)b,
                           (long long)prefix->value[b]);
    return ACLNN_SUCCESS;
}

/* The batch whose band modes 7 and 8 use: last (7) / first (8) batch with query rows. */
static int64_t band_batch(const fc_batch *batch, int64_t B, int64_t mode)
{
    if (mode == 7) {
        for (int64_t b = B - 1; b >= 0; b--)
            if (batch[b].sq > 0)
                return b;
    } else if (mode == 8) {
        for (int64_t b = 0; b < B; b++)
            if (batch[b].sq > 0)
                return b;
    }
    return -1;
}

void fa_lower_visibility(const fa_geom *g, const fa_mask_plan *mp, int64_t mode, int64_t pre, int64_t next,
                         const cann_ints *prefix, fc_batch *batch)
{
    const int64_t band = band_batch(batch, g->B, mode);
    for (int64_t b = 0; b < g->B; b++) {
        fc_batch *bt = &batch[b];
        bt->prefix = 0;
        if (mp->kind == FA_MASK_NONE) {
            fc_lower_window(bt, false, 0, 0, false, 0, 0);
            continue;
        }
        int64_t m = mode; /* modes 7 and 8 are mode 4 on their band batch, 3 or 2 elsewhere */
        if (mode == 7 || mode == 8)
            m = b == band ? 4 : mode == 7 ? 3 : 2;
        switch (m) {
        case 0: fc_lower_window(bt, true, pre, next, false, 0, 0); break;
        case 2: fc_lower_window(bt, true, INT64_MAX, 0, false, 0, 0); break;
        case 3: fc_lower_window(bt, true, INT64_MAX, 0, true, 0, 0); break;
        case 4: fc_lower_window(bt, true, pre, next, true, 0, 0); break;
        case 6:
            fc_lower_window(bt, true, INT64_MAX, 0, true, 0, 0);
            bt->prefix = prefix->value[b];
            break;
        default: fc_lower_window(bt, false, 0, 0, false, 0, 0); break; /* 1, 5: the element mask alone */
        }
    }
}
