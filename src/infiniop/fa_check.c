/*
 * Create's tensor checks (semantics §7.4, §7.5): dtypes, then shapes, then strides.  Dtypes and
 * strides go in declaration order (out, q, k, v, mask); shapes start from q, which fixes the sizes,
 * then k, v, out, mask.  Sizes follow the limits of §1.6.
 */
#include <stdlib.h>

#include "core/lower.h"
#include "fa.h"

#define FN "infiniopCreateFlashAttentionDescriptor"
#define NAME(x) infini_fa_desc_names[x]
#define FA_MAX_BATCH 2097152
#define FA_MAX_HEADS 256
#define FA_MAX_LEN 1048576
#define FA_MAX_DIM 1024

typedef const struct InfiniopTensorDescriptor *tdesc;

static bool is_float(infiniDtype_t dt)
{
    return dt == INFINI_DTYPE_F16 || dt == INFINI_DTYPE_F32 || dt == INFINI_DTYPE_BF16;
}

/* BOOL, BYTE or any integer type. */
static bool is_mask_dtype(infiniDtype_t dt)
{
    return dt == INFINI_DTYPE_BOOL || dt == INFINI_DTYPE_BYTE || (dt >= INFINI_DTYPE_I8 && dt <= INFINI_DTYPE_U64);
}

static infiniStatus_t check_dtypes(const tdesc t[FA_TENSORS], infini_fa_geom *g)
{
    g->dtype = t[FA_OUT]->dtype;
    if (!is_float(g->dtype))
        return infini_fail(INFINI_STATUS_BAD_TENSOR_DTYPE, FN ": out_desc dtype must be F16, F32 or BF16, got %d",
                           (int)g->dtype);
    for (int x = FA_Q; x <= FA_V; x++)
        if (t[x]->dtype != g->dtype)
            return infini_fail(INFINI_STATUS_BAD_TENSOR_DTYPE, FN ": %s dtype must equal out_desc's (%d), got %d",
                               NAME(x), (int)g->dtype, (int)t[x]->dtype);
    if (t[FA_MASK] && !is_mask_dtype(t[FA_MASK]->dtype))
        return infini_fail(INFINI_STATUS_BAD_TENSOR_DTYPE, FN ": mask_desc dtype must be BOOL, BYTE or an integer type, got %d",
                           (int)t[FA_MASK]->dtype);
    g->fc = g->dtype == INFINI_DTYPE_F16 ? FC_F16 : g->dtype == INFINI_DTYPE_BF16 ? FC_BF16 : FC_F32;
    for (int x = 0; x < FA_TENSORS; x++)
        g->esize[x] = t[x] ? (int64_t)infini_dtype_size(t[x]->dtype) : 0;
    return INFINI_STATUS_SUCCESS;
}

/* Dimension k of a 3-D / 4-D sequence tensor as (batch, head, seq, dim); batch is 1 for 3-D. */
static int64_t dim(tdesc x, int k)
{
    if (x->ndim == 3)
        return k == 0 ? 1 : (int64_t)x->shape[k - 1];
    return (int64_t)x->shape[k];
}

static infiniStatus_t bad_dim(int x, const char *what, int64_t got, int64_t lo, int64_t hi)
{
    return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": %s %s must be in [%lld, %lld], got %lld", NAME(x), what,
                       (long long)lo, (long long)hi, (long long)got);
}

static infiniStatus_t must_equal(int x, const char *what, int64_t got, int64_t want, const char *from)
{
    if (got == want)
        return INFINI_STATUS_SUCCESS;
    return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": %s %s must equal %s (%lld), got %lld", NAME(x), what, from,
                       (long long)want, (long long)got);
}

#define IN_RANGE(x, what, v, lo, hi)                                                                                   \
    if ((v) < (lo) || (v) > (hi))                                                                                      \
        return bad_dim(x, what, v, lo, hi);
#define TRY(call)                                                                                                      \
    if ((st = (call)) != INFINI_STATUS_SUCCESS)                                                                        \
        return st;

static infiniStatus_t check_shapes(const tdesc t[FA_TENSORS], infini_fa_geom *g)
{
    infiniStatus_t st;
    const size_t r = t[FA_OUT]->ndim;
    if (r != 3 && r != 4)
        return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": out_desc must be 3-D or 4-D, got %zu dims", r);
    for (int x = FA_Q; x <= FA_V; x++)
        if (t[x]->ndim != r)
            return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": %s must have out_desc's %zu dims, got %zu", NAME(x), r,
                               t[x]->ndim);
    g->rank = (int)r;
    const tdesc q = t[FA_Q], k = t[FA_K], v = t[FA_V], o = t[FA_OUT];
    g->B = dim(q, 0), g->Nq = dim(q, 1), g->Sq = dim(q, 2), g->D = dim(q, 3);
    IN_RANGE(FA_Q, "batch", g->B, 1, FA_MAX_BATCH)
    IN_RANGE(FA_Q, "num_heads", g->Nq, 1, FA_MAX_HEADS)
    IN_RANGE(FA_Q, "seq_len", g->Sq, 1, FA_MAX_LEN)
    IN_RANGE(FA_Q, "head_dim", g->D, 1, FA_MAX_DIM)
    g->Nkv = dim(k, 1), g->Skv = dim(k, 2);
    TRY(must_equal(FA_K, "batch", dim(k, 0), g->B, "q_desc's"))
    IN_RANGE(FA_K, "num_heads", g->Nkv, 1, g->Nq)
    if (g->Nq % g->Nkv != 0)
        return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": k_desc num_heads (%lld) must divide q_desc's (%lld)",
                           (long long)g->Nkv, (long long)g->Nq);
    IN_RANGE(FA_K, "seq_len", g->Skv, 1, FA_MAX_LEN)
    TRY(must_equal(FA_K, "head_dim", dim(k, 3), g->D, "q_desc's"))
    g->Dv = dim(v, 3);
    TRY(must_equal(FA_V, "batch", dim(v, 0), g->B, "q_desc's"))
    TRY(must_equal(FA_V, "num_heads", dim(v, 1), g->Nkv, "k_desc's"))
    TRY(must_equal(FA_V, "seq_len", dim(v, 2), g->Skv, "k_desc's"))
    IN_RANGE(FA_V, "head_dim", g->Dv, 1, FA_MAX_DIM)
    TRY(must_equal(FA_OUT, "batch", dim(o, 0), g->B, "q_desc's"))
    TRY(must_equal(FA_OUT, "num_heads", dim(o, 1), g->Nq, "q_desc's"))
    TRY(must_equal(FA_OUT, "seq_len", dim(o, 2), g->Sq, "q_desc's"))
    TRY(must_equal(FA_OUT, "head_dim", dim(o, 3), g->Dv, "v_desc's"))

    const tdesc m = t[FA_MASK];
    g->has_mask = m != NULL;
    if (m) {
        /* (Skv) for every batch, or (B, Skv) with a 4-D query */
        if (m->ndim != 1 && !(m->ndim == 2 && r == 4))
            return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, FN ": mask_desc must be (%s%lld), got %zu dims",
                               r == 4 ? "[batch,] " : "", (long long)g->Skv, m->ndim);
        if (m->ndim == 2)
            TRY(must_equal(FA_MASK, "batch", (int64_t)m->shape[0], g->B, "q_desc's"))
        TRY(must_equal(FA_MASK, "length", (int64_t)m->shape[m->ndim - 1], g->Skv, "k_desc's seq_len"))
        g->mask_rows = m->ndim == 2 ? g->B : 1;
        g->mask_stride = m->ndim == 2 ? m->strides[0] : 0;
    }
    return INFINI_STATUS_SUCCESS;
}

/* Byte span [lo, hi) of a view relative to its base; false when it overflows. */
static bool view_span(tdesc x, int64_t esize, int64_t *lo, int64_t *hi)
{
    int64_t a = 0, b = 0, ext;
    for (size_t k = 0; k < x->ndim; k++) {
        if (__builtin_mul_overflow((int64_t)x->shape[k] - 1, (int64_t)x->strides[k], &ext) ||
            __builtin_add_overflow(ext < 0 ? a : b, ext, ext < 0 ? &a : &b))
            return false;
    }
    return !__builtin_add_overflow(b, 1, &b) && !__builtin_mul_overflow(a, esize, lo) &&
           !__builtin_mul_overflow(b, esize, hi);
}

static infiniStatus_t check_strides(const tdesc t[FA_TENSORS], infini_fa_geom *g)
{
    for (int x = 0; x < FA_TENSORS; x++) {
        if (!t[x])
            continue;
        if (t[x]->strides[t[x]->ndim - 1] != 1)
            return infini_fail(INFINI_STATUS_BAD_TENSOR_STRIDES, FN ": %s last dim must have stride 1, got %td", NAME(x),
                               t[x]->strides[t[x]->ndim - 1]);
        if (!view_span(t[x], g->esize[x], &g->lo[x], &g->hi[x]))
            return infini_fail(INFINI_STATUS_BAD_TENSOR_STRIDES, FN ": %s strides address beyond the int64 range", NAME(x));
    }
    for (int x = FA_OUT; x <= FA_V; x++) {
        const int off = g->rank - 3;
        g->stride[x][0] = off ? t[x]->strides[0] : 0;
        for (int k = 0; k < 3; k++)
            g->stride[x][k + 1] = t[x]->strides[off + k];
    }
    /* out must not overlap itself; flipping a dim's sign does not change that, so compare |strides| */
    const int64_t ext[4] = {g->B, g->Nq, g->Sq, g->Dv};
    int64_t mag[4];
    for (int k = 0; k < 4; k++)
        mag[k] = ext[k] > 1 ? llabs(g->stride[FA_OUT][k]) : 0; /* spans were checked: no INT64_MIN here */
    if (!fc_dims_disjoint(ext, mag, 4))
        return infini_fail(INFINI_STATUS_BAD_TENSOR_STRIDES, FN ": out_desc strides make output elements overlap");
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infini_fa_check(const tdesc t[FA_TENSORS], infini_fa_geom *g)
{
    infiniStatus_t st;
    TRY(check_dtypes(t, g))
    TRY(check_shapes(t, g))
    return check_strides(t, g);
}
