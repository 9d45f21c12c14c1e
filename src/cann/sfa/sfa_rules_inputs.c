/* The rules both SparseFlashAttention functions share (see sfa_rules.h). */
#include <math.h>

#include "cann/common/errmsg.h"
#include "cann/fa/fa_layout.h"
#include "sfa_rules.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)
#define NO_LIMIT 2147483647LL

aclnnStatus sfa_capture(sfa_state *s, sfa_param id, bool like_query)
{
    aclnnStatus st = cann_operand_capture(s->fn, sfa_name(s, id), cann_arg_tensor(&sfa_fields, s->c, id), false, &s->t[id]);
    if (st == ACLNN_SUCCESS && like_query && s->t[id].present)
        st = cann_check_same_dtype(&s->t[id], &s->t[SFA_QUERY]);
    return st;
}

static aclnnStatus capture_index(sfa_state *s, sfa_param id, int rank)
{
    static const aclDataType ok[] = {ACL_INT32, ACL_INT64};
    aclnnStatus st = sfa_capture(s, id, false);
    if (st == ACLNN_SUCCESS && s->t[id].present)
        st = cann_check_dtype(&s->t[id], ok, 2);
    if (st == ACLNN_SUCCESS && s->t[id].present && rank)
        st = cann_check_rank(&s->t[id], rank);
    return st;
}

/* ---- tensors, in declaration order --------------------------------------------------------------- */

aclnnStatus sfa_r_query(void *ctx)
{
    sfa_state *s = ctx;
    static const aclDataType ok[] = {ACL_FLOAT16, ACL_BF16};
    aclnnStatus st = sfa_capture(s, SFA_QUERY, false);
    return st ? st : cann_check_dtype(&s->t[SFA_QUERY], ok, 2);
}

aclnnStatus sfa_r_key(void *ctx) { return sfa_capture(ctx, SFA_KEY, true); }
aclnnStatus sfa_r_value(void *ctx) { return sfa_capture(ctx, SFA_VALUE, true); }
aclnnStatus sfa_r_indices(void *ctx) { return capture_index(ctx, SFA_INDICES, 0); }
aclnnStatus sfa_r_act_q(void *ctx) { return capture_index(ctx, SFA_ACT_Q, 1); }
aclnnStatus sfa_r_act_kv(void *ctx) { return capture_index(ctx, SFA_ACT_KV, 1); }
aclnnStatus sfa_r_query_rope(void *ctx) { return sfa_capture(ctx, SFA_QUERY_ROPE, true); }

aclnnStatus sfa_r_key_rope(void *ctx)
{
    sfa_state *s = ctx;
    aclnnStatus st = sfa_capture(s, SFA_KEY_ROPE, true);
    const bool qr = s->t[SFA_QUERY_ROPE].present, kr = s->t[SFA_KEY_ROPE].present;
    if (st == ACLNN_SUCCESS && qr != kr)
        st = INVALID("%s: %s and %s must be given together, got only %s", s->fn, sfa_name(s, SFA_QUERY_ROPE),
                     sfa_name(s, SFA_KEY_ROPE), sfa_name(s, qr ? SFA_QUERY_ROPE : SFA_KEY_ROPE));
    return st;
}

/* ---- attributes ------------------------------------------------------------------------------------ */

aclnnStatus sfa_r_scale(void *ctx)
{
    sfa_state *s = ctx;
    if (!fc_scale_fits(s->c->scale))
        return INVALID("%s: %s must be " FC_SCALE_RULE ", got %g", s->fn, sfa_name(s, SFA_SCALE), s->c->scale);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_r_block_size(void *ctx)
{
    sfa_state *s = ctx;
    if (s->c->block_size < 1)
        return INVALID("%s: %s must be >= 1, got %lld", s->fn, sfa_name(s, SFA_BLOCK_SIZE), (long long)s->c->block_size);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_r_layout_q(void *ctx)
{
    sfa_state *s = ctx;
    const char *str = s->c->layout_q;
    if (!sfa_layout_parse(str, false, &s->g.lq))
        return INVALID("%s: %s must be \"BSND\" or \"TND\", got \"%.64s\"", s->fn, sfa_name(s, SFA_LAYOUT_Q), str);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_r_layout_kv(void *ctx)
{
    sfa_state *s = ctx;
    const char *str = s->c->layout_kv;
    if (!sfa_layout_parse(str, true, &s->g.lkv))
        return INVALID("%s: %s must be \"BSND\", \"TND\" or \"PA_BSND\", got \"%.64s\"", s->fn,
                       sfa_name(s, SFA_LAYOUT_KV), str);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_r_layout(void *ctx)
{
    sfa_state *s = ctx;
    const char *str = s->c->layout ? s->c->layout : "BSND";
    if (!sfa_layout_parse(str, false, &s->g.lq))
        return INVALID("%s: %s must be \"BSND\" or \"TND\" (NULL means \"BSND\"), got \"%.64s\"", s->fn,
                       sfa_name(s, SFA_LAYOUT), str);
    s->g.lkv = s->g.lq;
    return ACLNN_SUCCESS;
}

/* Examined only for a paged key; any other layout ignores it. */
aclnnStatus sfa_r_block_table(void *ctx)
{
    sfa_state *s = ctx;
    static const aclDataType ok[] = {ACL_INT32};
    if (s->g.lkv != SFA_PA_BSND)
        return ACLNN_SUCCESS;
    if (!s->c->block_table)
        return INVALID("%s: %s is absent, but %s \"PA_BSND\" needs it", s->fn, sfa_name(s, SFA_BLOCK_TABLE),
                       sfa_name(s, SFA_LAYOUT_KV));
    aclnnStatus st = sfa_capture(s, SFA_BLOCK_TABLE, false);
    if (st == ACLNN_SUCCESS)
        st = cann_check_dtype(&s->t[SFA_BLOCK_TABLE], ok, 1);
    return st ? st : cann_check_rank(&s->t[SFA_BLOCK_TABLE], 2);
}

aclnnStatus sfa_r_sizes(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_geom_derive(&s->g, &s->t[SFA_QUERY], &s->t[SFA_KEY], &s->t[SFA_VALUE]);
}

aclnnStatus sfa_r_batch(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_geom_batch(&s->g, &s->t[SFA_QUERY], &s->t[SFA_KEY], &s->t[SFA_ACT_Q], &s->t[SFA_ACT_KV],
                          &s->t[SFA_BLOCK_TABLE]);
}

aclnnStatus sfa_r_indices_shape(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_check_indices(&s->g, &s->t[SFA_INDICES]);
}

aclnnStatus sfa_r_rope_shape(void *ctx)
{
    sfa_state *s = ctx;
    const cann_operand *qr = &s->t[SFA_QUERY_ROPE], *kr = &s->t[SFA_KEY_ROPE];
    if (!qr->present)
        return ACLNN_SUCCESS;
    const int64_t dr = qr->rank > 0 ? qr->dims[qr->rank - 1] : 0;
    if (dr < 1 || dr > FA_MAX_DIM)
        return INVALID("%s: %s head dim Dr must be in [1, %d], got %lld", s->fn, qr->name, FA_MAX_DIM, (long long)dr);
    s->g.Dr = dr;
    aclnnStatus st = sfa_check_seq(&s->g, qr, true, s->g.N1, dr);
    return st ? st : sfa_check_seq(&s->g, kr, false, s->g.N2, dr);
}

aclnnStatus sfa_r_sparse_mode(void *ctx)
{
    sfa_state *s = ctx;
    const int64_t m = s->c->sparse_mode;
    if (m != 0 && m != 3)
        return INVALID("%s: %s must be 0 (no mask) or 3 (right-down causal), got %lld", s->fn,
                       sfa_name(s, SFA_SPARSE_MODE), (long long)m);
    return ACLNN_SUCCESS;
}

static aclnnStatus unlimited(const sfa_state *s, sfa_param id, int64_t v)
{
    if (v < NO_LIMIT)
        return INVALID("%s: %s must be >= 2147483647 (no limit; sparse attention has no band), got %lld", s->fn,
                       sfa_name(s, id), (long long)v);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_r_pre(void *ctx) { return unlimited(ctx, SFA_PRE, ((sfa_state *)ctx)->c->pre); }
aclnnStatus sfa_r_next(void *ctx) { return unlimited(ctx, SFA_NEXT, ((sfa_state *)ctx)->c->next); }
