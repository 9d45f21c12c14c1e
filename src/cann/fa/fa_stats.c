#include "fa_stats.h"

#include <string.h>

#include "cann/common/errmsg.h"
#include "core/lower.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

bool fa_softmax_layout_parse(const char *s, bool *token_major)
{
    if (!s || s[0] == '\0') {
        *token_major = false;
        return true;
    }
    if (strnlen(s, 64) == 64 || strcmp(s, "same_as_input") != 0)
        return false;
    *token_major = true;
    return true;
}

aclnnStatus fa_stats_check_tensor(const cann_operand *t)
{
    static const aclDataType f32[] = {ACL_FLOAT};
    aclnnStatus st = cann_check_dtype(t, f32, 1);
    if (st == ACLNN_SUCCESS)
        st = cann_check_contiguous(t);
    return st;
}

aclnnStatus fa_stats_check_shape(const fa_geom *g, const cann_operand *t)
{
    if (g->layout != FA_LAYOUT_TND) {
        const int64_t want[4] = {g->B, g->N1, g->S1, FA_STAT_REPLICAS};
        return cann_check_shape(t, want, 4);
    }
    const int64_t *d = t->dims;
    if (t->rank == 3 && d[2] == FA_STAT_REPLICAS &&
        ((d[0] == g->T1 && d[1] == g->N1) || (d[0] == g->N1 && d[1] == g->T1)))
        return ACLNN_SUCCESS;
    char got[160];
    return INVALID("%s: %s must have shape [T1, N1, 8] = [%lld, %lld, 8] or [N1, T1, 8], got %s", t->fn, t->name,
                   (long long)g->T1, (long long)g->N1, cann_shape_str(d, t->rank, got, sizeof got));
}

aclnnStatus fa_dropout_check_tensor(const cann_operand *mask)
{
    static const aclDataType u8[] = {ACL_UINT8};
    aclnnStatus st = cann_check_dtype(mask, u8, 1);
    if (st == ACLNN_SUCCESS)
        st = cann_check_contiguous(mask);
    return st;
}

aclnnStatus fa_dropout_check_size(const fa_geom *g, const cann_operand *mask)
{
    int64_t bits = 0, per;
    for (int64_t b = 0; b < g->B; b++)
        if (__builtin_mul_overflow(fa_len_q(g, b), fa_len_kv(g, b), &per) || __builtin_mul_overflow(per, g->N1, &per) ||
            __builtin_add_overflow(bits, per, &bits))
            return INVALID("%s: %s: the dropout bit count overflows int64", mask->fn, mask->name);
    const int64_t need = bits / 8 + (bits % 8 != 0);
    if (mask->numel < need)
        return INVALID("%s: %s must hold at least %lld bytes (one bit per score, %lld scores), got %lld", mask->fn,
                       mask->name, (long long)need, (long long)bits, (long long)mask->numel);
    return ACLNN_SUCCESS;
}

fc_stats_view fa_lower_stats(const fa_geom *g, bool token_major, float *max, float *sum)
{
    return fc_lower_stats(max, sum, token_major ? FC_STATS_TOKEN_MAJOR : FC_STATS_HEAD_MAJOR, FA_STAT_REPLICAS, g->N1,
                          g->N1 / g->N2, g->T1);
}
