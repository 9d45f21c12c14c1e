#include "fa_pse.h"

#include <stdio.h>

#include "core/error.h"
#include "core/lower.h"
#include "cann/common/errmsg.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

aclnnStatus fa_pse_check_type(const cann_operand *pse, const cann_operand *q, int64_t pse_type, const char *type_name)
{
    if (!pse->present)
        return ACLNN_SUCCESS; /* the type is ignored without a pse */
    if (pse_type < 0 || pse_type > 3)
        return INVALID("%s: %s must be in [0, 3], got %lld", pse->fn, type_name, (long long)pse_type);
    if (pse_type >= 2) {
        static const aclDataType f32[] = {ACL_FLOAT};
        return cann_check_dtype(pse, f32, 1);
    }
    return cann_check_same_dtype(pse, q);
}

/* Sets the batch's pse base and shifts (external pse). */
static void batch_shifts(const fa_pse_plan *pp, int64_t b, fc_batch *bt)
{
    bt->pse_base = b * pp->sb;
    bt->pse_row_shift = 0;
    bt->pse_col_shift = 0;
    if (pp->corner) {
        bt->pse_row_shift = pp->rows - bt->sq;
        bt->pse_col_shift = pp->cols - bt->skv;
    }
}

static aclnnStatus prepare_alibi(const fa_geom *g, const cann_operand *pse, int64_t pse_type, fa_pse_plan *pp)
{
    const int64_t *d = pse->dims;
    if (!((pse->rank == 2 && d[0] == g->B && d[1] == g->N1) || (pse->rank == 1 && d[0] == g->N1))) {
        char got[160];
        return INVALID("%s: %s must hold ALiBi slopes of shape [B, N1] = [%lld, %lld] or [N1] = [%lld] for pseType %lld, "
                       "got %s",
                       pse->fn, pse->name, (long long)g->B, (long long)g->N1, (long long)g->N1, (long long)pse_type,
                       cann_shape_str(pse->dims, pse->rank, got, sizeof got));
    }
    pp->kind = FA_PSE_ALIBI;
    pp->alibi.slopes = (const float *)pse->data;
    pp->alibi.sb = pse->rank == 2 && g->B > 1 ? pse->strides[0] : 0;
    pp->alibi.sn = g->N1 > 1 ? pse->strides[pse->rank - 1] : 0;
    pp->alibi.sqrt_distance = pse_type == 3;
    return ACLNN_SUCCESS;
}

/* Dense external shapes; returns false when none matches. */
static bool match_dense(const fa_geom *g, const int64_t *d, fa_pse_plan *pp)
{
    const bool bp = d[0] == g->B || d[0] == 1;
    if (d[1] != g->N1 || d[3] != g->S2)
        return false;
    if (d[2] == g->S1 && bp)
        return true;                                   /* [B or 1, N1, S1, S2] */
    if (d[2] == 1 && d[0] == g->B)
        return true;                                   /* [B, N1, 1, S2]: one row for all */
    if (d[2] == FA_PSE_ROWS && g->S1 > FA_PSE_ROWS && bp) {
        pp->corner = true;                             /* compressed: the last 1024 rows */
        return true;
    }
    return false;
}

aclnnStatus fa_pse_prepare(const fa_geom *g, const cann_operand *pse, int64_t pse_type, fa_pse_plan *pp)
{
    *pp = (fa_pse_plan){.kind = FA_PSE_NONE};
    if (!pse->present)
        return ACLNN_SUCCESS;
    if (pse_type >= 2)
        return prepare_alibi(g, pse, pse_type, pp);
    const int64_t *d = pse->dims;
    const bool tnd = g->layout == FA_LAYOUT_TND;
    bool ok = pse->rank == 4;
    if (ok && tnd) {
        ok = (d[0] == g->B || d[0] == 1) && d[1] == g->N1 && d[2] == FA_PSE_ROWS && d[3] >= g->S2;
        pp->corner = true;
    } else if (ok) {
        ok = match_dense(g, d, pp);
    }
    if (!ok) {
        char got[160], want[240];
        if (tnd)
            snprintf(want, sizeof want, "[B, N1, 1024, P2] or [1, N1, 1024, P2] with B = %lld, N1 = %lld, P2 >= %lld",
                     (long long)g->B, (long long)g->N1, (long long)g->S2);
        else
            snprintf(want, sizeof want,
                     "[B, N1, S1, S2], [1, N1, S1, S2], [B, N1, 1, S2] or (S1 > 1024) [B or 1, N1, 1024, S2] with "
                     "B = %lld, N1 = %lld, S1 = %lld, S2 = %lld",
                     (long long)g->B, (long long)g->N1, (long long)g->S1, (long long)g->S2);
        return INVALID("%s: %s must have shape %s for pseType %lld, got %s", pse->fn, pse->name, want,
                       (long long)pse_type, cann_shape_str(d, pse->rank, got, sizeof got));
    }
    pp->kind = FA_PSE_EXTERNAL;
    pp->rows = d[2];
    pp->cols = d[3];
    pp->sb = d[0] > 1 ? pse->strides[0] : 0;
    pp->view = (fc_pse_view){.data = pse->data, .dtype = cann_fc_dtype(pse->dtype), .before_scale = pse_type == 1,
                             .sn = g->N1 > 1 ? pse->strides[1] : 0, .si = d[2] > 1 ? pse->strides[2] : 0,
                             .sj = d[3] > 1 ? pse->strides[3] : 0, .toeplitz_rows = pp->corner ? FA_PSE_ROWS : 0};
    for (int64_t b = 0; b < g->B; b++) { /* every batch's block must lie inside the tensor */
        fc_batch bt = {.sq = fa_len_q(g, b), .skv = fa_len_kv(g, b)};
        batch_shifts(pp, b, &bt);
        if (fc_check_pse_extent(pse->fn, pse->name, &bt, b, pp->rows, pp->cols, d[2] != 1, pp->corner) != FC_OK)
            return INVALID("%s", fc_error_message());
    }
    return ACLNN_SUCCESS;
}

aclnnStatus fa_pse_check_mode(const fa_geom *g, const fa_pse_plan *pp, const char *fn, const char *pse_name,
                              int64_t mode, const char *mode_name)
{
    if (pp->kind != FA_PSE_EXTERNAL || !pp->corner)
        return ACLNN_SUCCESS;
    const bool tnd = g->layout == FA_LAYOUT_TND;
    const bool mode_ok = mode == 0 || mode == 2 || mode == 3 || (tnd && (mode == 7 || mode == 8));
    for (int64_t b = 0; b < g->B && !mode_ok; b++)
        if (fa_len_q(g, b) > FA_PSE_ROWS)
            return INVALID("%s: %s %lld cannot be combined with %s in its compressed 1024-row form (batch %lld has "
                           "S1 = %lld > 1024); expected %s",
                           fn, mode_name, (long long)mode, pse_name, (long long)b, (long long)fa_len_q(g, b),
                           tnd ? "0, 2, 3, 7 or 8" : "0, 2 or 3");
    return ACLNN_SUCCESS;
}

void fa_pse_starts(fa_pse_plan *pp, const cann_ints *q_start, const cann_ints *kv_start)
{
    pp->q_start = q_start->present && q_start->size > 0 ? q_start->value[0] : 0;
    pp->kv_start = kv_start->present && kv_start->size > 0 ? kv_start->value[0] : 0;
}

void fa_pse_lower(const fa_geom *g, const fa_pse_plan *pp, int64_t mode, fc_batch *batch)
{
    const int64_t dpos = fc_sat_sub(pp->kv_start, pp->q_start);
    for (int64_t b = 0; b < g->B; b++) {
        fc_batch *bt = &batch[b];
        if (pp->kind == FA_PSE_ALIBI) /* TND mode 8: the start indices shift batch 0 only */
            bt->alibi_dpos = g->layout == FA_LAYOUT_TND && mode == 8 && b > 0 ? 0 : dpos;
        if (pp->kind != FA_PSE_EXTERNAL)
            continue;
        batch_shifts(pp, b, bt);
        if (bt->pse_row_shift < 0 && bt->vis_hi > 0)
            bt->vis_hi = 0; /* compressed rows are defined for j <= i only */
    }
}
