#include "fa_layout.h"

#include <stdlib.h>
#include <string.h>

#include "cann/common/errmsg.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

static const char *const layout_names[] = {"BSH", "SBH", "BSND", "BNSD", "TND"};

void fa_geom_free(fa_geom *g)
{
    free(g->cum_q);
    free(g->cum_kv);
    g->cum_q = g->cum_kv = NULL;
}

bool fa_layout_parse(const char *s, fa_layout *out)
{
    if (!s || strnlen(s, 64) == 64)
        return false;
    for (int k = 0; k < 5; k++)
        if (strcmp(s, layout_names[k]) == 0) {
            *out = (fa_layout)k;
            return true;
        }
    return false;
}

const char *fa_layout_name(fa_layout layout) { return layout_names[layout]; }

int fa_layout_rank(fa_layout layout) { return layout == FA_LAYOUT_BSND || layout == FA_LAYOUT_BNSD ? 4 : 3; }

/* A sequence tensor's (batch, seq, heads, features) extents; BSH/SBH give heads = 1, feat = H. */
typedef struct seq_dims {
    int64_t b, s, n, e;
} seq_dims;

static seq_dims read_dims(fa_layout layout, const cann_operand *t)
{
    const int64_t *d = t->dims;
    switch (layout) {
    case FA_LAYOUT_BSH: return (seq_dims){d[0], d[1], 1, d[2]};
    case FA_LAYOUT_SBH: return (seq_dims){d[1], d[0], 1, d[2]};
    case FA_LAYOUT_BSND: return (seq_dims){d[0], d[1], d[2], d[3]};
    case FA_LAYOUT_BNSD: return (seq_dims){d[0], d[2], d[1], d[3]};
    default: return (seq_dims){1, d[0], d[1], d[2]};
    }
}

static aclnnStatus limit(const cann_operand *t, const char *what, int64_t value, int64_t max)
{
    if (value < 1 || value > max)
        return INVALID("%s: %s %s must be in [1, %lld], got %lld", t->fn, t->name, what, (long long)max, (long long)value);
    return ACLNN_SUCCESS;
}

/* BSH/SBH: the hidden sizes split into heads of D (§1.2). */
static aclnnStatus derive_hidden(fa_geom *g, seq_dims q, seq_dims k, seq_dims v, const cann_operand *qt,
                                 const cann_operand *kt, const cann_operand *vt, int64_t head_num, const char *hn)
{
    if (head_num < 1 || head_num > FA_MAX_HEADS)
        return INVALID("%s: %s must be in [1, %d], got %lld", qt->fn, hn, FA_MAX_HEADS, (long long)head_num);
    if (q.e % head_num != 0)
        return INVALID("%s: %s hidden size H1 = %lld must be a multiple of %s (%lld)", qt->fn, qt->name, (long long)q.e, hn,
                       (long long)head_num);
    g->N1 = head_num;
    g->D = q.e / head_num;
    if (k.e % g->D != 0)
        return INVALID("%s: %s hidden size H2 = %lld must be a multiple of the head dim D = %lld (H1 / %s)", kt->fn,
                       kt->name, (long long)k.e, (long long)g->D, hn);
    g->N2 = k.e / g->D;
    if (v.e % g->N2 != 0)
        return INVALID("%s: %s hidden size H3 = %lld must be a multiple of the kv head count N2 = %lld", vt->fn, vt->name,
                       (long long)v.e, (long long)g->N2);
    g->Dv = v.e / g->N2;
    return ACLNN_SUCCESS;
}

static aclnnStatus derive_heads(fa_geom *g, seq_dims q, seq_dims k, seq_dims v, const cann_operand *qt,
                                const cann_operand *kt, const cann_operand *vt, int64_t head_num, const char *hn)
{
    g->N1 = q.n;
    g->N2 = k.n;
    g->D = q.e;
    g->Dv = v.e;
    if (head_num != q.n)
        return INVALID("%s: %s must equal the head count of %s (N1 = %lld), got %lld", qt->fn, hn, qt->name,
                       (long long)q.n, (long long)head_num);
    if (k.e != q.e)
        return INVALID("%s: %s head dim must equal the %s head dim (D = %lld), got %lld", kt->fn, kt->name, qt->name,
                       (long long)q.e, (long long)k.e);
    if (v.n != k.n)
        return INVALID("%s: %s head count must equal the %s head count (N2 = %lld), got %lld", vt->fn, vt->name, kt->name,
                       (long long)k.n, (long long)v.n);
    return ACLNN_SUCCESS;
}

aclnnStatus fa_geom_derive(fa_geom *g, fa_layout layout, const cann_operand *q, const cann_operand *k,
                           const cann_operand *v, int64_t head_num, const char *head_num_name)
{
    aclnnStatus st;
    const int rank = fa_layout_rank(layout);
    memset(g, 0, sizeof *g);
    g->layout = layout;
    if ((st = cann_check_rank(q, rank)) || (st = cann_check_rank(k, rank)) || (st = cann_check_rank(v, rank)))
        return st;
    const seq_dims qd = read_dims(layout, q), kd = read_dims(layout, k), vd = read_dims(layout, v);
    if (layout == FA_LAYOUT_BSH || layout == FA_LAYOUT_SBH)
        st = derive_hidden(g, qd, kd, vd, q, k, v, head_num, head_num_name);
    else
        st = derive_heads(g, qd, kd, vd, q, k, v, head_num, head_num_name);
    if (st)
        return st;
    if (layout != FA_LAYOUT_TND && (kd.b != qd.b || vd.b != qd.b)) {
        const cann_operand *bad = kd.b != qd.b ? k : v;
        return INVALID("%s: %s batch size must equal the %s batch size (B = %lld), got %lld", bad->fn, bad->name, q->name,
                       (long long)qd.b, (long long)(kd.b != qd.b ? kd.b : vd.b));
    }
    if (vd.s != kd.s)
        return INVALID("%s: %s sequence length must equal the %s sequence length (%lld), got %lld", v->fn, v->name, k->name,
                       (long long)kd.s, (long long)vd.s);
    if (g->N1 % g->N2 != 0)
        return INVALID("%s: %s head count N2 = %lld must divide the %s head count N1 = %lld", k->fn, k->name,
                       (long long)g->N2, q->name, (long long)g->N1);
    if ((st = limit(q, "head count N1", g->N1, FA_MAX_HEADS)) || (st = limit(k, "head count N2", g->N2, FA_MAX_HEADS)) ||
        (st = limit(q, "head dim D", g->D, FA_MAX_DIM)) || (st = limit(v, "head dim Dv", g->Dv, FA_MAX_DIM)) ||
        (st = limit(q, layout == FA_LAYOUT_TND ? "token count T1" : "sequence length S1", qd.s, FA_MAX_LEN)) ||
        (st = limit(k, layout == FA_LAYOUT_TND ? "token count T2" : "sequence length S2", kd.s, FA_MAX_LEN)))
        return st;
    if (layout == FA_LAYOUT_TND) {
        g->T1 = qd.s;
        g->T2 = kd.s;
    } else {
        if ((st = limit(q, "batch size B", qd.b, FA_MAX_BATCH)))
            return st;
        g->B = qd.b;
        g->S1 = qd.s;
        g->S2 = kd.s;
        g->T1 = qd.b * qd.s;
        g->T2 = qd.b * kd.s;
    }
    return ACLNN_SUCCESS;
}

/* One cumulative array: checks and copies. */
static aclnnStatus read_cum(const char *fn, const cann_ints *a, const char *name, int64_t total, const char *total_what,
                            int64_t **out, int64_t *max_len)
{
    int64_t *c = malloc((size_t)a->size * sizeof *c);
    if (!c)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %s", fn, name);
    int64_t prev = 0;
    *max_len = 0;
    for (uint64_t b = 0; b < a->size; b++) {
        const int64_t x = a->value[b];
        if (x < prev) {
            free(c);
            return INVALID("%s: %s must be cumulative: entry [%llu] must be >= the previous entry (%lld), got %lld", fn,
                           name, (unsigned long long)b, (long long)prev, (long long)x);
        }
        *max_len = x - prev > *max_len ? x - prev : *max_len;
        c[b] = prev = x;
    }
    if (prev != total) {
        free(c);
        return INVALID("%s: %s last entry [%llu] must equal %s (%lld), got %lld", fn, name,
                       (unsigned long long)(a->size - 1), total_what, (long long)total, (long long)prev);
    }
    *out = c;
    return ACLNN_SUCCESS;
}

aclnnStatus fa_geom_lengths(fa_geom *g, const char *fn, const cann_ints *aq, const char *aq_name, const cann_ints *akv,
                            const char *akv_name)
{
    if (!aq->present || !akv->present)
        return INVALID("%s: %s is absent, but layout TND needs both actual-length arrays", fn,
                       aq->present ? akv_name : aq_name);
    if (aq->size < 1 || aq->size > FA_MAX_BATCH)
        return INVALID("%s: %s length (the batch count B) must be in [1, %d], got %llu", fn, aq_name, FA_MAX_BATCH,
                       (unsigned long long)aq->size);
    if (akv->size != aq->size)
        return INVALID("%s: %s must have as many entries as %s (%llu), got %llu", fn, akv_name, aq_name,
                       (unsigned long long)aq->size, (unsigned long long)akv->size);
    aclnnStatus st = read_cum(fn, aq, aq_name, g->T1, "the query token count T1", &g->cum_q, &g->S1);
    if (st == ACLNN_SUCCESS)
        st = read_cum(fn, akv, akv_name, g->T2, "the key token count T2", &g->cum_kv, &g->S2);
    if (st != ACLNN_SUCCESS) {
        fa_geom_free(g);
        return st;
    }
    g->B = (int64_t)aq->size;
    return ACLNN_SUCCESS;
}

int fa_seq_shape(const fa_geom *g, bool q_side, int64_t heads, int64_t feat, int64_t dims[4])
{
    const int64_t s = q_side ? g->S1 : g->S2, t = q_side ? g->T1 : g->T2;
    switch (g->layout) {
    case FA_LAYOUT_BSH: dims[0] = g->B, dims[1] = s, dims[2] = heads * feat; return 3;
    case FA_LAYOUT_SBH: dims[0] = s, dims[1] = g->B, dims[2] = heads * feat; return 3;
    case FA_LAYOUT_BSND: dims[0] = g->B, dims[1] = s, dims[2] = heads, dims[3] = feat; return 4;
    case FA_LAYOUT_BNSD: dims[0] = g->B, dims[1] = heads, dims[2] = s, dims[3] = feat; return 4;
    default: dims[0] = t, dims[1] = heads, dims[2] = feat; return 3;
    }
}

aclnnStatus fa_check_seq_shape(const fa_geom *g, const cann_operand *t, bool q_side, int64_t heads, int64_t feat)
{
    int64_t dims[4];
    const int rank = fa_seq_shape(g, q_side, heads, feat, dims);
    return cann_check_shape(t, dims, rank);
}

fc_view fa_seq_view(const fa_geom *g, const cann_operand *t, int64_t feat)
{
    const int64_t *st = t->strides;
    fc_view v = {.data = t->data, .dtype = cann_fc_dtype(t->dtype)};
    switch (g->layout) {
    case FA_LAYOUT_BSH: v.sb = st[0], v.ss = st[1], v.sn = feat * st[2], v.se = st[2]; break;
    case FA_LAYOUT_SBH: v.sb = st[1], v.ss = st[0], v.sn = feat * st[2], v.se = st[2]; break;
    case FA_LAYOUT_BSND: v.sb = st[0], v.ss = st[1], v.sn = st[2], v.se = st[3]; break;
    case FA_LAYOUT_BNSD: v.sb = st[0], v.sn = st[1], v.ss = st[2], v.se = st[3]; break;
    default: v.sb = 0, v.ss = st[0], v.sn = st[1], v.se = st[2]; break;
    }
    return v;
}
