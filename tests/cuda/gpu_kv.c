/* The decode storage forms of a gpu_case (gpu_kv.h). */
#include "gpu_kv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/halfconv.h"

static tc_dtype gc_kv_tc(fc_dtype dt) { return dt == FC_BF16 ? TC_BF16 : dt == FC_F16 ? TC_F16 : TC_F32; }

/* A host buffer with a device twin, owned by the state (its index, −1 on failure). */
static int gc_kv_buf(gc_kv_state *st, size_t bytes)
{
    if (st->n == GC_KV_BUFS)
        return -1;
    void *h = calloc(1, bytes ? bytes : 1), *d = NULL;
    if (!h || cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) {
        free(h);
        return -1;
    }
    st->h[st->n] = h, st->d[st->n] = d;
    return st->n++;
}

static void gc_kv_upload(gc_kv_state *st, int i, size_t bytes) { cudaMemcpy(st->d[i], st->h[i], bytes, cudaMemcpyHostToDevice); }

/* Element (b, n, s, e) of a padded-batch tensor. */
static char *gc_at(const fc_tensor *t, size_t es, int64_t b, int64_t n, int64_t s, int64_t e)
{
    return (char *)t->data + (b * t->stride_batch + n * t->stride_head + s * t->stride_seq + e * t->stride_dim) * (int64_t)es;
}

/* A "hidden" filler: NaN for floats, the int8 extreme otherwise (neither may reach a result). */
static void gc_fill_hidden(void *buf, fc_dtype dt, int64_t n)
{
    if (dt == FC_I8)
        memset(buf, 0x7F, (size_t)n);
    else
        for (int64_t i = 0; i < n; i++)
            tc_store(gc_kv_tc(dt), buf, i, NAN);
}

/* One operand (K or V, d features) from its contiguous form src into the case's storage; writes
 * the host and device tensors. */
static bool gc_kv_operand(const gc_case *c, gc_kv_state *st, const fc_tensor *src, fc_dtype dt, int d, int S, tc_rng *r,
                          bool is_v, fc_tensor *th, fc_tensor *td)
{
    const size_t es = fc_dtype_size(dt), ses = fc_dtype_size(c->dt);
    const int B = c->B, N = c->Nkv, P = c->kv.left_pad;
    /* the value of (b, n, s, e): the case's own, or a fresh int8 */
    #define SRC_COPY(dst, b, n, s, e)                                                                            \
        do {                                                                                                     \
            if (dt == FC_I8)                                                                                     \
                *(int8_t *)(dst) = (int8_t)tc_rng_int(r, -128, 127);                                             \
            else                                                                                                 \
                memcpy((dst), gc_at(src, ses, b, n, s, e), es);                                                  \
        } while (0)
    *th = (fc_tensor){NULL, dt, 0, 0, 0, 1};
    if (c->kv.page > 0) {
        const int bs = c->kv.page, w = (S + bs - 1) / bs + 1;
        const int64_t blocks = (int64_t)B * (w - 1) + 2;
        th->stride_batch = (int64_t)N * bs * d;
        th->stride_head = c->kv.heads_major ? (int64_t)bs * d : d;
        th->stride_seq = c->kv.heads_major ? d : (int64_t)N * d;
        const int cache = gc_kv_buf(st, (size_t)(blocks * th->stride_batch) * es);
        if (cache < 0)
            return false;
        gc_fill_hidden(st->h[cache], dt, blocks * th->stride_batch);
        if (!st->table_h) { /* one table for K and V: block k of batch b is a shuffled block */
            const int t = gc_kv_buf(st, (size_t)B * w * sizeof(int32_t));
            if (t < 0)
                return false;
            st->table_h = st->h[t], st->table_entries = (int64_t)B * w, st->blocks = blocks;
            int32_t *perm = malloc((size_t)blocks * sizeof *perm);
            tc_rng pr = tc_rng_seed(c->seed ^ 0x9E3779B9u); /* its own stream: the values match the contiguous case's */
            for (int64_t i = 0; i < blocks; i++)
                perm[i] = (int32_t)i;
            for (int64_t i = blocks - 1; i > 0; i--) {
                const int64_t j = tc_rng_int(&pr, 0, i);
                const int32_t x = perm[i];
                perm[i] = perm[j], perm[j] = x;
            }
            for (int b = 0; b < B; b++)
                for (int k = 0; k < w; k++) /* the last column lies past every batch's length: garbage */
                    st->table_h[b * w + k] = k < w - 1 ? perm[b * (w - 1) + k] : -5;
            free(perm);
        }
        for (int b = 0; b < B; b++)
            for (int n = 0; n < N; n++)
                for (int s = 0; s < S; s++)
                    for (int e = 0; e < d; e++) {
                        const int64_t blk = st->table_h[b * w + s / bs];
                        SRC_COPY((char *)st->h[cache] + (blk * th->stride_batch + n * th->stride_head +
                                                         (s % bs) * th->stride_seq + e) * (int64_t)es,
                                 b, n, s, e);
                    }
        th->data = st->h[cache];
        gc_kv_upload(st, cache, (size_t)(blocks * th->stride_batch) * es);
        *td = *th, td->data = st->d[cache];
        return true;
    }
    /* BNSD with P hidden positions in front of each batch's cache; a list splits it per batch */
    const int64_t Sp = S + P;
    th->stride_seq = d, th->stride_head = Sp * d, th->stride_batch = c->kv.list ? 0 : N * Sp * d;
    const int64_t per_batch = N * Sp * d;
    for (int b = 0; b < (c->kv.list ? B : 1); b++) {
        const int64_t elems = c->kv.list ? per_batch : B * per_batch;
        void *h = malloc((size_t)elems * es), *dv = NULL;
        if (!h || cudaMalloc(&dv, (size_t)elems * es) != cudaSuccess) {
            free(h);
            return false;
        }
        st->list_bufs[st->n_list][0] = h, st->list_bufs[st->n_list][1] = dv, st->n_list++;
        gc_fill_hidden(h, dt, elems);
        for (int bb = c->kv.list ? b : 0; bb < (c->kv.list ? b + 1 : B); bb++)
            for (int n = 0; n < N; n++)
                for (int s = 0; s < S; s++)
                    for (int e = 0; e < d; e++)
                        SRC_COPY((char *)h + ((c->kv.list ? 0 : bb * per_batch) + n * Sp * d + (s + P) * d + e) * (int64_t)es,
                                 bb, n, s, e);
        cudaMemcpy(dv, h, (size_t)elems * es, cudaMemcpyHostToDevice);
        if (c->kv.list) {
            (is_v ? st->v_list_h : st->k_list_h)[b] = h;
            (is_v ? st->v_list_d : st->k_list_d)[b] = dv;
        } else {
            th->data = h;
            *td = *th, td->data = dv;
        }
    }
    if (c->kv.list)
        *td = *th;
    return true;
    #undef SRC_COPY
}

/* Per-channel (or per-tensor) dequantisation of one int8 operand: scale in [lo, 2·lo), offset in [−3, 3]. */
static bool gc_kv_affine(const gc_case *c, gc_kv_state *st, tc_rng *r, int d, double lo, fc_affine *ah, fc_affine *ad)
{
    const int64_t n = c->kv.i8_per_tensor ? 1 : (int64_t)c->Nkv * d;
    const int s = gc_kv_buf(st, (size_t)n * 4), o = c->kv.i8_offset ? gc_kv_buf(st, (size_t)n * 4) : -1;
    if (s < 0 || (c->kv.i8_offset && o < 0))
        return false;
    for (int64_t i = 0; i < n; i++) {
        ((float *)st->h[s])[i] = (float)tc_rng_uniform(r, lo, 2 * lo);
        if (o >= 0)
            ((float *)st->h[o])[i] = (float)tc_rng_int(r, -3, 3);
    }
    gc_kv_upload(st, s, (size_t)n * 4);
    if (o >= 0)
        gc_kv_upload(st, o, (size_t)n * 4);
    const int64_t sh = c->kv.i8_per_tensor ? 0 : d, sd = c->kv.i8_per_tensor ? 0 : 1;
    *ah = (fc_affine){st->h[s], o >= 0 ? st->h[o] : NULL, FC_F32, sh, sd};
    *ad = (fc_affine){st->d[s], o >= 0 ? st->d[o] : NULL, FC_F32, sh, sd};
    return true;
}

bool gc_kv_apply(const gc_case *c, tc_rng *r, const int64_t *kvlen, fc_attention_desc *cpu, fc_attention_desc *gpu,
                 gc_kv_state *st)
{
    memset(st, 0, sizeof *st);
    const gc_kv *kv = &c->kv;
    if (!kv->page && !kv->list && !kv->left_pad && !kv->i8)
        return true;
    if (c->B > GC_KV_MAX_B)
        return false;
    const fc_dtype dt = kv->i8 ? FC_I8 : c->dt;
    const fc_tensor k0 = cpu->k, v0 = cpu->v;
    if (!gc_kv_operand(c, st, &k0, dt, c->D, c->Skv, r, false, &cpu->k, &gpu->k) ||
        !gc_kv_operand(c, st, &v0, dt, c->Dv, c->Skv, r, true, &cpu->v, &gpu->v))
        return false;
    if (kv->i8 && (!gc_kv_affine(c, st, r, c->D, 0.01, &cpu->kv.k_dequant, &gpu->kv.k_dequant) ||
                   !gc_kv_affine(c, st, r, c->Dv, 0.005, &cpu->kv.v_dequant, &gpu->kv.v_dequant)))
        return false;
    if (kv->list) {
        cpu->kv.k_batches = st->k_list_h, cpu->kv.v_batches = st->v_list_h;
        gpu->kv.k_batches = st->k_list_d, gpu->kv.v_batches = st->v_list_d;
    }
    if (kv->page) {
        const int w = (c->Skv + kv->page - 1) / kv->page + 1;
        for (int side = 0; side < 2; side++) {
            fc_kv_storage *s = side ? &gpu->kv : &cpu->kv;
            s->table_stride = w, s->block_size = kv->page, s->num_blocks = st->blocks;
        }
        cpu->kv.block_table = st->table_h;
        gc_kv_upload_table(st);
        for (int i = 0; i < st->n; i++)
            if (st->h[i] == st->table_h)
                gpu->kv.block_table = st->d[i];
    }
    if (kv->left_pad) {
        for (int b = 0; b < c->B; b++)
            st->kv_lens[b] = kvlen[b] + kv->left_pad, st->kv_starts[b] = kv->left_pad;
        cpu->kv_len = gpu->kv_len = c->Skv + kv->left_pad;
        cpu->kv_lens = gpu->kv_lens = st->kv_lens;
        cpu->kv_starts = gpu->kv_starts = st->kv_starts;
    }
    return true;
}

void gc_kv_upload_table(gc_kv_state *st)
{
    for (int i = 0; i < st->n; i++)
        if (st->h[i] == st->table_h)
            gc_kv_upload(st, i, (size_t)st->table_entries * sizeof(int32_t));
}

void gc_kv_free(gc_kv_state *st)
{
    for (int i = 0; i < st->n; i++)
        free(st->h[i]), cudaFree(st->d[i]);
    for (int i = 0; i < st->n_list; i++)
        free(st->list_bufs[i][0]), cudaFree(st->list_bufs[i][1]);
    memset(st, 0, sizeof *st);
}
