/*
 * IncreFlashAttentionV4's quantisation parameters: int8 key/value dequantisation (antiquantScale,
 * antiquantOffset; semantics §4.5) and int8 output quantisation (quantScale2, quantOffset2; §4.6),
 * checked and turned into the core's per-(head, feature) affine maps.
 */
#include <stdio.h>

#include "cann/common/errmsg.h"
#include "ifa.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

static bool kv_int8(const ifa_state *s) { return s->kv[0].el[0].dtype == ACL_INT8; }

static aclnnStatus capture(ifa_state *s, ifa_param id)
{
    return cann_operand_capture(s->fn, ifa_name(s, id), cann_arg_tensor(&ifa_fields, s->c, id), false, &s->t[id]);
}

/* ---- antiquant ------------------------------------------------------------------------------------ */

aclnnStatus ifa_antiquant_check(ifa_state *s)
{
    static const aclDataType ok[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
    cann_operand *sc = &s->t[IFA_AQ_SCALE];
    aclnnStatus st = capture(s, IFA_AQ_SCALE);
    if (st != ACLNN_SUCCESS)
        return st;
    if (kv_int8(s) && !sc->present)
        return INVALID("%s: %s is absent, but key and value are INT8 and need it for dequantisation", s->fn,
                       ifa_name(s, IFA_AQ_SCALE));
    if (!kv_int8(s) && sc->present)
        return INVALID("%s: %s must be absent (NULL) when key and value are %s (it applies to INT8 key/value only)",
                       s->fn, sc->name, cann_dtype_name(s->kv[0].el[0].dtype));
    return sc->present ? cann_check_dtype(sc, ok, 3) : ACLNN_SUCCESS;
}

/* The strides of two equally shaped operands agree on every dim from `from` on that they extend along. */
static bool same_strides(const cann_operand *a, const cann_operand *b, int from)
{
    for (int d = from; d < a->rank; d++)
        if (a->dims[d] > 1 && a->strides[d] != b->strides[d])
            return false;
    return true;
}

aclnnStatus ifa_antiquant_offset_check(ifa_state *s)
{
    const cann_operand *sc = &s->t[IFA_AQ_SCALE];
    cann_operand *of = &s->t[IFA_AQ_OFFSET];
    aclnnStatus st = capture(s, IFA_AQ_OFFSET);
    if (st != ACLNN_SUCCESS || !of->present)
        return st;
    if (!kv_int8(s))
        return INVALID("%s: %s must be absent (NULL) when key and value are %s (it applies to INT8 key/value only)",
                       s->fn, of->name, cann_dtype_name(s->kv[0].el[0].dtype));
    if ((st = cann_check_same_dtype(of, sc)) || (st = cann_check_shape(of, sc->dims, sc->rank)))
        return st;
    if (!same_strides(of, sc, 1))
        return INVALID("%s: %s must have the strides of %s along its per-channel dims (flashc reads both through one "
                       "map)",
                       s->fn, of->name, sc->name);
    return ACLNN_SUCCESS;
}

aclnnStatus ifa_antiquant_shape(ifa_state *s)
{
    const cann_operand *sc = &s->t[IFA_AQ_SCALE];
    if (!sc->present)
        return ACLNN_SUCCESS;
    const ifa_geom *g = &s->g;
    const int64_t *d = sc->dims;
    bool ok = d[0] == 2;
    switch (sc->rank) {
    case 1: break;
    case 2: ok = ok && d[1] == g->N2 * g->D; break;
    case 3: ok = ok && d[1] == g->N2 && d[2] == g->D; break;
    case 4: ok = ok && d[1] == g->N2 && d[2] == 1 && d[3] == g->D; break;
    default: ok = false;
    }
    if (!ok) {
        char sh[160];
        return INVALID("%s: %s must have shape (2) per tensor, or (2, N2, 1, D), (2, N2, D), (2, N2·D) per channel with "
                       "N2 = %lld, D = %lld; got %s",
                       s->fn, sc->name, (long long)g->N2, (long long)g->D, cann_shape_str(d, sc->rank, sh, sizeof sh));
    }
    return ACLNN_SUCCESS;
}

fc_affine_view ifa_antiquant_view(const ifa_state *s, int which)
{
    const cann_operand *sc = &s->t[IFA_AQ_SCALE], *of = &s->t[IFA_AQ_OFFSET];
    const int64_t *st = sc->strides;
    fc_affine_view v = {.scale = sc->data + which * st[0] * sc->esize, .dtype = cann_fc_dtype(sc->dtype)};
    if (of->present)
        v.offset = of->data + which * of->strides[0] * of->esize;
    switch (sc->rank) {
    case 2: v.sn = s->g.D * st[1], v.se = st[1]; break;
    case 3: v.sn = st[1], v.se = st[2]; break;
    case 4: v.sn = st[1], v.se = st[3]; break;
    default: v.sn = v.se = 0; break; /* per tensor */
    }
    return v;
}

/* ---- output quantisation -------------------------------------------------------------------------- */

aclnnStatus ifa_out_quant_check(ifa_state *s)
{
    cann_operand *sc = &s->t[IFA_Q_SCALE2];
    aclnnStatus st = capture(s, IFA_Q_SCALE2);
    if (st != ACLNN_SUCCESS || !sc->present)
        return st;
    const aclDataType ok[] = {ACL_FLOAT, ACL_BF16};
    const bool bf16_query = s->t[IFA_QUERY].dtype == ACL_BF16;
    if (sc->dtype == ACL_BF16 && !bf16_query)
        return INVALID("%s: %s dtype must be FLOAT (BFLOAT16 only with a BFLOAT16 query), got BFLOAT16 with a %s query",
                       s->fn, sc->name, cann_dtype_name(s->t[IFA_QUERY].dtype));
    return cann_check_dtype(sc, ok, 2);
}

aclnnStatus ifa_out_offset_check(ifa_state *s)
{
    const cann_operand *sc = &s->t[IFA_Q_SCALE2];
    cann_operand *of = &s->t[IFA_Q_OFFSET2];
    aclnnStatus st = capture(s, IFA_Q_OFFSET2);
    if (st != ACLNN_SUCCESS || !of->present)
        return st;
    if (!sc->present)
        return INVALID("%s: %s is given without %s (an output offset needs the output scale)", s->fn, of->name,
                       ifa_name(s, IFA_Q_SCALE2));
    if ((st = cann_check_same_dtype(of, sc)) || (st = cann_check_shape(of, sc->dims, sc->rank)))
        return st;
    return ACLNN_SUCCESS;
}

/* Element offset of flat (row-major) index c of a view. */
static int64_t flat_offset(const cann_operand *t, int64_t c)
{
    int64_t off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        off += (c % t->dims[d]) * t->strides[d];
        c /= t->dims[d];
    }
    return off;
}

/* Per-channel values are read as a flat array indexed by c = n1·D + e (§4.6); the core reads
 * (head, feature) strides, so the view's flat order must be affine in (n1, e). */
static bool flat_affine(const cann_operand *t, int64_t D, int64_t *sn, int64_t *se)
{
    *sn = *se = 0;
    if (t->numel == 1)
        return true;
    *se = D > 1 ? flat_offset(t, 1) : 0;
    *sn = t->numel > D ? flat_offset(t, D) : 0;
    for (int64_t c = 0; c < t->numel; c++)
        if (flat_offset(t, c) != (c / D) * *sn + (c % D) * *se)
            return false;
    return true;
}

aclnnStatus ifa_out_quant_shape(ifa_state *s)
{
    const cann_operand *sc = &s->t[IFA_Q_SCALE2], *of = &s->t[IFA_Q_OFFSET2];
    if (!sc->present)
        return ACLNN_SUCCESS;
    const ifa_geom *g = &s->g;
    char sh[160];
    if (sc->numel != 1 && sc->numel != g->N1 * g->D)
        return INVALID("%s: %s must hold 1 element (per tensor) or N1·D = %lld elements (per channel), got shape %s",
                       s->fn, sc->name, (long long)(g->N1 * g->D), cann_shape_str(sc->dims, sc->rank, sh, sizeof sh));
    int64_t sn, se, on, oe;
    if (!flat_affine(sc, g->D, &sn, &se))
        return INVALID("%s: %s strides must address its elements as (head, feature) = (c / D, c mod D) with two strides "
                       "(flashc limitation), got strides %s",
                       s->fn, sc->name, cann_shape_str(sc->strides, sc->rank, sh, sizeof sh));
    if (of->present && (!flat_affine(of, g->D, &on, &oe) || on != sn || oe != se))
        return INVALID("%s: %s must be laid out like %s (flashc reads both through one map), got strides %s", s->fn,
                       of->name, sc->name, cann_shape_str(of->strides, of->rank, sh, sizeof sh));
    return ACLNN_SUCCESS;
}

fc_affine_view ifa_out_quant_view(const ifa_state *s)
{
    const cann_operand *sc = &s->t[IFA_Q_SCALE2], *of = &s->t[IFA_Q_OFFSET2];
    fc_affine_view v = {.scale = sc->data, .offset = of->present ? of->data : NULL, .dtype = cann_fc_dtype(sc->dtype)};
    flat_affine(sc, s->g.D, &v.sn, &v.se);
    return v;
}
