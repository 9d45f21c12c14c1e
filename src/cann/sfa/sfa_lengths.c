#include "sfa_lengths.h"

#include "cann/common/errmsg.h"
#include "core/checked.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

static int64_t entry(const cann_operand *t, int64_t b)
{
    const char *at = t->data + b * t->strides[0] * t->esize;
    return t->dtype == ACL_INT64 ? *(const int64_t *)at : (int64_t)*(const int32_t *)at;
}

static aclnnStatus read_cumulative(const char *fn, const cann_operand *t, int64_t B, int64_t total, int64_t *len)
{
    int64_t prev = 0;
    for (int64_t b = 0; b < B; b++) {
        const int64_t x = entry(t, b);
        if (x < prev)
            return INVALID("%s: %s[%lld] must be >= %s (%lld): the lengths are cumulative, got %lld", fn, t->name,
                           (long long)b, b ? "the previous entry" : "0", (long long)prev, (long long)x);
        len[b] = x - prev;
        prev = x;
    }
    if (prev != total)
        return INVALID("%s: %s[%lld] (the last cumulative entry) must equal the token count %lld, got %lld", fn, t->name,
                       (long long)(B - 1), (long long)total, (long long)prev);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_read_lengths(const char *fn, const cann_operand *t, sfa_layout layout, int64_t B, int64_t cap,
                             int64_t total, int64_t *len)
{
    if (!t->present) {
        for (int64_t b = 0; b < B; b++)
            len[b] = cap;
        return ACLNN_SUCCESS;
    }
    if (layout == SFA_TND)
        return read_cumulative(fn, t, B, total, len);
    for (int64_t b = 0; b < B; b++) {
        const int64_t x = entry(t, b);
        if (x < 0 || x > cap)
            return INVALID("%s: %s[%lld] must be in [0, %lld] (%s), got %lld", fn, t->name, (long long)b, (long long)cap,
                           layout == SFA_PA_BSND ? "the block table's width times the block size, at most 1048576"
                                                 : "the padded sequence length",
                           (long long)x);
        len[b] = x;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_read_block_table(const char *fn, const cann_operand *t, const int64_t *skv, const sfa_geom *g,
                                 int32_t *out)
{
    /* offsets from indices (bounded by the checked extent), never stride·esize alone: the stride
     * of a size-1 dim may be anything */
    const int64_t s0 = t->strides[0], s1 = t->strides[1];
    for (int64_t b = 0; b < g->B; b++) {
        const int64_t used = fc_ceil_div(skv[b], g->slots);
        for (int64_t k = 0; k < g->width; k++) {
            const int32_t blk = *(const int32_t *)(t->data + (b * s0 + k * s1) * t->esize);
            if (k < used && (blk < 0 || blk >= g->blocks))
                return INVALID("%s: %s[%lld][%lld] is %d, outside [0, %lld) (the key's block count)", fn, t->name,
                               (long long)b, (long long)k, blk, (long long)g->blocks);
            out[b * g->width + k] = blk;
        }
    }
    return ACLNN_SUCCESS;
}
