/*
 * The rule tables of SparseFlashAttention and its grad (semantics §5.2, order of §0.5), with the
 * rules only one of them has: the forward's attentionMode and outputs, the grad's forward tensors
 * and gradients.  Table order breaks ties between rules charged to the same parameter; a rule that
 * uses what another derives comes after it.
 */
#include "cann/common/errmsg.h"
#include "sfa_rules.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)
#define B(id) SFA_BIT(id)

/* ---- forward ------------------------------------------------------------------------------------- */

static aclnnStatus r_attention_mode(void *ctx)
{
    sfa_state *s = ctx;
    const int64_t m = s->c->attention_mode;
    if (m != 0 && m != 2)
        return INVALID("%s: %s must be 0 or 2, got %lld", s->fn, sfa_name(s, SFA_ATTN_MODE), (long long)m);
    return ACLNN_SUCCESS;
}

/* An output: query's dtype, no two elements at one address. */
static aclnnStatus capture_output(sfa_state *s, sfa_param id, bool like_query)
{
    aclnnStatus st = sfa_capture(s, id, like_query);
    return st || !s->t[id].present ? st : cann_check_disjoint(&s->t[id]);
}

static aclnnStatus r_attention_out(void *ctx) { return capture_output(ctx, SFA_OUT, true); }

static aclnnStatus r_out_shape(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_check_seq(&s->g, &s->t[SFA_OUT], true, s->g.N1, s->g.Dv);
}

/* Statistics outputs: examined only when returnSoftmaxLse is true (then required, see sfa_prepare). */
static aclnnStatus stats_out(sfa_state *s, sfa_param id)
{
    static const aclDataType f32[] = {ACL_FLOAT};
    if (!s->c->return_lse)
        return ACLNN_SUCCESS;
    aclnnStatus st = capture_output(s, id, false);
    return st ? st : cann_check_dtype(&s->t[id], f32, 1);
}

static aclnnStatus stats_shape(sfa_state *s, sfa_param id)
{
    return s->t[id].present ? sfa_check_stats(&s->g, &s->t[id]) : ACLNN_SUCCESS;
}

static aclnnStatus r_smax_out(void *ctx) { return stats_out(ctx, SFA_SMAX); }
static aclnnStatus r_ssum_out(void *ctx) { return stats_out(ctx, SFA_SSUM); }
static aclnnStatus r_smax_shape(void *ctx) { return stats_shape(ctx, SFA_SMAX); }
static aclnnStatus r_ssum_shape(void *ctx) { return stats_shape(ctx, SFA_SSUM); }

/* ---- grad ------------------------------------------------------------------------------------------ */

static aclnnStatus r_dout(void *ctx) { return sfa_capture(ctx, SFA_DOUT, true); }
static aclnnStatus r_out_in(void *ctx) { return sfa_capture(ctx, SFA_OUT, true); }

/* Statistics inputs: FLOAT32 and contiguous. */
static aclnnStatus stats_in(sfa_state *s, sfa_param id)
{
    static const aclDataType f32[] = {ACL_FLOAT};
    aclnnStatus st = sfa_capture(s, id, false);
    if (st == ACLNN_SUCCESS)
        st = cann_check_dtype(&s->t[id], f32, 1);
    return st ? st : cann_check_contiguous(&s->t[id]);
}

static aclnnStatus r_smax_in(void *ctx) { return stats_in(ctx, SFA_SMAX); }
static aclnnStatus r_ssum_in(void *ctx) { return stats_in(ctx, SFA_SSUM); }

static aclnnStatus r_grad_shapes(void *ctx)
{
    sfa_state *s = ctx;
    const sfa_geom *g = &s->g;
    aclnnStatus st = sfa_check_seq(g, &s->t[SFA_DOUT], true, g->N1, g->Dv);
    if (st == ACLNN_SUCCESS)
        st = sfa_check_seq(g, &s->t[SFA_OUT], true, g->N1, g->Dv);
    if (st == ACLNN_SUCCESS)
        st = sfa_check_stats(g, &s->t[SFA_SMAX]);
    return st ? st : sfa_check_stats(g, &s->t[SFA_SSUM]);
}

static aclnnStatus r_dq(void *ctx) { return capture_output(ctx, SFA_DQ, true); }
static aclnnStatus r_dk(void *ctx) { return capture_output(ctx, SFA_DK, true); }
static aclnnStatus r_dv(void *ctx) { return capture_output(ctx, SFA_DV, true); }

static aclnnStatus r_dq_shape(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_check_seq(&s->g, &s->t[SFA_DQ], true, s->g.N1, s->g.D);
}

static aclnnStatus r_dk_shape(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_check_seq(&s->g, &s->t[SFA_DK], false, s->g.N2, s->g.D);
}

static aclnnStatus r_dv_shape(void *ctx)
{
    sfa_state *s = ctx;
    return sfa_check_seq(&s->g, &s->t[SFA_DV], false, s->g.N2, s->g.Dv);
}

/* A rope gradient: required (161002) with rope, ignored without. */
static aclnnStatus rope_grad(sfa_state *s, sfa_param id, sfa_param input, bool q_side)
{
    if (!s->t[input].present)
        return ACLNN_SUCCESS;
    if (!cann_arg_tensor(&sfa_fields, s->c, id))
        return INVALID("%s: %s is absent, but %s is given and needs its gradient", s->fn, sfa_name(s, id),
                       sfa_name(s, input));
    aclnnStatus st = capture_output(s, id, true);
    return st ? st : sfa_check_seq(&s->g, &s->t[id], q_side, q_side ? s->g.N1 : s->g.N2, s->g.Dr);
}

static aclnnStatus r_dq_rope(void *ctx) { return rope_grad(ctx, SFA_DQ_ROPE, SFA_QUERY_ROPE, true); }
static aclnnStatus r_dk_rope(void *ctx) { return rope_grad(ctx, SFA_DK_ROPE, SFA_KEY_ROPE, false); }

/* ---- the tables ------------------------------------------------------------------------------------ */

#define INPUTS                                                                                                         \
    {B(QUERY), sfa_r_query}, {B(KEY) | B(QUERY), sfa_r_key}, {B(VALUE) | B(QUERY), sfa_r_value},                      \
        {B(INDICES), sfa_r_indices}
#define LENGTHS_ROPE_ATTRS                                                                                             \
    {B(ACT_Q), sfa_r_act_q}, {B(ACT_KV), sfa_r_act_kv}, {B(QUERY_ROPE) | B(QUERY), sfa_r_query_rope},                 \
        {B(KEY_ROPE) | B(QUERY_ROPE) | B(QUERY), sfa_r_key_rope}, {B(SCALE), sfa_r_scale},                            \
        {B(BLOCK_SIZE), sfa_r_block_size}
#define SHAPES                                                                                                         \
    {SFA_SIZES, sfa_r_sizes}, {SFA_SIZES | B(ACT_Q) | B(ACT_KV) | B(BLOCK_TABLE), sfa_r_batch},                       \
        {SFA_SIZES | B(INDICES), sfa_r_indices_shape},                                                               \
        {SFA_SIZES | B(QUERY_ROPE) | B(KEY_ROPE), sfa_r_rope_shape}
#define MODES {B(SPARSE_MODE), sfa_r_sparse_mode}, {B(PRE), sfa_r_pre}, {B(NEXT), sfa_r_next}

static const cann_rule forward_rules[] = {
    INPUTS,
    LENGTHS_ROPE_ATTRS,
    {B(LAYOUT_Q), sfa_r_layout_q},
    {B(LAYOUT_KV), sfa_r_layout_kv},
    {B(BLOCK_TABLE) | B(LAYOUT_KV), sfa_r_block_table},
    SHAPES,
    MODES,
    {B(ATTN_MODE), r_attention_mode},
    {B(OUT) | B(QUERY), r_attention_out},
    {SFA_SIZES | B(OUT), r_out_shape},
    {B(SMAX) | B(RETURN_LSE), r_smax_out},
    {SFA_SIZES | B(SMAX) | B(RETURN_LSE), r_smax_shape},
    {B(SSUM) | B(RETURN_LSE), r_ssum_out},
    {SFA_SIZES | B(SSUM) | B(RETURN_LSE), r_ssum_shape},
};

static const cann_rule grad_rules[] = {
    INPUTS,
    {B(DOUT) | B(QUERY), r_dout},
    {B(OUT) | B(QUERY), r_out_in},
    {B(SMAX), r_smax_in},
    {B(SSUM), r_ssum_in},
    LENGTHS_ROPE_ATTRS,
    {B(LAYOUT), sfa_r_layout},
    SHAPES,
    {SFA_SIZES | B(DOUT) | B(OUT) | B(SMAX) | B(SSUM), r_grad_shapes},
    MODES,
    {B(DQ) | B(QUERY), r_dq},
    {SFA_SIZES | B(DQ), r_dq_shape},
    {B(DK) | B(QUERY), r_dk},
    {SFA_SIZES | B(DK), r_dk_shape},
    {B(DV) | B(QUERY), r_dv},
    {SFA_SIZES | B(DV), r_dv_shape},
    {SFA_SIZES | B(DQ_ROPE) | B(QUERY_ROPE), r_dq_rope},
    {SFA_SIZES | B(DK_ROPE) | B(KEY_ROPE), r_dk_rope},
};

aclnnStatus sfa_validate(sfa_state *s)
{
    if (s->c->backward)
        return cann_run_rules(s->c->sig, grad_rules, (int)(sizeof grad_rules / sizeof grad_rules[0]), s);
    return cann_run_rules(s->c->sig, forward_rules, (int)(sizeof forward_rules / sizeof forward_rules[0]), s);
}
