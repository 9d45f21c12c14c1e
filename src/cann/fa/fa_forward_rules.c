/*
 * The forward family's checks as rules (see signature.h): each names the parameters it relates,
 * and runs when the last of them (in the function's declaration order) is reached.  The rules of
 * the parameters the forward shares with its backward (inputs, attributes, softmax statistics and
 * their layout) form fa_shared_rules, which the backward runs too (fa_grad_rules.c).
 */
#include <math.h>
#include <stdio.h>

#include "cann/common/errmsg.h"
#include "fa_forward_state.h"
#include "fa_stats.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)
#define B(id) CANN_BIT(FA_##id)
/* Everything the sizes depend on. */
#define SIZES (B(QUERY) | B(KEY) | B(VALUE) | B(HEAD_NUM) | B(LAYOUT) | B(ACT_Q) | B(ACT_KV))

static const char *name(const fa_fwd *f, fa_param id) { return cann_sig_name(f->c->sig, id); }

static aclnnStatus capture(fa_fwd *f, fa_param id)
{
    return cann_operand_capture(f->fn, name(f, id), cann_arg_tensor(&fa_fields, f->c, id), false, &f->t[id]);
}

static aclnnStatus capture_ints(fa_fwd *f, fa_param id, cann_ints *out)
{
    return cann_ints_capture(f->fn, name(f, id), cann_arg_ints(&fa_fields, f->c, id), out);
}

/* Captures an input that must have the query's dtype when present. */
static aclnnStatus capture_like_query(fa_fwd *f, fa_param id)
{
    aclnnStatus st = capture(f, id);
    if (st == ACLNN_SUCCESS && f->t[id].present)
        st = cann_check_same_dtype(&f->t[id], &f->t[FA_QUERY]);
    return st;
}

/* ---- operands, in declaration order ------------------------------------------------------------ */

static aclnnStatus r_query(void *ctx)
{
    fa_fwd *f = ctx;
    static const aclDataType ok[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
    aclnnStatus st = capture(f, FA_QUERY);
    return st ? st : cann_check_dtype(&f->t[FA_QUERY], ok, 3);
}

static aclnnStatus r_query_rope(void *ctx) { return capture_like_query(ctx, FA_QUERY_ROPE); }
static aclnnStatus r_key(void *ctx) { return capture_like_query(ctx, FA_KEY); }
static aclnnStatus r_value(void *ctx) { return capture_like_query(ctx, FA_VALUE); }

static aclnnStatus r_key_rope(void *ctx)
{
    fa_fwd *f = ctx;
    aclnnStatus st = capture_like_query(f, FA_KEY_ROPE);
    if (st == ACLNN_SUCCESS && f->t[FA_KEY_ROPE].present != f->t[FA_QUERY_ROPE].present)
        st = INVALID("%s: %s and %s must be given together, got only %s", f->fn, name(f, FA_QUERY_ROPE),
                     name(f, FA_KEY_ROPE), f->t[FA_QUERY_ROPE].present ? name(f, FA_QUERY_ROPE) : name(f, FA_KEY_ROPE));
    return st;
}

static aclnnStatus r_real_shift(void *ctx) { return capture(ctx, FA_REAL_SHIFT); }

static aclnnStatus r_pse_type(void *ctx)
{
    fa_fwd *f = ctx;
    const char *type = cann_sig_has(f->c->sig, FA_PSE_TYPE) ? name(f, FA_PSE_TYPE) : "pseType (1 for this function)";
    return fa_pse_check_type(&f->t[FA_REAL_SHIFT], &f->t[FA_QUERY], f->c->pse_type, type);
}

static aclnnStatus r_atten_mask(void *ctx)
{
    fa_fwd *f = ctx;
    static const aclDataType ok[] = {ACL_BOOL, ACL_UINT8};
    aclnnStatus st = capture(f, FA_ATTEN_MASK);
    return st || !f->t[FA_ATTEN_MASK].present ? st : cann_check_dtype(&f->t[FA_ATTEN_MASK], ok, 2);
}

static aclnnStatus r_sink(void *ctx)
{
    fa_fwd *f = ctx;
    static const aclDataType ok[] = {ACL_FLOAT};
    aclnnStatus st = capture(f, FA_SINK);
    return st || !f->t[FA_SINK].present ? st : cann_check_dtype(&f->t[FA_SINK], ok, 1);
}

/* The prefix is examined only where it can be read: with a mask (rule 0). */
static aclnnStatus r_prefix(void *ctx)
{
    fa_fwd *f = ctx;
    return f->c->atten_mask ? capture_ints(f, FA_PREFIX, &f->prefix) : ACLNN_SUCCESS;
}

static aclnnStatus r_act_q(void *ctx) { return capture_ints(ctx, FA_ACT_Q, &((fa_fwd *)ctx)->act_q); }
static aclnnStatus r_act_kv(void *ctx) { return capture_ints(ctx, FA_ACT_KV, &((fa_fwd *)ctx)->act_kv); }
static aclnnStatus r_q_start(void *ctx) { return capture_ints(ctx, FA_Q_START, &((fa_fwd *)ctx)->q_start); }
static aclnnStatus r_kv_start(void *ctx) { return capture_ints(ctx, FA_KV_START, &((fa_fwd *)ctx)->kv_start); }

/* ---- attributes ---------------------------------------------------------------------------------- */

static aclnnStatus r_scale(void *ctx)
{
    fa_fwd *f = ctx;
    if (!fc_scale_fits(f->c->scale))
        return INVALID("%s: %s must be " FC_SCALE_RULE ", got %g", f->fn, name(f, FA_SCALE), f->c->scale);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_keep_prob(void *ctx)
{
    fa_fwd *f = ctx;
    const double kp = f->c->keep_prob;
    if (!(kp > 0 && kp <= 1))
        return INVALID("%s: %s must be in (0, 1], got %g", f->fn, name(f, FA_KEEP_PROB), kp);
    f->dropout = kp < 1;
    return ACLNN_SUCCESS;
}

/* The drop mask is ignored (not examined) when keepProb = 1. */
static aclnnStatus r_drop_mask(void *ctx)
{
    fa_fwd *f = ctx;
    if (!f->dropout)
        return ACLNN_SUCCESS;
    if (!f->c->drop_mask)
        return INVALID("%s: %s is absent, but %s = %g < 1 needs a dropout mask", f->fn, name(f, FA_DROP_MASK),
                       name(f, FA_KEEP_PROB), f->c->keep_prob);
    aclnnStatus st = capture(f, FA_DROP_MASK);
    return st ? st : fa_dropout_check_tensor(&f->t[FA_DROP_MASK]);
}

static aclnnStatus r_layout(void *ctx)
{
    fa_fwd *f = ctx;
    const char *s = f->c->layout;
    fa_layout l;
    const bool varlen = cann_sig_has(f->c->sig, FA_ACT_Q);
    if (!fa_layout_parse(s, &l) || (l == FA_LAYOUT_TND) != varlen)
        return INVALID("%s: %s must be %s, got \"%.64s\"", f->fn, name(f, FA_LAYOUT),
                       varlen ? "\"TND\"" : "\"BSH\", \"SBH\", \"BSND\" or \"BNSD\"", s);
    f->g.layout = l;
    return ACLNN_SUCCESS;
}

static aclnnStatus r_sizes(void *ctx)
{
    fa_fwd *f = ctx;
    aclnnStatus st = fa_geom_derive(&f->g, f->g.layout, &f->t[FA_QUERY], &f->t[FA_KEY], &f->t[FA_VALUE],
                                    f->c->head_num, name(f, FA_HEAD_NUM));
    if (st == ACLNN_SUCCESS && f->g.layout == FA_LAYOUT_TND)
        st = fa_geom_lengths(&f->g, f->fn, &f->act_q, name(f, FA_ACT_Q), &f->act_kv, name(f, FA_ACT_KV));
    return st;
}

static aclnnStatus r_rope_shape(void *ctx)
{
    fa_fwd *f = ctx;
    const cann_operand *qr = &f->t[FA_QUERY_ROPE], *kr = &f->t[FA_KEY_ROPE];
    if (!qr->present)
        return ACLNN_SUCCESS;
    aclnnStatus st = cann_check_rank(qr, 3);
    if (st == ACLNN_SUCCESS && (qr->dims[2] < 1 || qr->dims[2] > FA_MAX_DIM))
        st = INVALID("%s: %s head dim Dr must be in [1, %d], got %lld", f->fn, qr->name, FA_MAX_DIM, (long long)qr->dims[2]);
    f->g.Dr = qr->dims[2];
    if (st == ACLNN_SUCCESS)
        st = fa_check_seq_shape(&f->g, qr, true, f->g.N1, f->g.Dr);
    if (st == ACLNN_SUCCESS)
        st = fa_check_seq_shape(&f->g, kr, false, f->g.N2, f->g.Dr);
    return st;
}

static aclnnStatus r_sink_shape(void *ctx)
{
    fa_fwd *f = ctx;
    const cann_operand *s = &f->t[FA_SINK];
    if (!s->present)
        return ACLNN_SUCCESS;
    const int64_t want[1] = {f->g.N1};
    return cann_check_shape(s, want, 1);
}

static aclnnStatus r_drop_size(void *ctx)
{
    fa_fwd *f = ctx;
    return f->dropout ? fa_dropout_check_size(&f->g, &f->t[FA_DROP_MASK]) : ACLNN_SUCCESS;
}

static aclnnStatus r_inner_precise(void *ctx)
{
    fa_fwd *f = ctx;
    const int64_t v = f->c->inner_precise;
    if (v < 0 || v > 2)
        return INVALID("%s: %s must be 0, 1 or 2, got %lld", f->fn, name(f, FA_INNER_PRECISE), (long long)v);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_sparse_mode(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_check_sparse_mode(f->fn, name(f, FA_SPARSE_MODE), f->c->sparse_mode, cann_sig_has(f->c->sig, FA_ACT_Q));
}

static aclnnStatus r_mode_batch(void *ctx)
{
    fa_fwd *f = ctx;
    if (f->c->sparse_mode == 6 && f->g.B > 2048)
        return INVALID("%s: %s 6 allows at most 2048 batches, got B = %lld", f->fn, name(f, FA_SPARSE_MODE),
                       (long long)f->g.B);
    return ACLNN_SUCCESS;
}

static aclnnStatus r_mask_shape(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_mask_prepare(&f->g, &f->t[FA_ATTEN_MASK], f->c->sparse_mode, name(f, FA_SPARSE_MODE), &f->mask);
}

static aclnnStatus r_prefix_values(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_prefix_check(&f->g, f->fn, &f->prefix, name(f, FA_PREFIX), f->c->sparse_mode, name(f, FA_SPARSE_MODE),
                           f->t[FA_ATTEN_MASK].present);
}

static aclnnStatus r_pse_shape(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_pse_prepare(&f->g, &f->t[FA_REAL_SHIFT], f->c->pse_type, &f->pse);
}

static aclnnStatus r_pse_mode(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_pse_check_mode(&f->g, &f->pse, f->fn, name(f, FA_REAL_SHIFT), f->c->sparse_mode, name(f, FA_SPARSE_MODE));
}

static aclnnStatus r_softmax_layout(void *ctx)
{
    fa_fwd *f = ctx;
    const char *s = f->c->softmax_layout;
    if (!fa_softmax_layout_parse(s, &f->token_major))
        return INVALID("%s: %s must be \"\" or \"same_as_input\", got \"%.64s\"", f->fn, name(f, FA_SOFTMAX_LAYOUT), s);
    return ACLNN_SUCCESS;
}

/* ---- outputs --------------------------------------------------------------------------------------- */

static aclnnStatus capture_stats(fa_fwd *f, fa_param id)
{
    aclnnStatus st = capture(f, id);
    return st ? st : fa_stats_check_tensor(&f->t[id]);
}

static aclnnStatus r_smax(void *ctx) { return capture_stats(ctx, FA_SMAX); }
static aclnnStatus r_ssum(void *ctx) { return capture_stats(ctx, FA_SSUM); }
static aclnnStatus r_smax_shape(void *ctx) { return fa_stats_check_shape(&((fa_fwd *)ctx)->g, &((fa_fwd *)ctx)->t[FA_SMAX]); }
static aclnnStatus r_ssum_shape(void *ctx) { return fa_stats_check_shape(&((fa_fwd *)ctx)->g, &((fa_fwd *)ctx)->t[FA_SSUM]); }

static aclnnStatus r_out(void *ctx)
{
    fa_fwd *f = ctx;
    aclnnStatus st = capture_like_query(f, FA_OUT);
    return st ? st : cann_check_disjoint(&f->t[FA_OUT]);
}

static aclnnStatus r_out_shape(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_check_seq_shape(&f->g, &f->t[FA_OUT], true, f->g.N1, f->g.Dv);
}

/* Table order breaks ties between rules charged to the same parameter; a rule that uses what
 * another derives comes after it. */
const cann_rule fa_shared_rules[] = {
    {B(QUERY), r_query},
    {B(QUERY_ROPE) | B(QUERY), r_query_rope},
    {B(KEY) | B(QUERY), r_key},
    {B(KEY_ROPE) | B(QUERY_ROPE) | B(QUERY), r_key_rope},
    {B(VALUE) | B(QUERY), r_value},
    {B(REAL_SHIFT), r_real_shift},
    {B(REAL_SHIFT) | B(QUERY) | B(PSE_TYPE), r_pse_type},
    {B(ATTEN_MASK), r_atten_mask},
    {B(SINK), r_sink},
    {B(PREFIX) | B(ATTEN_MASK), r_prefix},
    {B(ACT_Q), r_act_q},
    {B(ACT_KV), r_act_kv},
    {B(Q_START), r_q_start},
    {B(KV_START), r_kv_start},
    {B(SCALE), r_scale},
    {B(KEEP_PROB), r_keep_prob},
    {B(DROP_MASK) | B(KEEP_PROB), r_drop_mask},
    {B(LAYOUT), r_layout},
    {SIZES, r_sizes},
    {SIZES | B(QUERY_ROPE) | B(KEY_ROPE), r_rope_shape},
    {SIZES | B(SINK), r_sink_shape},
    {SIZES | B(DROP_MASK) | B(KEEP_PROB), r_drop_size},
    {B(SPARSE_MODE), r_sparse_mode},
    {SIZES | B(SPARSE_MODE), r_mode_batch},
    {SIZES | B(ATTEN_MASK) | B(SPARSE_MODE), r_mask_shape},
    {SIZES | B(ATTEN_MASK) | B(PREFIX) | B(SPARSE_MODE), r_prefix_values},
    {SIZES | B(REAL_SHIFT) | B(PSE_TYPE), r_pse_shape},
    {SIZES | B(REAL_SHIFT) | B(SPARSE_MODE) | B(PSE_TYPE), r_pse_mode},
    {B(SOFTMAX_LAYOUT), r_softmax_layout},
    {B(SMAX), r_smax},
    {SIZES | B(SMAX), r_smax_shape},
    {B(SSUM), r_ssum},
    {SIZES | B(SSUM), r_ssum_shape},
};
const int fa_shared_rule_count = (int)(sizeof fa_shared_rules / sizeof fa_shared_rules[0]);

/* The forward's own: innerPrecise (the backward ignores it) and the attention output. */
static const cann_rule fa_forward_rules[] = {
    {B(INNER_PRECISE), r_inner_precise},
    {B(OUT) | B(QUERY), r_out},
    {SIZES | B(OUT), r_out_shape},
};

aclnnStatus fa_validate(fa_fwd *f, const cann_rule *own, int n_own)
{
    cann_rule all[CANN_MAX_RULES];
    if (fa_shared_rule_count + n_own > CANN_MAX_RULES)
        return cann_fail(ACLNN_ERR_INNER, "%s: internal error: too many rules", f->fn);
    for (int k = 0; k < fa_shared_rule_count; k++)
        all[k] = fa_shared_rules[k];
    for (int k = 0; k < n_own; k++)
        all[fa_shared_rule_count + k] = own[k];
    return cann_run_rules(f->c->sig, all, fa_shared_rule_count + n_own, f);
}

aclnnStatus fa_forward_validate(fa_fwd *f)
{
    return fa_validate(f, fa_forward_rules, (int)(sizeof fa_forward_rules / sizeof fa_forward_rules[0]));
}
