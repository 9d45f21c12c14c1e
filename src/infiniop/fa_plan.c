/*
 * Lowering (semantics §7.4, §9 q): q, k, v, out are strided (batch, head, seq, dim) views; scale
 * 1/sqrt(D); no window; the key-padding mask is an explicit mask that repeats one row of keys for
 * every head and query (sn = si = 0, sj = 1).  Data addresses stay NULL until a run binds them (a
 * masked plan's mask a placeholder: the plan has one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "core/error.h"
#include "fa.h"

static fc_view view(const infini_fa_geom *g, int x)
{
    const int64_t *s = g->stride[x];
    fc_view v = {.dtype = g->fc, .sb = s[0], .sn = s[1], .ss = s[2], .se = s[3]};
    return v;
}

/* Where a masked plan's mask lies until a run binds it: nothing reads it at planning. */
static const uint8_t infini_mask_bound_per_run;

infiniStatus_t infini_fa_plan(const infini_fa_geom *g, int device, bool masked, fc_plan **plan)
{
    static const char fn[] = "infiniopCreateFlashAttentionDescriptor";
    if (device == INFINI_DEVICE_NVIDIA && infini_mask_scratch_bytes(g) > 0) /* narrowed on the host (fa_mask.c) */
        return infini_fail(INFINI_STATUS_BAD_TENSOR_DTYPE,
                           "%s: mask_desc: on INFINI_DEVICE_NVIDIA the mask must be BOOL, BYTE, I8 or U8 (one byte "
                           "per element), got %lld-byte elements",
                           fn, (long long)g->esize[FA_MASK]);
    fc_problem p;
    memset(&p, 0, sizeof p);
    p.B = g->B, p.Nq = g->Nq, p.Nkv = g->Nkv, p.G = g->Nq / g->Nkv;
    p.Dqk = g->D, p.Dv = g->Dv;
    p.q = view(g, FA_Q), p.k = view(g, FA_K), p.v = view(g, FA_V), p.out = view(g, FA_OUT);
    p.scale = (float)(1.0 / sqrt((double)g->D));
    p.keep_prob = 1.0f;
    p.mask = (fc_mask_view){.data = masked ? &infini_mask_bound_per_run : NULL, .sn = 0, .si = 0, .sj = 1};
    p.batch = calloc((size_t)p.B, sizeof *p.batch);
    if (!p.batch)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", fn);
    const fc_batch_rule rule = {.B = g->B, .q = {.rows = g->Sq, .len = g->Sq}, .kv = {.len = g->Skv},
                                .mask_sb = infini_mask_batch_stride(g)};
    const fc_lengths lengths = {0};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &lengths, &p, &tot);
    const fc_options opt = {.backend = device == INFINI_DEVICE_NVIDIA ? FC_BACKEND_CUDA : FC_BACKEND_CPU};
    const fc_status st = fc_plan_from_problem(&p, NULL, false, FC_OP_FORWARD, &opt, plan); /* takes p.batch */
    if (st != FC_OK) /* BACKEND: a shape or dtype the GPU does not cover yet */
        return infini_fail(st == FC_ERR_BACKEND ? INFINI_STATUS_NOT_IMPLEMENTED : INFINI_STATUS_INTERNAL_ERROR, "%s: %s", fn,
                           fc_error_message());
    return INFINI_STATUS_SUCCESS;
}
