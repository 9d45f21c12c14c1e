/* Validation of the native description: every rule names the field at fault. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/dtype.h"
#include "../core/error.h"
#include "../core/lower.h"
#include "../core/plan.h"
#include "native.h"

static fc_status check_tensor_as(const char *fn, const fc_tensor *t, const char *name, bool packed, bool int8_ok, bool data_needed)
{
    if (!t->data && data_needed)
        return fc_fail(FC_ERR_NULL_ARG, "%s: %s.data is NULL", fn, name);
    if (!fc_dtype_is_float(t->dtype) && !(int8_ok && t->dtype == FC_I8))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s.dtype must be FC_F32, FC_F16 or FC_BF16%s, got %d", fn, name,
                       int8_ok ? " (or FC_I8 with its quantisation map)" : "", (int)t->dtype);
    if ((!packed && t->stride_batch < 0) || t->stride_head < 0 || t->stride_seq < 0 || t->stride_dim < 0)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s has a negative stride", fn, name);
    if ((uintptr_t)t->data % (uintptr_t)fc_dtype_bytes(t->dtype) != 0)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s.data is not aligned to its element size", fn, name);
    return FC_OK;
}

fc_status fc_native_check_tensor(const char *fn, const fc_tensor *t, const char *name, bool packed)
{
    return check_tensor_as(fn, t, name, packed, false, true);
}

static fc_status check_affine(const char *fn, const fc_affine *a, const char *name, const char *data_name)
{
    if (!a->scale)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s.dtype is FC_I8, which needs %s.scale (it is NULL)", fn, data_name, name);
    if (!fc_dtype_is_float(a->dtype))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s.dtype must be FC_F32, FC_F16 or FC_BF16", fn, name);
    if (a->stride_head < 0 || a->stride_dim < 0)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s has a negative stride", fn, name);
    return FC_OK;
}

static fc_status check_sizes(const char *fn, const fc_attention_desc *d)
{
    if (d->batch < 1 || d->batch > FC_MAX_BATCH)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.batch must be in [1, %d], got %lld", fn, FC_MAX_BATCH, (long long)d->batch);
    if (d->q_heads < 1 || d->q_heads > FC_MAX_HEADS)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.q_heads must be in [1, %d], got %lld", fn, FC_MAX_HEADS, (long long)d->q_heads);
    if (d->kv_heads < 1 || d->kv_heads > d->q_heads || d->q_heads % d->kv_heads != 0)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv_heads must divide q_heads (%lld), got %lld", fn,
                       (long long)d->q_heads, (long long)d->kv_heads);
    if (d->head_dim < 1 || d->head_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.head_dim must be in [1, %d], got %lld", fn, FC_MAX_DIM, (long long)d->head_dim);
    if (d->v_head_dim < 0 || d->v_head_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.v_head_dim must be in [0, %d] (0 = head_dim), got %lld", fn, FC_MAX_DIM,
                       (long long)d->v_head_dim);
    if (d->rope_dim < 0 || d->rope_dim > FC_MAX_DIM)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.rope_dim must be in [0, %d], got %lld", fn, FC_MAX_DIM, (long long)d->rope_dim);
    if (d->packed) {
        if (!d->q_lens || !d->kv_lens)
            return fc_fail(FC_ERR_NULL_ARG, "%s: desc.%s is NULL but desc.packed needs per-batch lengths", fn,
                           d->q_lens ? "kv_lens" : "q_lens");
    } else {
        if (d->q_len < 1 || d->q_len > FC_MAX_LEN)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.q_len must be in [1, %d], got %lld", fn, FC_MAX_LEN, (long long)d->q_len);
        if (d->kv_len < 1 || d->kv_len > FC_MAX_LEN)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv_len must be in [1, %d], got %lld", fn, FC_MAX_LEN, (long long)d->kv_len);
    }
    const int64_t caps[2] = {d->packed ? FC_MAX_LEN : d->q_len, d->packed ? FC_MAX_LEN : d->kv_len};
    const int64_t *lens[2] = {d->q_lens, d->kv_lens};
    const char *names[2] = {"q_lens", "kv_lens"};
    for (int s = 0; s < 2; s++)
        for (int64_t b = 0; lens[s] && b < d->batch; b++)
            if (lens[s][b] < 0 || lens[s][b] > caps[s])
                return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.%s[%lld] must be in [0, %lld], got %lld", fn, names[s],
                               (long long)b, (long long)caps[s], (long long)lens[s][b]);
    return FC_OK;
}

static fc_status check_operands(const char *fn, const fc_attention_desc *d)
{
    fc_status st;
    const fc_kv_storage *kv = &d->kv;
    const bool paged = kv->block_table != NULL;
    /* stride_batch is unused by packed batches and per-batch key/value tensors (k_rope stays one
     * tensor); paged caches step blocks by it */
    const bool kv_unbatched = d->packed || kv->k_batches;
    if ((st = fc_native_check_tensor(fn, &d->q, "desc.q", d->packed)) ||
        (st = check_tensor_as(fn, &d->k, "desc.k", kv_unbatched, true, !kv->k_batches)) ||
        (st = check_tensor_as(fn, &d->v, "desc.v", kv_unbatched, true, !kv->v_batches)) ||
        (st = check_tensor_as(fn, &d->out, "desc.out", d->packed, true, true)))
        return st;
    if (d->rope_dim > 0 && ((st = fc_native_check_tensor(fn, &d->q_rope, "desc.q_rope", d->packed)) ||
                            (st = fc_native_check_tensor(fn, &d->k_rope, "desc.k_rope", d->packed))))
        return st;
    if ((d->k.dtype == FC_I8 && (st = check_affine(fn, &kv->k_dequant, "desc.kv.k_dequant", "desc.k"))) ||
        (d->v.dtype == FC_I8 && (st = check_affine(fn, &kv->v_dequant, "desc.kv.v_dequant", "desc.v"))) ||
        (d->out.dtype == FC_I8 && (st = check_affine(fn, &d->out_quant, "desc.out_quant", "desc.out"))))
        return st;
    if ((kv->k_batches == NULL) != (kv->v_batches == NULL))
        return fc_fail(FC_ERR_NULL_ARG, "%s: desc.kv.%s is NULL; per-batch key and value tensors come together", fn,
                       kv->k_batches ? "v_batches" : "k_batches");
    for (int64_t b = 0; kv->k_batches && b < d->batch; b++)
        if (!kv->k_batches[b] || !kv->v_batches[b])
            return fc_fail(FC_ERR_NULL_ARG, "%s: desc.kv.%s[%lld] is NULL", fn, kv->k_batches[b] ? "v_batches" : "k_batches",
                           (long long)b);
    if (paged) {
        if (kv->k_batches || d->packed)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv.block_table cannot be combined with %s", fn,
                           d->packed ? "desc.packed" : "desc.kv.k_batches");
        if (kv->block_size < 1 || kv->num_blocks < 1)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv.block_size and num_blocks must be >= 1, got %lld and %lld", fn,
                           (long long)kv->block_size, (long long)kv->num_blocks);
        const int64_t need = fc_ceil_div(d->kv_len, kv->block_size);
        if (kv->table_stride < need)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.kv.table_stride is %lld, kv_len %lld needs %lld blocks per batch", fn,
                           (long long)kv->table_stride, (long long)d->kv_len, (long long)need);
    }
    return FC_OK;
}

/* An output must not overlap itself: sorted by stride, each dim must step past the previous. */
fc_status fc_native_check_out_layout(const char *fn, const char *name, const fc_tensor *t, const fc_attention_desc *d,
                                  int64_t heads, int64_t rows, int64_t width)
{
    int64_t ext[4] = {d->packed ? 1 : d->batch, heads, rows, width};
    int64_t str[4] = {t->stride_batch, t->stride_head, t->stride_seq, t->stride_dim};
    if (!fc_dims_disjoint(ext, str, 4))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s strides (%lld, %lld, %lld, %lld) make output elements overlap", fn, name,
                       (long long)str[0], (long long)str[1], (long long)str[2], (long long)str[3]);
    return FC_OK;
}

/* Kernels form byte offsets as index·stride sums: the highest one an operand of these extents
 * reaches must fit in int64 (the native face cannot check sizes, but it can check that).
 * kv 1: key/value storage (paged: blocks × slots; per-batch tensors: one batch each); kv 2: k_rope
 * (paged like key/value, but one tensor when key/value are per batch). */
fc_status fc_native_check_extent(const char *fn, const char *name, const fc_tensor *t, const fc_attention_desc *d,
                                 int kv, int64_t heads, int64_t rows, int64_t width)
{
    int64_t nb = d->packed ? 1 : d->batch;
    if (kv && d->kv.block_table)
        nb = d->kv.num_blocks, rows = d->kv.block_size < rows ? d->kv.block_size : rows;
    else if (kv == 1 && d->kv.k_batches)
        nb = 1;
    const int64_t ext[4] = {nb, heads, rows, width}, st[4] = {t->stride_batch, t->stride_head, t->stride_seq, t->stride_dim};
    int64_t hi = 0, step;
    bool over = false;
    for (int k = 0; k < 4; k++)
        if (ext[k] > 1)
            over = over || __builtin_mul_overflow(ext[k] - 1, st[k], &step) || __builtin_add_overflow(hi, step, &hi);
    if (over || __builtin_add_overflow(hi, 1, &hi) || __builtin_mul_overflow(hi, fc_dtype_bytes(t->dtype), &hi))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: %s strides (%lld, %lld, %lld, %lld) reach beyond int64 byte offsets for "
                       "[%lld, %lld, %lld, %lld] elements", fn, name, (long long)st[0], (long long)st[1],
                       (long long)st[2], (long long)st[3], (long long)nb, (long long)heads, (long long)rows,
                       (long long)width);
    return FC_OK;
}

fc_status fc_native_check_extents(const char *fn, const fc_attention_desc *d, int64_t q_rows, int64_t kv_rows)
{
    const int64_t D = d->head_dim, Dv = d->v_head_dim ? d->v_head_dim : D, Dr = d->rope_dim;
    fc_status st;
    if ((st = fc_native_check_extent(fn, "desc.q", &d->q, d, 0, d->q_heads, q_rows, D)) ||
        (st = fc_native_check_extent(fn, "desc.k", &d->k, d, 1, d->kv_heads, kv_rows, D)) ||
        (st = fc_native_check_extent(fn, "desc.v", &d->v, d, 1, d->kv_heads, kv_rows, Dv)) ||
        (st = fc_native_check_extent(fn, "desc.out", &d->out, d, 0, d->q_heads, q_rows, Dv)))
        return st;
    if (Dr && ((st = fc_native_check_extent(fn, "desc.q_rope", &d->q_rope, d, 0, d->q_heads, q_rows, Dr)) ||
               (st = fc_native_check_extent(fn, "desc.k_rope", &d->k_rope, d, 2, d->kv_heads, kv_rows, Dr))))
        return st;
    return FC_OK;
}

/* Rows along the sequence axis of query-side and kv-side operands. */
void fc_native_seq_rows(const fc_attention_desc *d, int64_t *q_rows, int64_t *kv_rows)
{
    *q_rows = d->q_len, *kv_rows = d->kv_len;
    if (d->packed) {
        *q_rows = *kv_rows = 0;
        for (int64_t b = 0; b < d->batch; b++)
            *q_rows += d->q_lens[b], *kv_rows += d->kv_lens[b];
    }
}

static fc_status check_options(const char *fn, const fc_attention_desc *d)
{
    if (!fc_scale_fits(d->scale))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.scale must be " FC_SCALE_RULE ", got %g", fn, d->scale);
    if (!(d->softcap >= 0) || !isfinite(d->softcap))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.softcap must be finite and >= 0 (0 = off)", fn);
    const fc_bias *bs = &d->bias;
    if (bs->data) {
        if (!fc_dtype_is_float(bs->dtype))
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias.dtype must be a float dtype", fn);
        if (bs->order != FC_BIAS_AFTER_SCALE && bs->order != FC_BIAS_BEFORE_SCALE)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias.order is not an fc_bias_order", fn);
        if (bs->rows < 1 || bs->cols < 1)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias.rows and cols must be >= 1", fn);
        if (bs->stride_batch < 0 || bs->stride_head < 0 || bs->stride_row < 0 || bs->stride_col < 0)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias has a negative stride", fn);
        if (bs->compressed && bs->stride_row == 0)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias.compressed needs stride_row != 0", fn);
        if (bs->compressed && d->vis.prefix)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.bias.compressed cannot be combined with desc.vis.prefix", fn);
    }
    if (d->alibi.slopes && (d->alibi.stride_batch < 0 || d->alibi.stride_head < 0))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.alibi has a negative stride", fn);
    const fc_mask *mk = &d->vis.mask;
    if (mk->data) {
        if (mk->dtype != FC_BOOL && mk->dtype != FC_U8 && mk->dtype != FC_I8)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.mask.dtype must be FC_BOOL, FC_U8 or FC_I8", fn);
        if (mk->stride_batch < 0 || mk->stride_head < 0 || mk->stride_row < 0 || mk->stride_col < 0)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.mask has a negative stride", fn);
        if (mk->by_tokens && !d->packed)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.mask.by_tokens needs desc.packed", fn);
    }
    const fc_window *ws[1] = {&d->vis.window};
    for (int64_t b = -1; b < (d->vis.batch_window ? d->batch : 0); b++) {
        const fc_window *w = b < 0 ? ws[0] : &d->vis.batch_window[b];
        if (w->enabled && w->align != FC_ALIGN_TOP_LEFT && w->align != FC_ALIGN_BOTTOM_RIGHT)
            return b < 0 ? fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.window.align is not an fc_align", fn)
                         : fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.batch_window[%lld].align is not an fc_align", fn, (long long)b);
    }
    for (int64_t b = 0; d->vis.prefix && b < d->batch; b++)
        if (d->vis.prefix[b] < 0)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.vis.prefix[%lld] must be >= 0, got %lld", fn, (long long)b,
                           (long long)d->vis.prefix[b]);
    const fc_sparse *sp = &d->sparse;
    if (sp->indices) {
        if (sp->dtype != FC_I32 && sp->dtype != FC_I64)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.sparse.dtype must be FC_I32 or FC_I64", fn);
        if (sp->count < 1 || sp->block_size < 1)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.sparse.count and block_size must be >= 1, got %lld and %lld", fn,
                           (long long)sp->count, (long long)sp->block_size);
        if (sp->stride_batch < 0 || sp->stride_seq < 0 || sp->stride_head < 0 || sp->stride_entry < 0)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.sparse has a negative stride", fn);
        const char *other = d->vis.window.enabled || d->vis.batch_window ? "desc.vis.window"
                            : d->vis.prefix                              ? "desc.vis.prefix"
                            : d->vis.mask.data                           ? "desc.vis.mask"
                            : d->kv_starts                               ? "desc.kv_starts"
                            : d->bias.data                               ? "desc.bias"
                            : d->alibi.slopes                            ? "desc.alibi"
                            : d->sink                                    ? "desc.sink"
                            : (d->dropout.keep_bits || d->dropout.generate) && d->dropout.keep_prob < 1 ? "desc.dropout"
                                                                               : NULL;
        if (other)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.sparse cannot be combined with %s", fn, other);
    }
    const double kp = d->dropout.keep_prob == 0 ? 1.0 : d->dropout.keep_prob;
    if (!(kp > 0 && kp <= 1))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.dropout.keep_prob must be in (0, 1], got %g", fn, kp);
    if (kp < 1 && !d->dropout.keep_bits && !d->dropout.generate)
        return fc_fail(FC_ERR_NULL_ARG, "%s: desc.dropout.keep_bits is NULL but keep_prob is %g", fn, kp);
    if (d->dropout.keep_bits && d->dropout.generate)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.dropout has keep_bits and generate; give one of them", fn);
    if ((d->stats.max == NULL) != (d->stats.sum == NULL))
        return fc_fail(FC_ERR_NULL_ARG, "%s: desc.stats.%s is NULL; give both max and sum or neither", fn,
                       d->stats.max ? "sum" : "max");
    if (d->stats.max) {
        if (d->stats.order != FC_STATS_HEAD_MAJOR && d->stats.order != FC_STATS_TOKEN_MAJOR &&
            d->stats.order != FC_STATS_KV_GROUP && d->stats.order != FC_STATS_KV_TOKEN_GROUP)
            return fc_fail(FC_ERR_INVALID_ARG, "%s: desc.stats.order is not an fc_stats_order", fn);
        const bool grouped = d->stats.order == FC_STATS_KV_GROUP || d->stats.order == FC_STATS_KV_TOKEN_GROUP;
        if (d->stats.replicas < 0 || d->stats.replicas > 64 || (grouped && d->stats.replicas > 1))
            return fc_fail(FC_ERR_INVALID_ARG,
                           "%s: desc.stats.replicas must be in [0, 64], and 1 with desc.stats.order FC_STATS_KV_GROUP or FC_STATS_KV_TOKEN_GROUP; got %lld", fn,
                           (long long)d->stats.replicas);
    }
    return FC_OK;
}

/* Validation shared by the forward and backward plans. */
fc_status fc_native_check_desc(const char *fn, const fc_attention_desc *desc, const fc_options *options, fc_plan **plan)
{
    if (!desc)
        return fc_fail(FC_ERR_NULL_ARG, "%s: desc is NULL", fn);
    if (!plan)
        return fc_fail(FC_ERR_NULL_ARG, "%s: plan is NULL", fn);
    *plan = NULL;
    fc_status st;
    if ((st = check_sizes(fn, desc)) || (st = check_operands(fn, desc)) || (st = check_options(fn, desc)))
        return st;
    if (options && (options->threads < 0 || options->threads > 4096))
        return fc_fail(FC_ERR_INVALID_ARG, "%s: options.threads must be in [0, 4096], got %d", fn, options->threads);
    if (options && options->out_tolerance != FC_F32 && options->out_tolerance != FC_F16 &&
        options->out_tolerance != FC_BF16)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: options.out_tolerance must be FC_F32, FC_F16 or FC_BF16, got %d", fn,
                       (int)options->out_tolerance);
    if (options && options->backend != FC_BACKEND_DEFAULT && options->backend != FC_BACKEND_CPU &&
        options->backend != FC_BACKEND_CUDA)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: options.backend is not an fc_backend, got %d", fn, (int)options->backend);
    return FC_OK;
}
