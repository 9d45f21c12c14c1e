#include "sfa_lower.h"

#include <string.h>

#include "core/lower.h"

static fc_view view_of(const sfa_state *s, sfa_param id, bool q_side)
{
    return sfa_seq_view(&s->g, &s->t[id], q_side);
}

/* sparseIndices: (B,S1,N2,K) or (T1,N2,K), entries block numbers relative to the batch. */
static fc_sparse_view selection(const sfa_state *s)
{
    const cann_operand *t = &s->t[SFA_INDICES];
    const int64_t *st = t->strides;
    fc_sparse_view sv = {.data = t->data, .dtype = t->dtype == ACL_INT64 ? FC_I64 : FC_I32,
                         .count = s->g.K, .block_size = s->c->block_size, .causal = s->c->sparse_mode == 3};
    if (s->g.lq == SFA_TND)
        sv.sb = 0, sv.si = st[0], sv.sn = st[1], sv.sk = st[2];
    else
        sv.sb = st[0], sv.si = st[1], sv.sn = st[2], sv.sk = st[3];
    return sv;
}

fc_stats_view sfa_lower_stats(const sfa_geom *g, float *max, float *sum)
{
    return fc_lower_stats(max, sum, g->lq == SFA_TND ? FC_STATS_KV_TOKEN_GROUP : FC_STATS_KV_GROUP, 1, g->N1, g->G, g->T1);
}

void sfa_lower_template(const sfa_state *s, fc_problem *p)
{
    const sfa_geom *g = &s->g;
    const bool rope = g->Dr > 0, bwd = s->c->backward;
    memset(p, 0, sizeof *p);
    p->B = g->B, p->Nq = g->N1, p->Nkv = g->N2, p->G = g->G;
    p->Dqk = g->D, p->Dv = g->Dv, p->Dr = g->Dr;
    p->q = view_of(s, SFA_QUERY, true);
    p->k = view_of(s, SFA_KEY, false);
    p->v = view_of(s, SFA_VALUE, false);
    p->out = view_of(s, SFA_OUT, true);
    if (rope) {
        p->q_rope = view_of(s, SFA_QUERY_ROPE, true);
        p->k_rope = view_of(s, SFA_KEY_ROPE, false);
    }
    if (g->lkv == SFA_PA_BSND) {
        const fc_pages pages = {.table = NULL, .table_stride = g->width, .block_size = g->slots, .blocks = g->blocks};
        p->k.pages = p->v.pages = pages;
        if (rope)
            p->k_rope.pages = pages;
    }
    p->scale = (float)s->c->scale;
    p->keep_prob = 1.0f;
    p->sparse = selection(s);
    if (bwd || s->c->return_lse)
        p->stats = sfa_lower_stats(g, (float *)s->t[SFA_SMAX].data, (float *)s->t[SFA_SSUM].data);
    if (!bwd)
        return;
    p->dout = view_of(s, SFA_DOUT, true);
    p->dq = view_of(s, SFA_DQ, true);
    p->dk = view_of(s, SFA_DK, false);
    p->dv = view_of(s, SFA_DV, false);
    if (rope) {
        p->dq_rope = view_of(s, SFA_DQ_ROPE, true);
        p->dk_rope = view_of(s, SFA_DK_ROPE, false);
    }
}

fc_batch_rule sfa_batch_rule(const sfa_geom *g)
{
    /* BSND query rows are padded to S1 (rows past S1_b see nothing), BSND key rows to S2 (their
     * gradients get zeros); TND sides pack by token; a paged key has no padding rows.  The
     * selection alone decides visibility: no window. */
    const fc_batch_rule rule = {.B = g->B, .q = {.packed = g->lq == SFA_TND, .rows = g->lq == SFA_TND ? 0 : g->S1},
                                .kv = {.packed = g->lkv == SFA_TND, .rows = g->lkv == SFA_BSND ? g->S2 : 0}};
    return rule;
}

void sfa_bound_lengths(const sfa_geom *g, int64_t *sq, int64_t *skv)
{
    for (int64_t b = 0; b < g->B; b++) {
        sq[b] = g->lq == SFA_TND ? (b == 0 ? g->T1 : 0) : g->S1;
        skv[b] = g->kv_cap;
    }
}
