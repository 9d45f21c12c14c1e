#include "harness_internal.h"

tc_dtype nt_tc(fc_dtype t) { return t == FC_F16 ? TC_F16 : t == FC_BF16 ? TC_BF16 : TC_F32; }

size_t nt_dtype_bytes(fc_dtype t)
{
    switch (t) {
    case FC_F16: case FC_BF16: return 2;
    case FC_I8: case FC_U8: case FC_BOOL: return 1;
    case FC_I64: return 8;
    default: return 4;
    }
}

int64_t nt_tokens_before(const int *lens, int b)
{
    int64_t t = 0;
    for (int k = 0; k < b; k++)
        t += lens[k];
    return t;
}

int nt_total(const int *lens, int B) { return (int)nt_tokens_before(lens, B); }

static nt_layout operand_layout(const nt_case *c, nt_operand which)
{
    if (c->packed)
        return NT_TND;
    if (!c->mixed_layouts)
        return c->layout;
    const int shift = which == NT_OUT ? 2 : (which == NT_K || which == NT_V || which == NT_KR) ? 1 : 0;
    return (nt_layout)((c->layout + shift) % 4); /* the four padded layouts */
}

static bool kv_side(nt_operand w) { return w == NT_K || w == NT_V || w == NT_KR; }

nt_geom nt_operand_geom(const nt_case *c, const nt_data *d, nt_operand which)
{
    const bool kv = kv_side(which);
    const int E = which == NT_Q || which == NT_K ? c->D : which == NT_QR || which == NT_KR ? c->Dr : d->Dv;
    const int N = kv ? c->N2 : c->N1;
    int S = c->packed ? nt_total(kv ? d->s2 : d->s1, c->B) : kv ? c->Skv : c->Sq;
    const bool bseq = kv && c->kv_bcast_seq;
    const bool bhead = (which == NT_Q || which == NT_QR) && c->q_bcast_head;
    const int64_t ds = c->dim_stride > 1 ? c->dim_stride : 1, pad = c->pad;
    /* extents outer → inner for each layout; 'b', 'n', 's' */
    const char *order;
    switch (operand_layout(c, which)) {
    case NT_BNSD: order = "bns"; break;
    case NT_SBH: order = "sbn"; break;
    case NT_TND: order = "sn"; break;
    default: order = "bsn"; break; /* BSND and BSH share strides */
    }
    nt_geom g = {.sd = ds};
    int64_t cur = ds * (E > 0 ? E : 1) + pad;
    for (int k = (int)__builtin_strlen(order) - 1; k >= 0; k--) {
        const char ax = order[k];
        int64_t ext = ax == 'b' ? c->B : ax == 'n' ? N : (S > 0 ? S : 1);
        if ((ax == 's' && bseq) || (ax == 'n' && bhead))
            ext = 1;
        const int64_t stride = cur;
        cur = stride * ext + pad;
        const int64_t st = (ax == 's' && bseq) || (ax == 'n' && bhead) ? 0 : stride;
        if (ax == 'b') g.sb = st;
        if (ax == 'n') g.sh = st;
        if (ax == 's') g.ss = st;
    }
    if (c->packed)
        g.sb = 3; /* ignored for packed batches: a wrong use shifts every batch but the first */
    g.count = cur;
    return g;
}

int64_t nt_offset(const nt_case *c, const nt_data *d, const nt_geom *g, nt_operand which, int b, int n, int s, int e)
{
    if (c->packed) {
        const int64_t tok = nt_tokens_before(kv_side(which) ? d->s2 : d->s1, b);
        return (tok + s) * g->ss + n * g->sh + e * g->sd;
    }
    return (int64_t)b * g->sb + n * g->sh + (int64_t)s * g->ss + e * g->sd;
}

int nt_q_rows(const nt_case *c, const nt_data *d, int b) { return c->packed ? d->s1[b] : c->Sq; }

int nt_replicas(const nt_case *c) { return c->replicas > 0 ? c->replicas : 1; }

/* flashc.h fc_stats_order: head-major per-batch [heads, Sq_b, r] blocks; token-major
 * [tokens, heads, r]; kv-group per-batch [kv_heads, Sq_b, group]; kv-token-group
 * [kv_heads, tokens, group] over all batches' rows. */
int64_t nt_stat_offset(const nt_case *c, const nt_data *d, int b, int n1, int i)
{
    const int r = nt_replicas(c), G = c->N1 / c->N2;
    int64_t base = 0, tok = 0;
    for (int k = 0; k < b; k++) {
        base += (int64_t)c->N1 * nt_q_rows(c, d, k) * r;
        tok += nt_q_rows(c, d, k);
    }
    const int64_t rows = nt_q_rows(c, d, b);
    switch (c->stats_order) {
    case FC_STATS_TOKEN_MAJOR: return ((tok + i) * c->N1 + n1) * r;
    case FC_STATS_KV_GROUP: return base + ((int64_t)(n1 / G) * rows + i) * G + n1 % G;
    case FC_STATS_KV_TOKEN_GROUP: {
        int64_t all = 0;
        for (int k = 0; k < c->B; k++)
            all += nt_q_rows(c, d, k);
        return ((int64_t)(n1 / G) * all + tok + i) * G + n1 % G;
    }
    default: return base + ((int64_t)n1 * rows + i) * r;
    }
}

int64_t nt_stat_count(const nt_case *c, const nt_data *d)
{
    int64_t n = 0;
    for (int b = 0; b < c->B; b++)
        n += (int64_t)c->N1 * nt_q_rows(c, d, b) * nt_replicas(c);
    return n;
}
