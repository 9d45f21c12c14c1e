/*
 * IncreFlashAttentionV4's checks as rules (see signature.h): each names the parameters it relates
 * and runs when the last of them in the declaration is reached (semantics §0.5, §4.2, §4.3).
 */
#include <math.h>
#include <stdlib.h>

#include "cann/common/errmsg.h"
#include "ifa.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)
#define B(id) CANN_BIT(IFA_##id)
/* Everything the sizes and Smax depend on. */
#define GEOM (B(QUERY) | B(KEY) | B(VALUE) | B(NUM_HEADS) | B(LAYOUT) | B(NUM_KV_HEADS) | B(BLOCK_TABLE) | B(BLOCK_SIZE))

static aclnnStatus capture(ifa_state *s, ifa_param id)
{
    return cann_operand_capture(s->fn, ifa_name(s, id), cann_arg_tensor(&ifa_fields, s->c, id), false, &s->t[id]);
}

/* ---- operands, in declaration order ------------------------------------------------------------ */

static aclnnStatus r_query(void *ctx)
{
    ifa_state *s = ctx;
    static const aclDataType ok[] = {ACL_FLOAT16, ACL_BF16};
    aclnnStatus st = capture(s, IFA_QUERY);
    return st ? st : cann_check_dtype(&s->t[IFA_QUERY], ok, 2);
}

static aclnnStatus r_key(void *ctx) { return ifa_kv_capture(ctx, 0); }

static aclnnStatus r_value(void *ctx)
{
    aclnnStatus st = ifa_kv_capture(ctx, 1);
    return st ? st : ifa_kv_match(ctx);
}

static aclnnStatus r_pse(void *ctx)
{
    ifa_state *s = ctx;
    aclnnStatus st = capture(s, IFA_PSE);
    return st || !s->t[IFA_PSE].present ? st : cann_check_same_dtype(&s->t[IFA_PSE], &s->t[IFA_QUERY]);
}

static aclnnStatus r_mask(void *ctx)
{
    ifa_state *s = ctx;
    static const aclDataType ok[] = {ACL_BOOL, ACL_INT8, ACL_UINT8};
    aclnnStatus st = capture(s, IFA_MASK);
    return st || !s->t[IFA_MASK].present ? st : cann_check_dtype(&s->t[IFA_MASK], ok, 3);
}

static aclnnStatus r_act_len(void *ctx)
{
    ifa_state *s = ctx;
    return cann_ints_capture(s->fn, ifa_name(s, IFA_ACT_LEN), s->c->act_len, &s->act);
}

/* dequantScale1, quantScale1, dequantScale2: all-INT8 query/key/value is not supported (§4.2). */
static aclnnStatus must_be_null(ifa_state *s, ifa_param id)
{
    if (cann_arg_pointer(&ifa_fields, s->c, id))
        return INVALID("%s: %s must be NULL: it belongs to all-INT8 query/key/value, which is not supported (the query "
                       "is %s)",
                       s->fn, ifa_name(s, id), cann_dtype_name(s->t[IFA_QUERY].dtype));
    return ACLNN_SUCCESS;
}

static aclnnStatus r_deq_scale1(void *ctx) { return must_be_null(ctx, IFA_DEQ_SCALE1); }
static aclnnStatus r_q_scale1(void *ctx) { return must_be_null(ctx, IFA_Q_SCALE1); }
static aclnnStatus r_deq_scale2(void *ctx) { return must_be_null(ctx, IFA_DEQ_SCALE2); }
static aclnnStatus r_q_scale2(void *ctx) { return ifa_out_quant_check(ctx); }
static aclnnStatus r_q_offset2(void *ctx) { return ifa_out_offset_check(ctx); }
static aclnnStatus r_aq_scale(void *ctx) { return ifa_antiquant_check(ctx); }
static aclnnStatus r_aq_offset(void *ctx) { return ifa_antiquant_offset_check(ctx); }

static aclnnStatus r_block_table(void *ctx)
{
    ifa_state *s = ctx;
    static const aclDataType ok[] = {ACL_INT32};
    aclnnStatus st = capture(s, IFA_BLOCK_TABLE);
    if (st || !s->t[IFA_BLOCK_TABLE].present)
        return st;
    if ((st = cann_check_dtype(&s->t[IFA_BLOCK_TABLE], ok, 1)))
        return st;
    return cann_check_rank(&s->t[IFA_BLOCK_TABLE], 2);
}

static aclnnStatus r_paged_needs_lengths(void *ctx)
{
    ifa_state *s = ctx;
    if (s->t[IFA_BLOCK_TABLE].present && !s->act.present)
        return INVALID("%s: %s is absent, but page attention (%s given) needs the per-batch lengths", s->fn,
                       ifa_name(s, IFA_ACT_LEN), ifa_name(s, IFA_BLOCK_TABLE));
    return ACLNN_SUCCESS;
}

/* Left padding: read only together with actualSeqLengths (otherwise ignored, not examined). */
static aclnnStatus r_kv_pad(void *ctx)
{
    ifa_state *s = ctx;
    static const aclDataType ok[] = {ACL_INT64};
    if (!s->act.present)
        return ACLNN_SUCCESS;
    cann_operand *p = &s->t[IFA_KV_PAD];
    aclnnStatus st = capture(s, IFA_KV_PAD);
    if (st || !p->present)
        return st;
    if ((st = cann_check_dtype(p, ok, 1)))
        return st;
    if (p->numel != 1) {
        char sh[160];
        return INVALID("%s: %s must hold exactly one element, got shape %s", s->fn, p->name,
                       cann_shape_str(p->dims, p->rank, sh, sizeof sh));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus r_kv_pad_paged(void *ctx)
{
    ifa_state *s = ctx;
    if (s->t[IFA_KV_PAD].present && s->t[IFA_BLOCK_TABLE].present)
        return INVALID("%s: %s (kv left padding) cannot be combined with page attention (%s given)", s->fn,
                       ifa_name(s, IFA_KV_PAD), ifa_name(s, IFA_BLOCK_TABLE));
    return ACLNN_SUCCESS;
}

/* ---- attributes ----------------------------------------------------------------------------------- */

static aclnnStatus r_num_heads(void *ctx)
{
    ifa_state *s = ctx;
    const int64_t n = s->c->num_heads;
    if (n < 1 || n > FA_MAX_HEADS)
        return INVALID("%s: %s must be in [1, %d], got %lld", s->fn, ifa_name(s, IFA_NUM_HEADS), FA_MAX_HEADS,
                       (long long)n);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_scale(void *ctx)
{
    ifa_state *s = ctx;
    if (!fc_scale_fits(s->c->scale))
        return INVALID("%s: %s must be " FC_SCALE_RULE ", got %g", s->fn, ifa_name(s, IFA_SCALE), s->c->scale);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_layout(void *ctx)
{
    ifa_state *s = ctx;
    const char *str = s->c->layout;
    fa_layout l;
    if (!fa_layout_parse(str, &l) || (l != FA_LAYOUT_BSH && l != FA_LAYOUT_BSND && l != FA_LAYOUT_BNSD))
        return INVALID("%s: %s must be \"BSH\", \"BSND\" or \"BNSD\", got \"%.64s\"", s->fn, ifa_name(s, IFA_LAYOUT), str);
    s->g.layout = l;
    return ACLNN_SUCCESS;
}

static aclnnStatus r_query_geom(void *ctx) { return ifa_query_geom(ctx); }

static aclnnStatus r_num_kv_heads(void *ctx)
{
    ifa_state *s = ctx;
    const int64_t n = s->c->num_kv_heads;
    if (n < 0 || n > FA_MAX_HEADS)
        return INVALID("%s: %s must be 0 (as many as numHeads) or in [1, %d], got %lld", s->fn,
                       ifa_name(s, IFA_NUM_KV_HEADS), FA_MAX_HEADS, (long long)n);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_kv_geom(void *ctx) { return ifa_kv_geom(ctx); }
static aclnnStatus r_paged_geom(void *ctx) { return ifa_paged_geom(ctx); }

/* L_b (not cumulative): one value for all batches or one per batch, each in [0, S_b] (§4.2). */
static aclnnStatus r_lengths(void *ctx)
{
    ifa_state *s = ctx;
    const ifa_geom *g = &s->g;
    const cann_ints *a = &s->act;
    const char *an = ifa_name(s, IFA_ACT_LEN);
    if (a->present && a->size != 1 && a->size != (uint64_t)g->B)
        return INVALID("%s: %s must hold 1 length (for every batch) or B = %lld lengths, got %llu", s->fn, an,
                       (long long)g->B, (unsigned long long)a->size);
    s->len = malloc((size_t)g->B * sizeof *s->len);
    if (!s->len)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld lengths", s->fn, (long long)g->B);
    for (int64_t b = 0; b < g->B; b++) {
        const int64_t sb = ifa_seq_len(s, b);
        const uint64_t k = a->present && a->size > 1 ? (uint64_t)b : 0;
        s->len[b] = a->present ? a->value[k] : sb;
        if (s->len[b] < 0 || s->len[b] > sb)
            return INVALID("%s: %s[%llu] must be in [0, %lld] (%s of batch %lld), got %lld", s->fn, an,
                           (unsigned long long)k, (long long)sb,
                           g->paged ? "blocktable width times blockSize" : "the kv sequence length", (long long)b,
                           (long long)s->len[b]);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus r_pse_shape(void *ctx)
{
    ifa_state *s = ctx;
    const cann_operand *p = &s->t[IFA_PSE];
    const ifa_geom *g = &s->g;
    if (!p->present)
        return ACLNN_SUCCESS;
    const int64_t *d = p->dims;
    if (p->rank != 4 || (d[0] != g->B && d[0] != 1) || d[1] != g->N1 || d[2] != 1 || d[3] < g->s_max) {
        char sh[160];
        return INVALID("%s: %s must have shape (B = %lld or 1, N1 = %lld, 1, S) with S >= %lld (Smax), got %s", s->fn,
                       p->name, (long long)g->B, (long long)g->N1, (long long)g->s_max,
                       cann_shape_str(d, p->rank, sh, sizeof sh));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus r_mask_shape(void *ctx)
{
    ifa_state *s = ctx;
    const cann_operand *m = &s->t[IFA_MASK];
    const ifa_geom *g = &s->g;
    if (!m->present)
        return ACLNN_SUCCESS;
    bool ok = m->rank >= 2 && m->rank <= 4 && m->dims[0] == g->B && m->dims[m->rank - 1] >= g->s_max;
    for (int d = 1; ok && d < m->rank - 1; d++)
        ok = m->dims[d] == 1;
    if (!ok) {
        char sh[160];
        return INVALID("%s: %s must have shape (B, S), (B, 1, S) or (B, 1, 1, S) with B = %lld and S >= %lld (Smax), "
                       "got %s",
                       s->fn, m->name, (long long)g->B, (long long)g->s_max,
                       cann_shape_str(m->dims, m->rank, sh, sizeof sh));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus r_antiquant_shape(void *ctx) { return ifa_antiquant_shape(ctx); }
static aclnnStatus r_out_quant_shape(void *ctx) { return ifa_out_quant_shape(ctx); }

static aclnnStatus r_inner_precise(void *ctx)
{
    ifa_state *s = ctx;
    const int64_t v = s->c->inner_precise;
    if (v != 0 && v != 1)
        return INVALID("%s: %s must be 0 or 1, got %lld", s->fn, ifa_name(s, IFA_INNER_PRECISE), (long long)v);
    return ACLNN_SUCCESS;
}

/* ---- the output ------------------------------------------------------------------------------------ */

static aclnnStatus r_out(void *ctx)
{
    ifa_state *s = ctx;
    cann_operand *o = &s->t[IFA_OUT];
    aclnnStatus st = capture(s, IFA_OUT);
    if (st)
        return st;
    const aclDataType ok[] = {s->t[IFA_QUERY].dtype, ACL_INT8};
    if ((st = cann_check_dtype(o, ok, 2)))
        return st;
    const bool quant = s->t[IFA_Q_SCALE2].present;
    if (o->dtype == ACL_INT8 && !quant)
        return INVALID("%s: %s is INT8, which needs %s for the output quantisation, but %s is absent", s->fn, o->name,
                       ifa_name(s, IFA_Q_SCALE2), ifa_name(s, IFA_Q_SCALE2));
    if (o->dtype != ACL_INT8 && quant)
        return INVALID("%s: %s is given, but %s is %s: output quantisation needs an INT8 %s", s->fn,
                       ifa_name(s, IFA_Q_SCALE2), o->name, cann_dtype_name(o->dtype), o->name);
    return cann_check_disjoint(o);
}

static aclnnStatus r_out_shape(void *ctx)
{
    ifa_state *s = ctx;
    const cann_operand *q = &s->t[IFA_QUERY];
    return cann_check_shape(&s->t[IFA_OUT], q->dims, q->rank);
}

/* Table order breaks ties between rules charged to the same parameter; a rule that uses what
 * another derives comes after it. */
static const cann_rule ifa_rules[] = {
    {B(QUERY), r_query},
    {B(KEY) | B(QUERY), r_key},
    {B(VALUE) | B(KEY) | B(QUERY), r_value},
    {B(PSE) | B(QUERY), r_pse},
    {B(MASK), r_mask},
    {B(ACT_LEN), r_act_len},
    {B(DEQ_SCALE1) | B(QUERY), r_deq_scale1},
    {B(Q_SCALE1) | B(QUERY), r_q_scale1},
    {B(DEQ_SCALE2) | B(QUERY), r_deq_scale2},
    {B(Q_SCALE2) | B(QUERY), r_q_scale2},
    {B(Q_OFFSET2) | B(Q_SCALE2), r_q_offset2},
    {B(AQ_SCALE) | B(KEY) | B(VALUE), r_aq_scale},
    {B(AQ_OFFSET) | B(AQ_SCALE) | B(KEY) | B(VALUE), r_aq_offset},
    {B(BLOCK_TABLE), r_block_table},
    {B(BLOCK_TABLE) | B(ACT_LEN), r_paged_needs_lengths},
    {B(KV_PAD) | B(ACT_LEN), r_kv_pad},
    {B(KV_PAD) | B(ACT_LEN) | B(BLOCK_TABLE), r_kv_pad_paged},
    {B(NUM_HEADS), r_num_heads},
    {B(SCALE), r_scale},
    {B(LAYOUT), r_layout},
    {B(QUERY) | B(NUM_HEADS) | B(LAYOUT), r_query_geom},
    {B(NUM_KV_HEADS), r_num_kv_heads},
    {B(QUERY) | B(KEY) | B(VALUE) | B(NUM_HEADS) | B(LAYOUT) | B(BLOCK_TABLE) | B(NUM_KV_HEADS), r_kv_geom},
    {GEOM, r_paged_geom},
    {GEOM | B(ACT_LEN), r_lengths},
    {GEOM | B(PSE), r_pse_shape},
    {GEOM | B(MASK), r_mask_shape},
    {GEOM | B(AQ_SCALE) | B(AQ_OFFSET), r_antiquant_shape},
    {GEOM | B(Q_SCALE2) | B(Q_OFFSET2), r_out_quant_shape},
    {B(INNER_PRECISE), r_inner_precise},
    {B(OUT) | B(QUERY) | B(Q_SCALE2), r_out},
    {GEOM | B(OUT), r_out_shape},
};

aclnnStatus ifa_validate(ifa_state *s)
{
    return cann_run_rules(s->c->sig, ifa_rules, (int)(sizeof ifa_rules / sizeof ifa_rules[0]), s);
}
