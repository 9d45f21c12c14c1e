/*
 * The native face: validates an fc_attention_desc and lowers it into the canonical problem.
 * Messages name the field at fault as the caller spells it (e.g. "desc.vis.prefix[3]").
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/dtype.h"
#include "../core/error.h"
#include "../core/plan.h"
#include "../core/visibility.h"
#include "../core/lower.h"

#define FN "fc_plan_create"
#define FC_MAX_DIM 1024
#define FC_MAX_HEADS 256
#define FC_MAX_LEN 1048576
#define FC_MAX_BATCH 2097152

fc_attention_desc fc_attention_desc_init(void)
{
    fc_attention_desc d;
    memset(&d, 0, sizeof d);
    d.dropout.keep_prob = 1.0;
    d.stats.replicas = 1;
    return d;
}

fc_window fc_window_causal(fc_align align) { return fc_window_band(FC_UNBOUNDED, 0, align); }

fc_window fc_window_band(int64_t left, int64_t right, fc_align align)
{
    fc_window w = {.enabled = true, .left = left, .right = right, .align = align};
    return w;
}

/* ---------------------------------------------------------------------------------------------- */

static fc_status check_tensor_as(const fc_tensor *t, const char *name, bool packed, bool int8_ok, bool data_needed)
{
    if (!t->data && data_needed)
        return fc_fail(FC_ERR_NULL_ARG, FN ": %s.data is NULL", name);
    if (!fc_dtype_is_float(t->dtype) && !(int8_ok && t->dtype == FC_I8))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": %s.dtype must be FC_F32, FC_F16 or FC_BF16%s, got %d", name,
                       int8_ok ? " (or FC_I8 with its quantisation map)" : "", (int)t->dtype);
    if ((!packed && t->stride_batch < 0) || t->stride_head < 0 || t->stride_seq < 0 || t->stride_dim < 0)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": %s has a negative stride", name);
    if ((uintptr_t)t->data % (uintptr_t)fc_dtype_bytes(t->dtype) != 0)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": %s.data is not aligned to its element size", name);
    return FC_OK;
}

static fc_status check_tensor(const fc_tensor *t, const char *name, bool packed)
{
    return check_tensor_as(t, name, packed, false, true);
}

static fc_status check_affine(const fc_affine *a, const char *name)
{
    if (!a->scale)
        return fc_fail(FC_ERR_NULL_ARG, FN ": %s.scale is NULL but the data it maps is FC_I8", name);
    if (!fc_dtype_is_float(a->dtype))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": %s.dtype must be FC_F32, FC_F16 or FC_BF16", name);
    if (a->stride_head < 0 || a->stride_dim < 0)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": %s has a negative stride", name);
    return FC_OK;
}

static fc_affine_view to_affine(const fc_affine *a)
{
    fc_affine_view v = {.scale = a->scale, .offset = a->offset, .dtype = a->dtype, .sn = a->stride_head,
                        .se = a->stride_dim};
    return v;
}

static fc_view to_view(const fc_tensor *t, bool packed)
{
    fc_view v = {.data = (char *)t->data, .dtype = t->dtype, .sb = packed ? 0 : t->stride_batch,
                 .sn = t->stride_head, .ss = t->stride_seq, .se = t->stride_dim};
    return v;
}

static fc_status check_sizes(const fc_attention_desc *d)
{
    if (d->batch < 1 || d->batch > FC_MAX_BATCH)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.batch must be in [1, %d], got %lld", FC_MAX_BATCH, (long long)d->batch);
    if (d->q_heads < 1 || d->q_heads > FC_MAX_HEADS)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.q_heads must be in [1, %d], got %lld", FC_MAX_HEADS, (long long)d->q_heads);
    if (d->kv_heads < 1 || d->kv_heads > d->q_heads || d->q_heads % d->kv_heads != 0)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv_heads must divide q_heads (%lld), got %lld",
                       (long long)d->q_heads, (long long)d->kv_heads);
    if (d->head_dim < 1 || d->head_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.head_dim must be in [1, %d], got %lld", FC_MAX_DIM, (long long)d->head_dim);
    if (d->v_head_dim < 0 || d->v_head_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.v_head_dim must be in [0, %d] (0 = head_dim), got %lld", FC_MAX_DIM,
                       (long long)d->v_head_dim);
    if (d->rope_dim < 0 || d->rope_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.rope_dim must be in [0, %d], got %lld", FC_MAX_DIM, (long long)d->rope_dim);
    if (d->packed) {
        if (!d->q_lens || !d->kv_lens)
            return fc_fail(FC_ERR_NULL_ARG, FN ": desc.%s is NULL but desc.packed needs per-batch lengths",
                           d->q_lens ? "kv_lens" : "q_lens");
    } else {
        if (d->q_len < 1 || d->q_len > FC_MAX_LEN)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.q_len must be in [1, %d], got %lld", FC_MAX_LEN, (long long)d->q_len);
        if (d->kv_len < 1 || d->kv_len > FC_MAX_LEN)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv_len must be in [1, %d], got %lld", FC_MAX_LEN, (long long)d->kv_len);
    }
    const int64_t caps[2] = {d->packed ? FC_MAX_LEN : d->q_len, d->packed ? FC_MAX_LEN : d->kv_len};
    const int64_t *lens[2] = {d->q_lens, d->kv_lens};
    const char *names[2] = {"q_lens", "kv_lens"};
    for (int s = 0; s < 2; s++)
        for (int64_t b = 0; lens[s] && b < d->batch; b++)
            if (lens[s][b] < 0 || lens[s][b] > caps[s])
                return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.%s[%lld] must be in [0, %lld], got %lld", names[s],
                               (long long)b, (long long)caps[s], (long long)lens[s][b]);
    return FC_OK;
}

static fc_status check_operands(const fc_attention_desc *d)
{
    fc_status st;
    const fc_kv_storage *kv = &d->kv;
    const bool paged = kv->block_table != NULL;
    if ((st = check_tensor(&d->q, "desc.q", d->packed)) ||
        (st = check_tensor_as(&d->k, "desc.k", d->packed || paged, true, !kv->k_batches)) ||
        (st = check_tensor_as(&d->v, "desc.v", d->packed || paged, true, !kv->v_batches)) ||
        (st = check_tensor_as(&d->out, "desc.out", d->packed, true, true)))
        return st;
    if (d->rope_dim > 0 && ((st = check_tensor(&d->q_rope, "desc.q_rope", d->packed)) ||
                            (st = check_tensor(&d->k_rope, "desc.k_rope", d->packed || paged))))
        return st;
    if ((d->k.dtype == FC_I8 && (st = check_affine(&kv->k_dequant, "desc.kv.k_dequant"))) ||
        (d->v.dtype == FC_I8 && (st = check_affine(&kv->v_dequant, "desc.kv.v_dequant"))) ||
        (d->out.dtype == FC_I8 && (st = check_affine(&d->out_quant, "desc.out_quant"))))
        return st;
    if ((kv->k_batches == NULL) != (kv->v_batches == NULL))
        return fc_fail(FC_ERR_NULL_ARG, FN ": desc.kv.%s is NULL; per-batch key and value tensors come together",
                       kv->k_batches ? "v_batches" : "k_batches");
    for (int64_t b = 0; kv->k_batches && b < d->batch; b++)
        if (!kv->k_batches[b] || !kv->v_batches[b])
            return fc_fail(FC_ERR_NULL_ARG, FN ": desc.kv.%s[%lld] is NULL", kv->k_batches[b] ? "v_batches" : "k_batches",
                           (long long)b);
    if (paged) {
        if (kv->k_batches || d->packed)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv.block_table cannot be combined with %s",
                           d->packed ? "desc.packed" : "desc.kv.k_batches");
        if (kv->block_size < 1 || kv->num_blocks < 1)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv.block_size and num_blocks must be >= 1, got %lld and %lld",
                           (long long)kv->block_size, (long long)kv->num_blocks);
        const int64_t need = (d->kv_len + kv->block_size - 1) / kv->block_size;
        if (kv->table_stride < need)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv.table_stride is %lld, kv_len %lld needs %lld blocks per batch",
                           (long long)kv->table_stride, (long long)d->kv_len, (long long)need);
    }
    return FC_OK;
}

/* An output must not overlap itself: sorted by stride, each dim must step past the previous. */
static fc_status check_out_layout(const char *fn, const char *name, const fc_tensor *t, const fc_attention_desc *d,
                                  int64_t heads, int64_t rows, int64_t width)
{
    int64_t ext[4] = {d->packed ? 1 : d->batch, heads, rows, width};
    int64_t str[4] = {t->stride_batch, t->stride_head, t->stride_seq, t->stride_dim};
    if (!fc_dims_disjoint(ext, str, 4))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s strides (%lld, %lld, %lld, %lld) make output elements overlap", fn, name,
                       (long long)str[0], (long long)str[1], (long long)str[2], (long long)str[3]);
    return FC_OK;
}

/* Rows along the sequence axis of query-side and kv-side operands. */
static void seq_rows(const fc_attention_desc *d, int64_t *q_rows, int64_t *kv_rows)
{
    *q_rows = d->q_len, *kv_rows = d->kv_len;
    if (d->packed) {
        *q_rows = *kv_rows = 0;
        for (int64_t b = 0; b < d->batch; b++)
            *q_rows += d->q_lens[b], *kv_rows += d->kv_lens[b];
    }
}

static fc_status check_options(const fc_attention_desc *d)
{
    if (!isfinite(d->scale))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.scale must be finite");
    if (!(d->softcap >= 0) || !isfinite(d->softcap))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.softcap must be finite and >= 0 (0 = off)");
    const fc_bias *bs = &d->bias;
    if (bs->data) {
        if (!fc_dtype_is_float(bs->dtype))
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias.dtype must be a float dtype");
        if (bs->order != FC_BIAS_AFTER_SCALE && bs->order != FC_BIAS_BEFORE_SCALE)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias.order is not an fc_bias_order");
        if (bs->rows < 1 || bs->cols < 1)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias.rows and cols must be >= 1");
        if (bs->stride_batch < 0 || bs->stride_head < 0 || bs->stride_row < 0 || bs->stride_col < 0)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias has a negative stride");
        if (bs->compressed && bs->stride_row == 0)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias.compressed needs stride_row != 0");
        if (bs->compressed && d->vis.prefix)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.bias.compressed cannot be combined with desc.vis.prefix");
    }
    if (d->alibi.slopes && (d->alibi.stride_batch < 0 || d->alibi.stride_head < 0))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.alibi has a negative stride");
    const fc_mask *mk = &d->vis.mask;
    if (mk->data) {
        if (mk->dtype != FC_BOOL && mk->dtype != FC_U8 && mk->dtype != FC_I8)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.mask.dtype must be FC_BOOL, FC_U8 or FC_I8");
        if (mk->stride_batch < 0 || mk->stride_head < 0 || mk->stride_row < 0 || mk->stride_col < 0)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.mask has a negative stride");
        if (mk->by_tokens && !d->packed)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.mask.by_tokens needs desc.packed");
    }
    const fc_window *ws[1] = {&d->vis.window};
    for (int64_t b = -1; b < (d->vis.batch_window ? d->batch : 0); b++) {
        const fc_window *w = b < 0 ? ws[0] : &d->vis.batch_window[b];
        if (w->enabled && w->align != FC_ALIGN_TOP_LEFT && w->align != FC_ALIGN_BOTTOM_RIGHT)
            return b < 0 ? fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.window.align is not an fc_align")
                         : fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.batch_window[%lld].align is not an fc_align", (long long)b);
    }
    for (int64_t b = 0; d->vis.prefix && b < d->batch; b++)
        if (d->vis.prefix[b] < 0)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.vis.prefix[%lld] must be >= 0, got %lld", (long long)b,
                           (long long)d->vis.prefix[b]);
    const fc_sparse *sp = &d->sparse;
    if (sp->indices) {
        if (sp->dtype != FC_I32 && sp->dtype != FC_I64)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.sparse.dtype must be FC_I32 or FC_I64");
        if (sp->count < 1 || sp->block_size < 1)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.sparse.count and block_size must be >= 1, got %lld and %lld",
                           (long long)sp->count, (long long)sp->block_size);
        if (sp->stride_batch < 0 || sp->stride_seq < 0 || sp->stride_head < 0 || sp->stride_entry < 0)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.sparse has a negative stride");
        const char *other = d->vis.window.enabled || d->vis.batch_window ? "desc.vis.window"
                            : d->vis.prefix                              ? "desc.vis.prefix"
                            : d->vis.mask.data                           ? "desc.vis.mask"
                            : d->kv_starts                               ? "desc.kv_starts"
                            : d->bias.data                               ? "desc.bias"
                            : d->alibi.slopes                            ? "desc.alibi"
                            : d->sink                                    ? "desc.sink"
                            : d->dropout.keep_bits && d->dropout.keep_prob < 1 ? "desc.dropout"
                                                                               : NULL;
        if (other)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.sparse cannot be combined with %s", other);
    }
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    if (!(kp > 0 && kp <= 1))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.dropout.keep_prob must be in (0, 1], got %g", kp);
    if (kp < 1 && !d->dropout.keep_bits)
        return fc_fail(FC_ERR_NULL_ARG, FN ": desc.dropout.keep_bits is NULL but keep_prob is %g", kp);
    if ((d->stats.max == NULL) != (d->stats.sum == NULL))
        return fc_fail(FC_ERR_NULL_ARG, FN ": desc.stats.%s is NULL; give both max and sum or neither",
                       d->stats.max ? "sum" : "max");
    if (d->stats.max) {
        if (d->stats.order != FC_STATS_HEAD_MAJOR && d->stats.order != FC_STATS_TOKEN_MAJOR &&
            d->stats.order != FC_STATS_KV_GROUP && d->stats.order != FC_STATS_KV_TOKEN_GROUP)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.stats.order is not an fc_stats_order");
        const bool grouped = d->stats.order == FC_STATS_KV_GROUP || d->stats.order == FC_STATS_KV_TOKEN_GROUP;
        if (d->stats.replicas < 0 || d->stats.replicas > 64 || (grouped && d->stats.replicas > 1))
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.stats.replicas must be in [0, 64] (1 for FC_STATS_KV_GROUP), got %lld",
                           (long long)d->stats.replicas);
    }
    return FC_OK;
}

/* Per-batch facts: lengths, offsets, visibility, pse alignment, dropout and statistics bases. */
static fc_status lower_batches(const fc_attention_desc *d, fc_problem *p)
{
    int64_t q_tok = 0, kv_tok = 0, drop = 0, stat = 0;
    const int64_t rep = p->stats.replicas;
    for (int64_t b = 0; b < d->batch; b++) {
        fc_batch *bt = &p->batch[b];
        bt->sq = d->q_lens ? d->q_lens[b] : d->q_len;
        bt->skv = d->kv_lens ? d->kv_lens[b] : d->kv_len;
        bt->q_rows = d->packed ? bt->sq : d->q_len;
        bt->q_tok = d->packed ? q_tok : 0;
        bt->kv_tok = d->packed ? kv_tok : 0;

        const fc_window *w = d->vis.batch_window ? &d->vis.batch_window[b] : &d->vis.window;
        fc_lower_window(bt, w->enabled, w->left, w->right, w->align == FC_ALIGN_BOTTOM_RIGHT,
                        fc_sat_sub(d->vis.kv_start, d->vis.q_start));
        bt->prefix = d->vis.prefix ? d->vis.prefix[b] : 0;
        bt->col_lo = d->kv_starts ? d->kv_starts[b] : 0;
        if (bt->col_lo < 0 || bt->col_lo > bt->skv)
            return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.kv_starts[%lld] must be in [0, %lld], got %lld", (long long)b,
                           (long long)bt->skv, (long long)bt->col_lo);
        bt->alibi_dpos = fc_sat_sub(d->vis.kv_start, d->vis.q_start);

        const fc_mask *mk = &d->vis.mask;
        bt->mask_base = mk->by_tokens ? bt->q_tok * mk->stride_row + bt->kv_tok * mk->stride_col : b * mk->stride_batch;

        const fc_bias *bs = &d->bias;
        if (bs->data) {
            bt->pse_base = b * bs->stride_batch;
            bt->pse_row_shift = bs->bottom_right && bs->stride_row ? bs->rows - bt->sq : 0;
            bt->pse_col_shift = bs->bottom_right ? bs->cols - bt->skv : 0;
            const fc_status st = fc_check_pse_extent(FN, "desc.bias", bt, b, bs->rows, bs->cols, bs->stride_row != 0,
                                                     bs->compressed);
            if (st != FC_OK)
                return st;
            if (bs->compressed && bt->sq > bs->rows && bt->vis_hi > 0)
                bt->vis_hi = 0; /* compressed rows are defined for j <= i only */
        }
        bt->drop_bit0 = drop;
        bt->stat_base = stat;
        q_tok += bt->sq;
        kv_tok += bt->skv;
        drop += d->q_heads * bt->sq * bt->skv;
        stat += d->q_heads * bt->q_rows * rep;
        p->stats.tokens += bt->q_rows;
        p->max_sq = bt->q_rows > p->max_sq ? bt->q_rows : p->max_sq;
        p->max_skv = bt->skv > p->max_skv ? bt->skv : p->max_skv;
    }
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    if (kp < 1 && d->dropout.keep_bits_bytes < (size_t)((drop + 7) / 8))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": desc.dropout.keep_bits_bytes is %zu, the problem needs %lld bytes",
                       d->dropout.keep_bits_bytes, (long long)((drop + 7) / 8));
    return FC_OK;
}

static fc_status lower(const fc_attention_desc *d, fc_problem *p)
{
    memset(p, 0, sizeof *p);
    p->B = d->batch;
    p->Nq = d->q_heads;
    p->Nkv = d->kv_heads;
    p->G = d->q_heads / d->kv_heads;
    p->Dqk = d->head_dim;
    p->Dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    p->Dr = d->rope_dim;
    p->q = to_view(&d->q, d->packed);
    p->k = to_view(&d->k, d->packed);
    p->v = to_view(&d->v, d->packed);
    p->out = to_view(&d->out, d->packed);
    if (p->Dr) {
        p->q_rope = to_view(&d->q_rope, d->packed);
        p->k_rope = to_view(&d->k_rope, d->packed);
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
                               .compress_rows = bs->compressed ? bs->rows : 0};
    }
    if (d->alibi.slopes)
        p->alibi = (fc_alibi_view){.slopes = d->alibi.slopes, .sb = d->alibi.stride_batch, .sn = d->alibi.stride_head,
                                   .sqrt_distance = d->alibi.sqrt_distance};
    p->sink = d->sink;
    if (d->vis.mask.data)
        p->mask = (fc_mask_view){.data = d->vis.mask.data, .sn = d->vis.mask.stride_head,
                                 .si = d->vis.mask.stride_row, .sj = d->vis.mask.stride_col};
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    if (kp < 1) {
        p->drop_bits = d->dropout.keep_bits;
        p->keep_prob = (float)kp;
    } else {
        p->keep_prob = 1.0f;
    }
    p->stats = (fc_stats_view){.max = d->stats.max, .sum = d->stats.sum, .order = d->stats.order,
                               .replicas = d->stats.replicas > 0 ? d->stats.replicas : 1};
    if (d->sparse.indices) {
        const fc_sparse *sp = &d->sparse;
        p->sparse = (fc_sparse_view){.data = sp->indices, .dtype = sp->dtype, .sb = d->packed ? 0 : sp->stride_batch,
                                     .si = sp->stride_seq, .sn = sp->stride_head, .sk = sp->stride_entry,
                                     .count = sp->count, .block_size = sp->block_size, .causal = sp->causal};
    }
    p->batch = calloc((size_t)p->B, sizeof(fc_batch));
    if (!p->batch)
        return fc_fail(FC_ERR_NO_MEMORY, FN ": out of host memory for %lld batch records", (long long)p->B);
    const fc_status st = lower_batches(d, p);
    if (st != FC_OK) {
        free(p->batch);
        p->batch = NULL;
    }
    return st;
}

/* Validation shared by the forward and backward plans. */
static fc_status check_desc(const fc_attention_desc *desc, const fc_options *options, fc_plan **plan)
{
    if (!desc)
        return fc_fail(FC_ERR_NULL_ARG, FN ": desc is NULL");
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, FN ": plan is NULL");
    *plan = NULL;
    fc_status st;
    if ((st = check_sizes(desc)) || (st = check_operands(desc)) || (st = check_options(desc)))
        return st;
    if (options && (options->threads < 0 || options->threads > 4096))
        return fc_fail(FC_ERR_INVALID_ARG, FN ": options.threads must be in [0, 4096], got %d", options->threads);
    return FC_OK;
}

fc_status fc_plan_create(const fc_attention_desc *desc, const fc_options *options, fc_plan **plan)
{
    fc_clear_error();
    fc_status st;
    if ((st = check_desc(desc, options, plan)))
        return st;
    int64_t q_rows, kv_rows;
    seq_rows(desc, &q_rows, &kv_rows);
    const int64_t dv = desc->v_head_dim ? desc->v_head_dim : desc->head_dim;
    if ((st = check_out_layout(FN, "desc.out", &desc->out, desc, desc->q_heads, q_rows, dv)))
        return st;
    fc_problem p;
    if ((st = lower(desc, &p)))
        return st;
    return fc_plan_from_problem(&p, FC_OP_FORWARD, options, plan);
}

#undef FN
#define FN "fc_plan_create_backward"

fc_status fc_plan_create_backward(const fc_attention_desc *desc, const fc_attention_grads *grads,
                                  const fc_options *options, fc_plan **plan)
{
    fc_clear_error();
    fc_status st;
    if ((st = check_desc(desc, options, plan)))
        return st;
    if (!grads)
        return fc_fail(FC_ERR_NULL_ARG, FN ": grads is NULL");
    if (!desc->stats.max)
        return fc_fail(FC_ERR_NULL_ARG, FN ": desc.stats.max and sum are NULL; the backward needs the forward's statistics");
    if ((st = check_tensor(&grads->d_out, "grads.d_out", desc->packed)) || (st = check_tensor(&grads->dq, "grads.dq", desc->packed)) ||
        (st = check_tensor(&grads->dk, "grads.dk", desc->packed)) || (st = check_tensor(&grads->dv, "grads.dv", desc->packed)))
        return st;
    if (desc->rope_dim > 0 && ((st = check_tensor(&grads->dq_rope, "grads.dq_rope", desc->packed)) ||
                               (st = check_tensor(&grads->dk_rope, "grads.dk_rope", desc->packed))))
        return st;
    if (desc->sink && !grads->dsink)
        return fc_fail(FC_ERR_NULL_ARG, FN ": grads.dsink is NULL but desc.sink is set");
    int64_t q_rows, kv_rows;
    seq_rows(desc, &q_rows, &kv_rows);
    const int64_t D = desc->head_dim, Dv = desc->v_head_dim ? desc->v_head_dim : D, Dr = desc->rope_dim;
    if ((st = check_out_layout(FN, "grads.dq", &grads->dq, desc, desc->q_heads, q_rows, D)) ||
        (st = check_out_layout(FN, "grads.dk", &grads->dk, desc, desc->kv_heads, kv_rows, D)) ||
        (st = check_out_layout(FN, "grads.dv", &grads->dv, desc, desc->kv_heads, kv_rows, Dv)))
        return st;
    if (Dr && ((st = check_out_layout(FN, "grads.dq_rope", &grads->dq_rope, desc, desc->q_heads, q_rows, Dr)) ||
               (st = check_out_layout(FN, "grads.dk_rope", &grads->dk_rope, desc, desc->kv_heads, kv_rows, Dr))))
        return st;
    fc_problem p;
    if ((st = lower(desc, &p)))
        return st;
    p.dout = to_view(&grads->d_out, desc->packed);
    p.dq = to_view(&grads->dq, desc->packed);
    p.dk = to_view(&grads->dk, desc->packed);
    p.dv = to_view(&grads->dv, desc->packed);
    if (Dr) {
        p.dq_rope = to_view(&grads->dq_rope, desc->packed);
        p.dk_rope = to_view(&grads->dk_rope, desc->packed);
    }
    p.dsink = desc->sink ? grads->dsink : NULL;
    return fc_plan_from_problem(&p, FC_OP_BACKWARD, options, plan);
}

fc_status fc_attention_backward(const fc_attention_desc *desc, const fc_attention_grads *grads)
{
    fc_plan *plan;
    fc_status st = fc_plan_create_backward(desc, grads, NULL, &plan);
    if (st != FC_OK)
        return st;
    size_t bytes = plan->workspace;
    void *ws = bytes ? malloc(bytes) : NULL;
    if (bytes && !ws) {
        fc_plan_destroy(plan);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_attention_backward: cannot allocate a %zu-byte workspace", bytes);
    }
    st = fc_plan_run(plan, NULL, ws, bytes);
    free(ws);
    fc_plan_destroy(plan);
    return st;
}

fc_status fc_plan_run(fc_plan *plan, const fc_attention_io *io, void *workspace, size_t workspace_bytes)
{
    fc_clear_error();
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, "fc_plan_run: plan is NULL");
    fc_problem p = plan->prob;
    if (io) {
#define REBIND(field, target, type)                                                                                    \
    if (io->field)                                                                                                     \
        target = (type)io->field;
        REBIND(q, p.q.data, char *)
        REBIND(k, p.k.data, char *)
        REBIND(v, p.v.data, char *)
        REBIND(q_rope, p.q_rope.data, char *)
        REBIND(k_rope, p.k_rope.data, char *)
        REBIND(out, p.out.data, char *)
        REBIND(bias, p.pse.data, const char *)
        REBIND(mask, p.mask.data, const uint8_t *)
        REBIND(slopes, p.alibi.slopes, const float *)
        REBIND(sink, p.sink, const float *)
        REBIND(keep_bits, p.drop_bits, const uint8_t *)
        REBIND(stats_max, p.stats.max, float *)
        REBIND(stats_sum, p.stats.sum, float *)
        REBIND(d_out, p.dout.data, char *)
        REBIND(dq, p.dq.data, char *)
        REBIND(dk, p.dk.data, char *)
        REBIND(dv, p.dv.data, char *)
        REBIND(dq_rope, p.dq_rope.data, char *)
        REBIND(dk_rope, p.dk_rope.data, char *)
        if (p.dsink)
            REBIND(dsink, p.dsink, float *)
#undef REBIND
    }
    return fc_plan_execute(plan, &p, workspace, workspace_bytes);
}

fc_status fc_attention(const fc_attention_desc *desc)
{
    fc_plan *plan;
    fc_status st = fc_plan_create(desc, NULL, &plan);
    if (st != FC_OK)
        return st;
    size_t bytes = plan->workspace;
    void *ws = bytes ? malloc(bytes) : NULL;
    if (bytes && !ws) {
        fc_plan_destroy(plan);
        return fc_fail(FC_ERR_NO_MEMORY, "fc_attention: cannot allocate a %zu-byte workspace", bytes);
    }
    st = fc_plan_run(plan, NULL, ws, bytes);
    free(ws);
    fc_plan_destroy(plan);
    return st;
}
