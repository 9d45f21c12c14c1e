/*
 * IncreFlashAttentionV4 lowered into the canonical problem: one query row per batch (S1 = 1),
 * the kv window each batch sees (§4.3) as its length and column floor, key/value as one tensor,
 * per-batch tensors or a paged cache, int8 dequantisation, scale then pse (a broadcast row), the
 * attention mask and int8 output quantisation.
 */
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "cann/common/errmsg.h"
#include "ifa.h"

void ifa_kv_window(const ifa_lens *l, int64_t pad, int64_t *skv, int64_t *kv_lo)
{
    for (int64_t b = 0; b < l->B; b++) {
        int64_t lo = 0, hi = l->len[b];
        if (l->left_padding) { /* valid t in [S_b − pad − L_b, S_b − pad), pad = max(pad, 0) */
            const int64_t p = pad > 0 ? pad : 0, sb = l->seq[b];
            hi = p > sb ? 0 : sb - p;
            lo = hi - l->len[b];
            if (lo < 0) /* the window starts before the cache: the batch's output is zeros */
                lo = hi = 0;
        }
        if (lo == hi)
            lo = hi = 0;
        skv[b] = hi;
        kv_lo[b] = lo;
    }
}

fc_batch_rule ifa_batch_rule(const ifa_state *s)
{
    const cann_operand *mask = &s->t[IFA_MASK], *pse = &s->t[IFA_PSE];
    const fc_batch_rule rule = {.B = s->g.B, .q = {.rows = 1, .len = 1}, /* one query row per batch, no band */
                                .mask_sb = mask->present ? mask->strides[0] : 0,
                                .pse_sb = pse->present && pse->dims[0] > 1 ? pse->strides[0] : 0};
    return rule;
}

/* Key and value storage: one view each, with per-batch bases or pages; int8 dequantisation. */
static void lower_kv(const ifa_state *s, char **batch_data, fc_problem *p)
{
    const ifa_geom *g = &s->g;
    p->k = ifa_kv_view(s, 0);
    p->v = ifa_kv_view(s, 1);
    if (g->per_batch) {
        for (int64_t b = 0; b < g->B; b++) {
            batch_data[b] = s->kv[0].el[b].data;
            batch_data[g->B + b] = s->kv[1].el[b].data;
        }
        p->k.batch_data = batch_data;
        p->v.batch_data = batch_data + g->B;
    }
    if (g->paged) {
        const cann_operand *bt = &s->t[IFA_BLOCK_TABLE];
        const fc_pages pages = {.table = (const int32_t *)bt->data, .table_stride = bt->strides[0],
                                .block_size = g->block_size, .blocks = g->blocks};
        p->k.pages = p->v.pages = pages;
    }
    if (p->k.dtype == FC_I8) {
        p->k.dequant = ifa_antiquant_view(s, 0);
        p->v.dequant = ifa_antiquant_view(s, 1);
    }
}

aclnnStatus ifa_lower(const ifa_state *s, char **batch_data, int64_t *seq, int64_t *kv_window, fc_problem *p)
{
    const ifa_geom *g = &s->g;
    const fa_geom fg = {.layout = g->layout};
    memset(p, 0, sizeof *p);
    p->B = g->B;
    p->Nq = g->N1;
    p->Nkv = g->N2;
    p->G = g->N1 / g->N2;
    p->Dqk = p->Dv = g->D;
    p->batch = calloc((size_t)g->B, sizeof *p->batch);
    if (!p->batch)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for %lld batch records", s->fn, (long long)g->B);
    for (int64_t b = 0; b < g->B; b++)
        seq[b] = ifa_seq_len(s, b);
    /* planned with no padding: every batch's window is then as long as it can be */
    const ifa_lens lens = {.B = g->B, .seq = seq, .len = s->len, .left_padding = s->t[IFA_KV_PAD].present};
    ifa_kv_window(&lens, 0, kv_window, kv_window + g->B);
    const fc_batch_rule rule = ifa_batch_rule(s);
    const fc_lengths lengths = {.skv = kv_window, .kv_lo = kv_window + g->B};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &lengths, p, &tot);

    p->q = fa_seq_view(&fg, &s->t[IFA_QUERY], g->D);
    p->out = fa_seq_view(&fg, &s->t[IFA_OUT], g->D);
    lower_kv(s, batch_data, p);
    p->scale = (float)s->c->scale;
    const cann_operand *pse = &s->t[IFA_PSE], *mask = &s->t[IFA_MASK];
    if (pse->present) /* after scaling; one row per head, broadcast (the query has one row) */
        p->pse = (fc_pse_view){.data = pse->data, .dtype = cann_fc_dtype(pse->dtype), .sn = pse->strides[1],
                               .si = 0, .sj = pse->strides[3]};
    if (mask->present)
        p->mask = (fc_mask_view){.data = (const uint8_t *)mask->data, .sj = mask->strides[mask->rank - 1]};
    if (p->out.dtype == FC_I8)
        p->out_quant = ifa_out_quant_view(s);
    p->keep_prob = 1.0f;
    return ACLNN_SUCCESS;
}
