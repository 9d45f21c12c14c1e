/*
 * The backward's own checks as rules (see signature.h), beside the forward's shared rules that
 * validate the forward call it describes (fa_forward_rules.c): dy and attentionIn, the gradients,
 * the rope gradients (required with rope inputs, ignored otherwise) and dsink (required with a
 * sink, ignored otherwise).  innerPrecise, softmaxInOptional, paddingMaskOptional and dpseOut are
 * never examined (§3.2).
 */
#include "cann/common/errmsg.h"
#include "fa_forward_state.h"
#include "fa_grad.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)
#define B(id) CANN_BIT(FA_##id)
/* Everything the sizes depend on (as in the shared rules). */
#define SIZES (B(QUERY) | B(KEY) | B(VALUE) | B(HEAD_NUM) | B(LAYOUT) | B(ACT_Q) | B(ACT_KV))

static const char *name(const fa_fwd *f, fa_param id) { return cann_sig_name(f->c->sig, id); }

/* Captures id, which must have the dtype of ref. */
static aclnnStatus capture_like(fa_fwd *f, fa_param id, fa_param ref)
{
    aclnnStatus st = cann_operand_capture(f->fn, name(f, id), cann_arg_tensor(&fa_fields, f->c, id), false, &f->t[id]);
    return st ? st : cann_check_same_dtype(&f->t[id], &f->t[ref]);
}

/* ---- the forward's output and its gradient ------------------------------------------------------- */

static aclnnStatus r_dy(void *ctx) { return capture_like(ctx, FA_DY, FA_QUERY); }
static aclnnStatus r_attention_in(void *ctx) { return capture_like(ctx, FA_OUT, FA_DY); }

/* Both have the forward output's shape: the query's sequence sizes, N1 heads of Dv (§1.5). */
static aclnnStatus r_dy_shape(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_check_seq_shape(&f->g, &f->t[FA_DY], true, f->g.N1, f->g.Dv);
}

static aclnnStatus r_attention_in_shape(void *ctx)
{
    fa_fwd *f = ctx;
    return fa_check_seq_shape(&f->g, &f->t[FA_OUT], true, f->g.N1, f->g.Dv);
}

/* ---- gradients ----------------------------------------------------------------------------------- */

/* A gradient: the dtype and shape of its operand, and no overlap. */
static aclnnStatus gradient(fa_fwd *f, fa_param id, fa_param of)
{
    aclnnStatus st = capture_like(f, id, of);
    if (st == ACLNN_SUCCESS)
        st = cann_check_shape(&f->t[id], f->t[of].dims, f->t[of].rank);
    return st ? st : cann_check_disjoint(&f->t[id]);
}

static aclnnStatus r_dq(void *ctx) { return gradient(ctx, FA_DQ, FA_QUERY); }
static aclnnStatus r_dk(void *ctx) { return gradient(ctx, FA_DK, FA_KEY); }
static aclnnStatus r_dv(void *ctx) { return gradient(ctx, FA_DV, FA_VALUE); }

/* A gradient that is needed only when its operand is given (rope gradients, dsink). */
static aclnnStatus needed_with(fa_fwd *f, fa_param id, fa_param of)
{
    if (!f->t[of].present)
        return ACLNN_SUCCESS; /* ignored: not examined */
    if (!cann_arg_tensor(&fa_fields, f->c, id))
        return INVALID("%s: %s is NULL, but %s is given and its gradient must be written", f->fn, name(f, id),
                       name(f, of));
    return gradient(f, id, of);
}

static aclnnStatus r_dq_rope(void *ctx) { return needed_with(ctx, FA_DQ_ROPE, FA_QUERY_ROPE); }
static aclnnStatus r_dk_rope(void *ctx) { return needed_with(ctx, FA_DK_ROPE, FA_KEY_ROPE); }

/* dsinkOut: FLOAT32 [N1] like the sink (checked FLOAT32 [N1] by the shared rules).  The core
 * writes dsink[n1] at unit stride, so a strided view is refused. */
static aclnnStatus r_dsink(void *ctx)
{
    fa_fwd *f = ctx;
    aclnnStatus st = needed_with(f, FA_DSINK, FA_SINK);
    const cann_operand *d = &f->t[FA_DSINK];
    if (st == ACLNN_SUCCESS && d->present && d->dims[0] > 1 && d->strides[0] != 1)
        st = INVALID("%s: %s must have unit stride (flashc writes the %lld head gradients contiguously), got stride %lld",
                     f->fn, d->name, (long long)d->dims[0], (long long)d->strides[0]);
    return st;
}

static const cann_rule fa_grad_rules[] = {
    {B(DY) | B(QUERY), r_dy},
    {B(OUT) | B(DY), r_attention_in},
    {SIZES | B(DY), r_dy_shape},
    {SIZES | B(OUT), r_attention_in_shape},
    {B(DQ) | B(QUERY), r_dq},
    {B(DQ_ROPE) | B(QUERY_ROPE), r_dq_rope},
    {B(DK) | B(KEY), r_dk},
    {B(DK_ROPE) | B(KEY_ROPE), r_dk_rope},
    {B(DV) | B(VALUE), r_dv},
    {B(DSINK) | B(SINK), r_dsink},
};

aclnnStatus fa_grad_validate(fa_fwd *f)
{
    return fa_validate(f, fa_grad_rules, (int)(sizeof fa_grad_rules / sizeof fa_grad_rules[0]));
}
