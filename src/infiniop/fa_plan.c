/*
 * Lowering (semantics §7.4, §9 q): q, k, v, out are strided (batch, head, seq, dim) views; scale
 * 1/sqrt(D); no window; the key-padding mask is an explicit mask that repeats one row of keys for
 * every head and query (sn = si = 0, sj = 1).  Data addresses stay NULL until a run binds them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/lower.h"
#include "fa.h"

static fc_view view(const infini_fa_geom *g, int x)
{
    const int64_t *s = g->stride[x];
    fc_view v = {.dtype = g->fc, .sb = s[0], .sn = s[1], .ss = s[2], .se = s[3]};
    return v;
}

infiniStatus_t infini_fa_plan(const infini_fa_geom *g, fc_plan **plan)
{
    fc_problem p;
    memset(&p, 0, sizeof p);
    p.B = g->B, p.Nq = g->Nq, p.Nkv = g->Nkv, p.G = g->Nq / g->Nkv;
    p.Dqk = g->D, p.Dv = g->Dv;
    p.max_sq = g->Sq, p.max_skv = g->Skv;
    p.q = view(g, FA_Q), p.k = view(g, FA_K), p.v = view(g, FA_V), p.out = view(g, FA_OUT);
    p.scale = (float)(1.0 / sqrt((double)g->D));
    p.keep_prob = 1.0f;
    p.stats.replicas = 1;
    p.mask = (fc_mask_view){.data = NULL, .sn = 0, .si = 0, .sj = 1};
    p.batch = calloc((size_t)p.B, sizeof *p.batch);
    if (!p.batch)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infiniopCreateFlashAttentionDescriptor: out of host memory");
    const int64_t mask_sb = infini_mask_batch_stride(g);
    for (int64_t b = 0; b < p.B; b++) {
        fc_batch *bt = &p.batch[b];
        bt->sq = bt->q_rows = g->Sq;
        bt->skv = g->Skv;
        fc_lower_window(bt, false, 0, 0, false, 0, 0);
        bt->mask_base = b * mask_sb;
        p.stats.tokens += bt->q_rows;
    }
    if (fc_plan_from_problem(&p, FC_OP_FORWARD, NULL, plan) != FC_OK) /* takes p.batch */
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infiniopCreateFlashAttentionDescriptor: %s", fc_error_message());
    return INFINI_STATUS_SUCCESS;
}
