#include "sfa_geom.h"

#include <string.h>

#include "cann/common/errmsg.h"
#include "cann/fa/fa_layout.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

static const char *const layout_names[] = {"BSND", "TND", "PA_BSND"};

bool sfa_layout_parse(const char *s, bool allow_pa, sfa_layout *out)
{
    if (!s || strnlen(s, 64) == 64)
        return false;
    for (int k = 0; k < (allow_pa ? 3 : 2); k++)
        if (strcmp(s, layout_names[k]) == 0) {
            *out = (sfa_layout)k;
            return true;
        }
    return false;
}

static aclnnStatus limit(const cann_operand *t, const char *what, int64_t value, int64_t max)
{
    if (value < 1 || value > max)
        return INVALID("%s: %s %s must be in [1, %lld], got %lld", t->fn, t->name, what, (long long)max, (long long)value);
    return ACLNN_SUCCESS;
}

/* (batch or blocks, seq or slots, heads, features) of a sequence tensor; TND has no batch. */
typedef struct seq_dims {
    int64_t b, s, n, e;
} seq_dims;

static seq_dims read_dims(sfa_layout l, const cann_operand *t)
{
    const int64_t *d = t->dims;
    return l == SFA_TND ? (seq_dims){0, d[0], d[1], d[2]} : (seq_dims){d[0], d[1], d[2], d[3]};
}

static aclnnStatus check_value(const cann_operand *k, const cann_operand *v)
{
    for (int r = 0; r + 1 < k->rank; r++)
        if (v->dims[r] != k->dims[r]) {
            char want[160], got[160];
            return INVALID("%s: %s must have the shape of %s %s except the last dim, got %s", v->fn, v->name, k->name,
                           cann_shape_str(k->dims, k->rank, want, sizeof want),
                           cann_shape_str(v->dims, v->rank, got, sizeof got));
        }
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_geom_derive(sfa_geom *g, const cann_operand *q, const cann_operand *k, const cann_operand *v)
{
    aclnnStatus st;
    const int qr = g->lq == SFA_TND ? 3 : 4, kr = g->lkv == SFA_TND ? 3 : 4;
    if ((st = cann_check_rank(q, qr)) || (st = cann_check_rank(k, kr)) || (st = cann_check_rank(v, kr)) ||
        (st = check_value(k, v)))
        return st;
    const seq_dims qd = read_dims(g->lq, q), kd = read_dims(g->lkv, k);
    g->N1 = qd.n, g->N2 = kd.n, g->D = qd.e, g->Dv = v->dims[kr - 1];
    if (kd.e != qd.e)
        return INVALID("%s: %s head dim must equal the %s head dim (D = %lld), got %lld", k->fn, k->name, q->name,
                       (long long)qd.e, (long long)kd.e);
    if ((st = limit(q, "head count N1", g->N1, FA_MAX_HEADS)) || (st = limit(k, "head count N2", g->N2, FA_MAX_HEADS)) ||
        (st = limit(q, "head dim D", g->D, FA_MAX_DIM)) || (st = limit(v, "head dim Dv", g->Dv, FA_MAX_DIM)))
        return st;
    if (g->N1 % g->N2 != 0)
        return INVALID("%s: %s head count N2 = %lld must divide the %s head count N1 = %lld", k->fn, k->name,
                       (long long)g->N2, q->name, (long long)g->N1);
    g->G = g->N1 / g->N2;
    const bool q_tnd = g->lq == SFA_TND;
    if ((st = limit(q, q_tnd ? "token count T1" : "sequence length S1", qd.s, FA_MAX_LEN)))
        return st;
    if (q_tnd)
        g->T1 = qd.s;
    else
        g->S1 = qd.s, g->B = qd.b;
    switch (g->lkv) {
    case SFA_TND:
        st = limit(k, "token count T2", kd.s, FA_MAX_LEN);
        g->T2 = g->kv_cap = kd.s;
        break;
    case SFA_BSND:
        st = limit(k, "sequence length S2", kd.s, FA_MAX_LEN);
        g->S2 = g->kv_cap = kd.s;
        if (st == ACLNN_SUCCESS && !q_tnd && kd.b != qd.b)
            st = INVALID("%s: %s batch size must equal the %s batch size (B = %lld), got %lld", k->fn, k->name, q->name,
                         (long long)qd.b, (long long)kd.b);
        g->B = kd.b;
        break;
    default:
        g->blocks = kd.b, g->slots = kd.s;
        break;
    }
    return st;
}

/* A BSND side's optional lengths: B entries when given. */
static aclnnStatus check_len_shape(const cann_operand *len, int64_t B)
{
    const int64_t want[1] = {B};
    return len->present ? cann_check_shape(len, want, 1) : ACLNN_SUCCESS;
}

static aclnnStatus need(const cann_operand *len, const char *layout_what)
{
    if (!len->present)
        return INVALID("%s: %s is absent, but %s needs it", len->fn, len->name, layout_what);
    return ACLNN_SUCCESS;
}

aclnnStatus sfa_geom_batch(sfa_geom *g, const cann_operand *q, const cann_operand *k, const cann_operand *act_q,
                           const cann_operand *act_kv, const cann_operand *table)
{
    aclnnStatus st;
    int64_t bq, bkv;
    const char *bq_from, *bkv_from;
    if (g->lq == SFA_TND) {
        if ((st = need(act_q, "a TND query (its cumulative lengths give B)")))
            return st;
        bq = act_q->dims[0], bq_from = act_q->name;
    } else {
        bq = q->dims[0], bq_from = q->name;
        if ((st = check_len_shape(act_q, bq)))
            return st;
    }
    if (g->lkv == SFA_BSND) {
        bkv = k->dims[0], bkv_from = k->name;
        if ((st = check_len_shape(act_kv, bkv)))
            return st;
    } else {
        if ((st = need(act_kv, g->lkv == SFA_TND ? "a TND key (its cumulative lengths give B)"
                                                  : "a PA_BSND key (its per-batch lengths give B)")))
            return st;
        bkv = act_kv->dims[0], bkv_from = act_kv->name;
    }
    if (bq != bkv) {
        const cann_operand *later = act_kv->present ? act_kv : act_q->present ? act_q : k;
        return INVALID("%s: %s: the query side has B = %lld (from %s) but the key side has B = %lld (from %s); they must agree",
                       later->fn, later->name, (long long)bq, bq_from, (long long)bkv, bkv_from);
    }
    if (bq < 1 || bq > FA_MAX_BATCH)
        return INVALID("%s: %s: the batch count B must be in [1, %d], got %lld", q->fn, bq_from, FA_MAX_BATCH, (long long)bq);
    g->B = bq;
    if (g->lkv == SFA_PA_BSND) {
        if (table->dims[0] != g->B)
            return INVALID("%s: %s must have B = %lld rows, got shape [%lld, %lld]", table->fn, table->name,
                           (long long)g->B, (long long)table->dims[0], (long long)table->dims[1]);
        int64_t cap;
        g->width = table->dims[1];
        g->kv_cap = __builtin_mul_overflow(g->width, g->slots, &cap) || cap > FA_MAX_LEN ? FA_MAX_LEN : cap;
    }
    return ACLNN_SUCCESS;
}

int sfa_seq_dims(const sfa_geom *g, bool q_side, int64_t heads, int64_t feat, int64_t dims[4])
{
    const sfa_layout l = q_side ? g->lq : g->lkv;
    if (l == SFA_TND) {
        dims[0] = q_side ? g->T1 : g->T2, dims[1] = heads, dims[2] = feat;
        return 3;
    }
    dims[0] = l == SFA_PA_BSND ? g->blocks : g->B;
    dims[1] = l == SFA_PA_BSND ? g->slots : q_side ? g->S1 : g->S2;
    dims[2] = heads, dims[3] = feat;
    return 4;
}

aclnnStatus sfa_check_seq(const sfa_geom *g, const cann_operand *t, bool q_side, int64_t heads, int64_t feat)
{
    int64_t dims[4];
    const int rank = sfa_seq_dims(g, q_side, heads, feat, dims);
    return cann_check_shape(t, dims, rank);
}

aclnnStatus sfa_check_indices(sfa_geom *g, const cann_operand *t)
{
    int64_t dims[4];
    const int rank = sfa_seq_dims(g, true, g->N2, t->rank > 0 ? t->dims[t->rank - 1] : 0, dims);
    const aclnnStatus st = cann_check_shape(t, dims, rank);
    if (st == ACLNN_SUCCESS)
        g->K = t->dims[rank - 1];
    return st;
}

aclnnStatus sfa_check_stats(const sfa_geom *g, const cann_operand *t)
{
    if (g->lq == SFA_TND) {
        const int64_t want[3] = {g->N2, g->T1, g->G};
        return cann_check_shape(t, want, 3);
    }
    const int64_t want[4] = {g->B, g->N2, g->S1, g->G};
    return cann_check_shape(t, want, 4);
}

fc_view sfa_seq_view(const sfa_geom *g, const cann_operand *t, bool q_side)
{
    const int64_t *st = t->strides;
    fc_view v = {.data = t->data, .dtype = cann_fc_dtype(t->dtype)};
    if ((q_side ? g->lq : g->lkv) == SFA_TND)
        v.sb = 0, v.ss = st[0], v.sn = st[1], v.se = st[2];
    else
        v.sb = st[0], v.ss = st[1], v.sn = st[2], v.se = st[3];
    return v;
}
