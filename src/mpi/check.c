/* This rank's own check of its description, before the ranks compare theirs: what the ring
 * supports, then libflashc's validation of the shard as an ordinary problem. */
#include <stdlib.h>

#include "ring.h"

/* What the ring does not take (yet): features whose data is indexed by gathered rows or columns. */
static fc_status check_supported(const ring_ctx *c, bool backward)
{
    const fc_attention_desc *d = c->d;
    const char *fn = c->fn;
    const char *bad = d->rope_dim ? "desc.rope_dim (rope features)"
                      : d->bias.data ? "desc.bias"
                      : d->vis.mask.data ? "desc.vis.mask"
                      : d->dropout.keep_bits && d->dropout.keep_prob != 0 && d->dropout.keep_prob < 1 ? "desc.dropout"
                      : d->sparse.indices ? "desc.sparse"
                      : d->q_lens || d->kv_lens ? "desc.q_lens / kv_lens (per-batch lengths)"
                      : d->packed ? "desc.packed"
                      : d->kv_starts ? "desc.kv_starts"
                      : d->kv.k_batches || d->kv.v_batches || d->kv.block_table ? "desc.kv (per-batch or paged storage)"
                      : d->k.dtype == FC_I8 || d->v.dtype == FC_I8 ? "int8 keys / values"
                      : d->out.dtype == FC_I8 ? "an int8 output"
                      : d->alibi.slopes && d->alibi.bottom_right ? "desc.alibi.bottom_right (ALiBi from each block's corner)"
                      : NULL;
    if (bad)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: %s is not supported by the ring", fn, bad);
    if (c->opt.sharding != FC_RING_CONTIGUOUS && c->opt.sharding != FC_RING_ZIGZAG)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: options.sharding must be FC_RING_CONTIGUOUS or FC_RING_ZIGZAG, got %d",
                         fn, (int)c->opt.sharding);
    if (d->q_len < 0 || d->kv_len < 0)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: desc.q_len and desc.kv_len must be >= 0 (0 = an empty shard), got %lld, %lld",
                         fn, (long long)d->q_len, (long long)d->kv_len);
    if (backward && (!d->stats.max || !d->stats.sum))
        return ring_fail(FC_ERR_NULL_ARG, "%s: desc.stats.max and desc.stats.sum (the forward's statistics) are required",
                         fn);
    return FC_OK;
}

/* libflashc's own validation on this rank's shard; an empty side stands in as one row of scratch. */
static fc_status check_with_flashc(const ring_ctx *c, bool backward)
{
    fc_attention_desc d = *c->d;
    fc_attention_grads g = c->g ? *c->g : (fc_attention_grads){0};
    const bool q_empty = d.q_len == 0, kv_empty = d.kv_len == 0;
    float *dummy = NULL;
    if (q_empty || kv_empty) {
        const int64_t r = d.stats.replicas > 0 ? d.stats.replicas : 1;
        const int64_t dim = c->D > c->Dv ? c->D : c->Dv, per = dim > r ? dim : r;
        dummy = ring_alloc((size_t)(d.batch * d.q_heads), (size_t)per * sizeof(float) * 2, "a stand-in row");
        if (!dummy)
            return FC_ERR_NO_MEMORY;
    }
    if (q_empty) {
        d.q_len = 1;
        d.q = fc_tensor_bnsd(dummy, d.q.dtype, d.q_heads, 1, c->D);
        d.out = fc_tensor_bnsd(dummy, d.out.dtype, d.q_heads, 1, c->Dv);
        if (d.stats.max)
            d.stats.max = dummy, d.stats.sum = dummy;
        g.d_out = fc_tensor_bnsd(dummy, g.d_out.dtype, d.q_heads, 1, c->Dv);
        g.dq = fc_tensor_bnsd(dummy, g.dq.dtype, d.q_heads, 1, c->D);
    }
    if (kv_empty) {
        d.kv_len = 1;
        d.k = fc_tensor_bnsd(dummy, d.k.dtype, d.kv_heads, 1, c->D);
        d.v = fc_tensor_bnsd(dummy, d.v.dtype, d.kv_heads, 1, c->Dv);
        g.dk = fc_tensor_bnsd(dummy, g.dk.dtype, d.kv_heads, 1, c->D);
        g.dv = fc_tensor_bnsd(dummy, g.dv.dtype, d.kv_heads, 1, c->Dv);
    }
    fc_plan *plan = NULL;
    const fc_status st = backward ? fc_plan_create_backward(&d, &g, NULL, &plan) : fc_plan_create(&d, NULL, &plan);
    fc_plan_destroy(plan);
    free(dummy);
    return st == FC_OK ? FC_OK : ring_fail_flashc(st, c->fn);
}

fc_status ring_check_local(ring_ctx *c, bool backward)
{
    if (!c->d)
        return ring_fail(FC_ERR_NULL_ARG, "%s: desc is NULL", c->fn);
    if (backward && !c->g)
        return ring_fail(FC_ERR_NULL_ARG, "%s: grads is NULL", c->fn);
    fc_status st = check_supported(c, backward);
    if (st == FC_OK)
        st = check_with_flashc(c, backward);
    if (st == FC_OK && backward && c->d->sink && !c->g->dsink)
        st = ring_fail(FC_ERR_NULL_ARG, "%s: grads.dsink is NULL while desc.sink is set", c->fn);
    return st;
}
