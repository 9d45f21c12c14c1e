/* Lowering of a validated native description into the canonical problem. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/batch.h"
#include "../core/dtype.h"
#include "../core/error.h"
#include "../core/lower.h"
#include "../core/plan.h"
#include "native.h"

static fc_affine_view to_affine(const fc_affine *a)
{
    fc_affine_view v = {.scale = a->scale, .offset = a->offset, .dtype = a->dtype, .sn = a->stride_head,
                        .se = a->stride_dim};
    return v;
}

fc_view fc_native_view(const fc_tensor *t, bool packed)
{
    fc_view v = {.data = (char *)t->data, .dtype = t->dtype, .sb = packed ? 0 : t->stride_batch,
                 .sn = t->stride_head, .ss = t->stride_seq, .se = t->stride_dim};
    return v;
}

/* How the description's lengths become per-batch facts (core/batch.h). */
static fc_batch_rule batch_rule(const fc_attention_desc *d)
{
    const fc_mask *mk = &d->vis.mask;
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    fc_batch_rule r = {.B = d->batch, .q = {.packed = d->packed, .rows = d->q_len, .len = d->q_len},
                       .kv = {.packed = d->packed, .rows = d->kv_len, .len = d->kv_len}, .window = d->vis.window,
                       .q_start = d->vis.q_start, .kv_start = d->vis.kv_start, .mask_sb = mk->stride_batch,
                       .mask_by_tokens = mk->by_tokens, .mask_si = mk->stride_row, .mask_sj = mk->stride_col,
                       .pse_sb = d->bias.data ? d->bias.stride_batch : 0, .drop_heads = kp < 1 ? d->q_heads : 0};
    return r;
}

/* The facts beyond the lengths: per-batch windows, prefixes, left padding, ALiBi positions and
 * bias alignment (semantics §2.4, §2.5). */
static fc_status lower_batches(const char *fn, const fc_attention_desc *d, fc_problem *p)
{
    for (int64_t b = 0; b < d->batch; b++) {
        fc_batch *bt = &p->batch[b];
        if (d->vis.batch_window) {
            const fc_window *w = &d->vis.batch_window[b];
            fc_lower_window(bt, w->enabled, w->left, w->right, w->align == FC_ALIGN_BOTTOM_RIGHT, d->vis.q_start,
                            d->vis.kv_start);
        }
        bt->prefix = d->vis.prefix ? d->vis.prefix[b] : 0;
        if (bt->col_lo < 0 || bt->col_lo > bt->skv)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv_starts[%lld] must be in [0, %lld], got %lld", fn, (long long)b,
                           (long long)bt->skv, (long long)bt->col_lo);
        bt->alibi_bottom_right = d->alibi.bottom_right;
        bt->alibi_dpos = (double)d->vis.kv_start - (double)d->vis.q_start -
                         (d->alibi.bottom_right ? (double)bt->skv - (double)bt->sq : 0.0);

        const fc_bias *bs = &d->bias;
        if (bs->data) {
            bt->pse_row_shift = bs->bottom_right && bs->stride_row ? bs->rows - bt->sq : 0;
            bt->pse_col_shift = bs->bottom_right ? bs->cols - bt->skv : 0;
            const fc_status st = fc_check_pse_extent(fn, "desc.bias", bt, b, bs->rows, bs->cols, bs->stride_row != 0,
                                                     bs->compressed);
            if (st != FC_OK)
                return st;
            if (bs->compressed && bt->sq > bs->rows && bt->vis_hi > 0)
                bt->vis_hi = 0; /* compressed rows are defined for j <= i only */
        }
    }
    return FC_OK;
}

/* Per-batch facts: the core's from the lengths, then the description's own. */
static fc_status lower_all_batches(const char *fn, const fc_attention_desc *d, fc_problem *p)
{
    const fc_batch_rule rule = batch_rule(d);
    const fc_lengths len = {.sq = d->q_lens, .skv = d->kv_lens, .kv_lo = d->kv_starts};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &len, p, &tot);
    const fc_status st = lower_batches(fn, d, p);
    if (st != FC_OK)
        return st;
    const int64_t need = tot.drop_bits / 8 + (tot.drop_bits % 8 != 0);
    if (rule.drop_heads && !d->dropout.generate && d->dropout.keep_bits_bytes < (size_t)need)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.dropout.keep_bits_bytes is %zu, the problem needs %lld bytes", fn,
                       d->dropout.keep_bits_bytes, (long long)need);
    return FC_OK;
}

fc_status fc_native_lower(const char *fn, const fc_attention_desc *d, fc_problem *p)
{
    memset(p, 0, sizeof *p);
    p->B = d->batch;
    p->Nq = d->q_heads;
    p->Nkv = d->kv_heads;
    p->G = d->q_heads / d->kv_heads;
    p->Dqk = d->head_dim;
    p->Dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    p->Dr = d->rope_dim;
    p->q = fc_native_view(&d->q, d->packed);
    p->k = fc_native_view(&d->k, d->packed);
    p->v = fc_native_view(&d->v, d->packed);
    p->out = fc_native_view(&d->out, d->packed);
    if (p->Dr) {
        p->q_rope = fc_native_view(&d->q_rope, d->packed);
        p->k_rope = fc_native_view(&d->k_rope, d->packed);
    }
    const fc_kv_storage *kv = &d->kv;
    if (kv->k_batches) {
        p->k.batch_data = (char *const *)kv->k_batches;
        p->v.batch_data = (char *const *)kv->v_batches;
    }
    if (kv->block_table) {
        const fc_pages pages = {.table = kv->block_table, .table_stride = kv->table_stride,
                                .block_size = kv->block_size, .blocks = kv->num_blocks};
        p->k.pages = p->v.pages = pages;
        if (p->Dr)
            p->k_rope.pages = pages;
        p->k.sb = d->k.stride_batch, p->v.sb = d->v.stride_batch;
        if (p->Dr)
            p->k_rope.sb = d->k_rope.stride_batch;
    }
    if (d->k.dtype == FC_I8)
        p->k.dequant = to_affine(&kv->k_dequant);
    if (d->v.dtype == FC_I8)
        p->v.dequant = to_affine(&kv->v_dequant);
    if (d->out.dtype == FC_I8)
        p->out_quant = to_affine(&d->out_quant);
    p->scale = (float)(d->scale != 0 ? d->scale : 1.0 / sqrt((double)(p->Dqk + p->Dr)));
    p->softcap = d->softcap;
    if (d->bias.data) {
        const fc_bias *bs = &d->bias;
        p->pse = (fc_pse_view){.data = bs->data, .dtype = bs->dtype, .before_scale = bs->order == FC_BIAS_BEFORE_SCALE,
                               .sn = bs->stride_head, .si = bs->stride_row, .sj = bs->stride_col,
                               .toeplitz_rows = bs->compressed ? bs->rows : 0};
    }
    if (d->alibi.slopes)
        p->alibi = (fc_alibi_view){.slopes = d->alibi.slopes, .sb = d->alibi.stride_batch, .sn = d->alibi.stride_head,
                                   .sqrt_distance = d->alibi.sqrt_distance};
    p->sink = d->sink;
    p->sink_stride = 1;
    if (d->vis.mask.data)
        p->mask = (fc_mask_view){.data = d->vis.mask.data, .sn = d->vis.mask.stride_head,
                                 .si = d->vis.mask.stride_row, .sj = d->vis.mask.stride_col};
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    if (kp < 1) {
        p->drop_bits = d->dropout.generate ? NULL : d->dropout.keep_bits;
        p->drop_philox = d->dropout.generate;
        p->drop_seed = d->dropout.seed;
        p->drop_offset = d->dropout.offset;
        p->drop_threshold = (uint64_t)ceil(ldexp(kp, 32)); /* word < kp·2^32 exactly */
        p->keep_prob = (float)kp;
    } else {
        p->keep_prob = 1.0f;
    }
    if (d->sparse.indices) {
        const fc_sparse *sp = &d->sparse;
        p->sparse = (fc_sparse_view){.data = sp->indices, .dtype = sp->dtype, .sb = d->packed ? 0 : sp->stride_batch,
                                     .si = sp->stride_seq, .sn = sp->stride_head, .sk = sp->stride_entry,
                                     .count = sp->count, .block_size = sp->block_size, .causal = sp->causal};
    }
    p->batch = calloc((size_t)p->B, sizeof(fc_batch));
    if (!p->batch)
        return fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory for %lld batch records", fn, (long long)p->B);
    const fc_status st = lower_all_batches(fn, d, p);
    if (st != FC_OK) {
        free(p->batch);
        p->batch = NULL;
        return st;
    }
    const fc_batch *last = &p->batch[p->B - 1];
    p->stats = fc_lower_stats(d->stats.max, d->stats.sum, d->stats.order, d->stats.replicas > 0 ? d->stats.replicas : 1,
                              p->Nq, p->G, last->stat_row0 + last->q_rows);
    return FC_OK;
}
