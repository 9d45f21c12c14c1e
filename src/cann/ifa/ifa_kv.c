/*
 * IncreFlashAttentionV4's query, key and value sizes (semantics §4.2, §4.3): the tensor lists
 * (one full-batch tensor, B per-batch tensors, or one paged cache), the kv head count, GQA limits
 * and the paged cache forms, and the strided views of the lists.
 */
#include <stdio.h>
#include <string.h>

#include "cann/common/errmsg.h"
#include "ifa.h"
#include "cann/common/objects.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

static int seq_axis(fa_layout l) { return l == FA_LAYOUT_BNSD ? 2 : 1; }

/* ---- capture ------------------------------------------------------------------------------------ */

aclnnStatus ifa_kv_capture(ifa_state *s, int which)
{
    const ifa_param id = which ? IFA_VALUE : IFA_KEY;
    const char *name = ifa_name(s, id);
    const aclTensorList *l = cann_arg_list(&ifa_fields, s->c, id);
    ifa_list *out = &s->kv[which];
    if (!cann_tensor_list_live(l))
        return INVALID("%s: %s is not a live aclTensorList (destroyed or foreign handle %p)", s->fn, name,
                       (const void *)l);
    if (l->size == 0)
        return INVALID("%s: %s must hold 1 tensor or one tensor per batch, got an empty list", s->fn, name);
    if (l->size > IFA_MAX_LIST)
        return INVALID("%s: %s must hold 1 tensor or one per batch (at most %d batches in list form), got %llu tensors",
                       s->fn, name, IFA_MAX_LIST, (unsigned long long)l->size);
    out->count = l->size;
    const aclDataType ok[] = {s->t[IFA_QUERY].dtype, ACL_INT8};
    for (uint64_t k = 0; k < l->size; k++) {
        snprintf(out->names[k], sizeof out->names[k], "%s[%llu]", name, (unsigned long long)k);
        const char *ek = out->names[k];
        if (fc_rt_registry_serial(l->value[k], &cann_kind_tensor) != l->serial[k])
            return INVALID("%s: %s is not a live aclTensor (the tensor the list was made with has been destroyed)",
                           s->fn, ek);
        aclnnStatus st = cann_operand_capture(s->fn, ek, l->value[k], false, &out->el[k]);
        if (st == ACLNN_SUCCESS)
            st = cann_check_dtype(&out->el[k], ok, 2);
        if (st == ACLNN_SUCCESS && k > 0)
            st = cann_check_same_dtype(&out->el[k], &out->el[0]);
        if (st != ACLNN_SUCCESS)
            return st;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ifa_kv_match(ifa_state *s)
{
    const ifa_list *k = &s->kv[0], *v = &s->kv[1];
    if (v->count != k->count)
        return INVALID("%s: %s must hold as many tensors as %s (%llu), got %llu", s->fn, ifa_name(s, IFA_VALUE),
                       ifa_name(s, IFA_KEY), (unsigned long long)k->count, (unsigned long long)v->count);
    for (uint64_t e = 0; e < k->count; e++) {
        aclnnStatus st = cann_check_same_dtype(&v->el[e], &k->el[e]);
        if (st == ACLNN_SUCCESS)
            st = cann_check_shape(&v->el[e], k->el[e].dims, k->el[e].rank);
        if (st != ACLNN_SUCCESS)
            return st;
    }
    return ACLNN_SUCCESS;
}

/* ---- sizes --------------------------------------------------------------------------------------- */

aclnnStatus ifa_query_geom(ifa_state *s)
{
    ifa_geom *g = &s->g;
    const cann_operand *q = &s->t[IFA_QUERY];
    const char *hn = ifa_name(s, IFA_NUM_HEADS);
    char sh[160];
    aclnnStatus st = cann_check_rank(q, fa_layout_rank(g->layout));
    if (st != ACLNN_SUCCESS)
        return st;
    cann_shape_str(q->dims, q->rank, sh, sizeof sh);
    if (q->dims[seq_axis(g->layout)] != 1)
        return INVALID("%s: %s sequence axis S must be 1 (one new token per batch) in layout %s, got shape %s", s->fn,
                       q->name, fa_layout_name(g->layout), sh);
    g->B = q->dims[0];
    if (g->B > IFA_MAX_BATCH)
        return INVALID("%s: %s batch size B must be in [1, %d], got %lld", s->fn, q->name, IFA_MAX_BATCH, (long long)g->B);
    if (g->layout == FA_LAYOUT_BSH) {
        if (q->dims[2] % s->c->num_heads != 0)
            return INVALID("%s: %s hidden size H = %lld must be a multiple of %s (%lld)", s->fn, q->name,
                           (long long)q->dims[2], hn, (long long)s->c->num_heads);
        g->N1 = s->c->num_heads;
        g->D = q->dims[2] / g->N1;
    } else {
        g->N1 = q->dims[g->layout == FA_LAYOUT_BNSD ? 1 : 2];
        g->D = q->dims[3];
        if (g->N1 != s->c->num_heads)
            return INVALID("%s: %s must equal the head count of %s (N1 = %lld), got %lld", s->fn, hn, q->name,
                           (long long)g->N1, (long long)s->c->num_heads);
    }
    if (g->D > FA_MAX_DIM)
        return INVALID("%s: %s head dim D must be in [1, %d], got %lld (shape %s)", s->fn, q->name, FA_MAX_DIM,
                       (long long)g->D, sh);
    return ACLNN_SUCCESS;
}

/* Where N2 comes from, for messages. */
static const char *n2_source(const ifa_state *s)
{
    return s->c->num_kv_heads ? "numKeyValueHeads" : "numHeads (numKeyValueHeads is 0)";
}

/* One element of a dense (non-paged) list in the call's layout. */
static aclnnStatus dense_element(const ifa_state *s, const cann_operand *e)
{
    const ifa_geom *g = &s->g;
    char sh[160];
    aclnnStatus st = cann_check_rank(e, fa_layout_rank(g->layout));
    if (st != ACLNN_SUCCESS)
        return st;
    cann_shape_str(e->dims, e->rank, sh, sizeof sh);
    const int64_t want_b = g->per_batch ? 1 : g->B;
    if (e->dims[0] != want_b)
        return INVALID("%s: %s batch size must be %lld (%s), got shape %s", s->fn, e->name, (long long)want_b,
                       g->per_batch ? "one tensor per batch" : "the query batch size B", sh);
    if (g->layout == FA_LAYOUT_BSH) {
        if (e->dims[2] != g->N2 * g->D)
            return INVALID("%s: %s hidden size must be N2·D = %lld·%lld (N2 from %s), got shape %s", s->fn, e->name,
                           (long long)g->N2, (long long)g->D, n2_source(s), sh);
    } else {
        const int64_t heads = e->dims[g->layout == FA_LAYOUT_BNSD ? 1 : 2];
        if (heads != g->N2)
            return INVALID("%s: %s head count must equal N2 = %lld (from %s), got shape %s", s->fn, e->name,
                           (long long)g->N2, n2_source(s), sh);
        if (e->dims[3] != g->D)
            return INVALID("%s: %s head dim must equal the query head dim D = %lld, got shape %s", s->fn, e->name,
                           (long long)g->D, sh);
    }
    if (e->dims[seq_axis(g->layout)] > FA_MAX_LEN)
        return INVALID("%s: %s sequence length must be in [1, %d], got shape %s", s->fn, e->name, FA_MAX_LEN, sh);
    return ACLNN_SUCCESS;
}

/* The paged cache: (blockNum, blockSize, N2·D) in every layout, or (blockNum, N2, blockSize, D) with BNSD. */
static aclnnStatus cache_element(ifa_state *s, const cann_operand *e)
{
    ifa_geom *g = &s->g;
    char sh[160];
    cann_shape_str(e->dims, e->rank, sh, sizeof sh);
    if (e->rank == 4 && g->layout != FA_LAYOUT_BNSD)
        return INVALID("%s: %s: the cache form (blockNum, N2, blockSize, D) needs %s \"BNSD\", got \"%s\" with shape %s",
                       s->fn, e->name, ifa_name(s, IFA_LAYOUT), fa_layout_name(g->layout), sh);
    if (e->rank != 3 && e->rank != 4)
        return INVALID("%s: %s must be a paged cache (blockNum, blockSize, N2·D) or (blockNum, N2, blockSize, D), got "
                       "shape %s",
                       s->fn, e->name, sh);
    g->cache4d = e->rank == 4;
    g->blocks = e->dims[0];
    if (g->cache4d && (e->dims[1] != g->N2 || e->dims[3] != g->D))
        return INVALID("%s: %s must have shape (blockNum, N2 = %lld, blockSize, D = %lld) (N2 from %s), got %s", s->fn,
                       e->name, (long long)g->N2, (long long)g->D, n2_source(s), sh);
    if (!g->cache4d && e->dims[2] != g->N2 * g->D)
        return INVALID("%s: %s must have shape (blockNum, blockSize, N2·D = %lld) (N2 = %lld from %s), got %s", s->fn,
                       e->name, (long long)(g->N2 * g->D), (long long)g->N2, n2_source(s), sh);
    return ACLNN_SUCCESS;
}

/* Per-batch lists are one view with per-batch base addresses, so their elements must agree on the
 * strides of every dimension they extend along (flashc: the core has one stride set per operand). */
static bool common_strides(const ifa_list *l, int64_t st[CANN_MAX_RANK], int *bad_el, int *bad_dim)
{
    const int rank = l->el[0].rank;
    for (int d = 0; d < rank; d++) {
        st[d] = l->el[0].strides[d];
        bool set = false;
        for (uint64_t k = 0; k < l->count; k++) {
            const cann_operand *e = &l->el[k];
            if (e->dims[d] < 2)
                continue;
            if (set && e->strides[d] != st[d]) {
                *bad_el = (int)k, *bad_dim = d;
                return false;
            }
            st[d] = e->strides[d], set = true;
        }
    }
    return true;
}

aclnnStatus ifa_kv_geom(ifa_state *s)
{
    ifa_geom *g = &s->g;
    const ifa_list *k = &s->kv[0];
    const char *kn = ifa_name(s, IFA_KEY), *nkv = ifa_name(s, IFA_NUM_KV_HEADS);
    g->N2 = s->c->num_kv_heads ? s->c->num_kv_heads : g->N1;
    if (g->N1 % g->N2 != 0)
        return INVALID("%s: %s (N2 = %lld) must divide %s (N1 = %lld)", s->fn, nkv, (long long)g->N2,
                       ifa_name(s, IFA_NUM_HEADS), (long long)g->N1);
    if (g->N1 / g->N2 > IFA_MAX_GROUP)
        return INVALID("%s: %s / %s must be at most %d, got %lld / %lld", s->fn, ifa_name(s, IFA_NUM_HEADS), nkv,
                       IFA_MAX_GROUP, (long long)g->N1, (long long)g->N2);
    g->paged = s->t[IFA_BLOCK_TABLE].present;
    if (g->paged) {
        if (k->count != 1)
            return INVALID("%s: %s must hold exactly 1 tensor (the cache) with page attention, got %llu tensors", s->fn,
                           kn, (unsigned long long)k->count);
        return cache_element(s, &k->el[0]);
    }
    if (k->count != 1 && k->count != (uint64_t)g->B)
        return INVALID("%s: %s must hold 1 tensor or B = %lld tensors (one per batch), got %llu tensors", s->fn, kn,
                       (long long)g->B, (unsigned long long)k->count);
    g->per_batch = k->count > 1;
    for (uint64_t e = 0; e < k->count; e++) {
        const aclnnStatus st = dense_element(s, &k->el[e]);
        if (st != ACLNN_SUCCESS)
            return st;
    }
    for (int w = 0; g->per_batch && w < 2; w++) {
        int64_t st[CANN_MAX_RANK];
        int be = 0, bd = 0;
        if (!common_strides(&s->kv[w], st, &be, &bd))
            return INVALID("%s: %s stride of dim %d is %lld, but %s has %lld: flashc reads the tensors of a per-batch "
                           "list through one stride set (differing strides are not supported)",
                           s->fn, s->kv[w].el[be].name, bd, (long long)s->kv[w].el[be].strides[bd],
                           s->kv[w].el[0].name, (long long)st[bd]);
    }
    return ACLNN_SUCCESS;
}

int64_t ifa_seq_len(const ifa_state *s, int64_t b)
{
    const ifa_geom *g = &s->g;
    if (g->paged)
        return g->W * g->block_size;
    const cann_operand *e = &s->kv[0].el[g->per_batch ? b : 0];
    return e->dims[seq_axis(g->layout)];
}

aclnnStatus ifa_paged_geom(ifa_state *s)
{
    ifa_geom *g = &s->g;
    if (!g->paged) {
        g->s_max = 0;
        for (int64_t b = 0; b < g->B; b++) {
            const int64_t sb = ifa_seq_len(s, b);
            g->s_max = sb > g->s_max ? sb : g->s_max;
        }
        return ACLNN_SUCCESS;
    }
    const cann_operand *cache = &s->kv[0].el[0], *bt = &s->t[IFA_BLOCK_TABLE];
    const char *bsn = ifa_name(s, IFA_BLOCK_SIZE);
    const int64_t bs = s->c->block_size, cache_bs = cache->dims[g->cache4d ? 2 : 1];
    char sh[160];
    if (bs < 1 || bs > IFA_MAX_BLOCK)
        return INVALID("%s: %s must be in [1, %d] with page attention, got %lld", s->fn, bsn, IFA_MAX_BLOCK, (long long)bs);
    if (bs != cache_bs)
        return INVALID("%s: %s must equal the block dimension of %s (%lld, shape %s), got %lld", s->fn, bsn, cache->name,
                       (long long)cache_bs, cann_shape_str(cache->dims, cache->rank, sh, sizeof sh), (long long)bs);
    g->block_size = bs;
    if (bt->dims[0] != g->B)
        return INVALID("%s: %s must have shape (B = %lld, maxBlockNumPerSeq), got %s", s->fn, bt->name, (long long)g->B,
                       cann_shape_str(bt->dims, bt->rank, sh, sizeof sh));
    g->W = bt->dims[1];
    if (g->W > 1 && bt->strides[1] != 1)
        return INVALID("%s: %s entries of one batch must be adjacent (stride 1 along maxBlockNumPerSeq), got stride %lld "
                       "(flashc reads block-table rows as contiguous)",
                       s->fn, bt->name, (long long)bt->strides[1]);
    if (__builtin_mul_overflow(g->W, bs, &g->s_max))
        return INVALID("%s: %s width %lld times %s %lld overflows int64", s->fn, bt->name, (long long)g->W, bsn,
                       (long long)bs);
    return ACLNN_SUCCESS;
}

/* ---- views --------------------------------------------------------------------------------------- */

fc_view ifa_kv_view(const ifa_state *s, int which)
{
    const ifa_geom *g = &s->g;
    const ifa_list *l = &s->kv[which];
    cann_operand e = l->el[0];
    if (g->paged) {
        const int64_t *st = e.strides;
        fc_view v = {.data = e.data, .dtype = cann_fc_dtype(e.dtype), .sb = st[0]};
        if (g->cache4d)
            v.sn = st[1], v.ss = st[2], v.se = st[3];
        else
            v.ss = st[1], v.sn = g->D * st[2], v.se = st[2];
        return v;
    }
    if (g->per_batch) {
        int be, bd;
        common_strides(l, e.strides, &be, &bd);
    }
    const fa_geom fg = {.layout = g->layout};
    return fa_seq_view(&fg, &e, g->D);
}
