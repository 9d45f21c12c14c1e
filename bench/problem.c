#include "problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

static void *take(bench_problem *bp, size_t bytes)
{
    void *p = bp->nmem < (int)(sizeof bp->mem / sizeof bp->mem[0]) ? bench_alloc(bytes ? bytes : 64) : NULL;
    if (p)
        bp->mem[bp->nmem++] = p;
    return p;
}

static fc_tensor view(void *data, fc_dtype dt, const bench_case *c, int64_t heads, int64_t len, int64_t dim)
{
    return c->lens[0] ? fc_tensor_tnd(data, dt, heads, dim)
         : c->bsnd    ? fc_tensor_bsnd(data, dt, heads, len, dim)
                      : fc_tensor_bnsd(data, dt, heads, len, dim);
}

/* Random top-k block indices per (batch, query, kv head) ([B, Sq, Nkv, K]); with causal only
 * blocks that start at or before the row's threshold are drawn. */
static int32_t *sparse_indices(bench_problem *bp, const bench_case *c, int64_t nb)
{
    const int64_t K = c->topk, bs = c->block, blocks = (c->kv_len + bs - 1) / bs;
    int32_t *ind = take(bp, (size_t)(nb * c->q_len * c->kv_heads * K) * sizeof(int32_t));
    int32_t *perm = malloc((size_t)blocks * sizeof(int32_t));
    if (!ind || !perm) {
        free(perm);
        return NULL;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int64_t row = 0; row < nb * c->q_len * c->kv_heads; row++) {
        const int64_t i = (row / c->kv_heads) % c->q_len;
        const int64_t thr = c->causal ? c->kv_len - c->q_len + i + 1 : c->kv_len;
        const int64_t avail = thr <= 0 ? 0 : (thr + bs - 1) / bs < blocks ? (thr + bs - 1) / bs : blocks;
        for (int64_t k = 0; k < avail; k++)
            perm[k] = (int32_t)k;
        for (int64_t k = 0; k < K; k++) { /* a partial Fisher–Yates shuffle: K distinct blocks */
            if (k < avail) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const int64_t at = k + (int64_t)(x % (uint64_t)(avail - k));
                const int32_t t = perm[k];
                perm[k] = perm[at], perm[at] = t;
            }
            ind[row * K + k] = k < avail ? perm[k] : -1;
        }
    }
    free(perm);
    bp->d.sparse = (fc_sparse){.indices = ind, .dtype = FC_I32, .count = K, .block_size = bs,
                               .stride_batch = c->q_len * c->kv_heads * K, .stride_seq = c->kv_heads * K,
                               .stride_head = K, .stride_entry = 1, .causal = c->causal};
    return ind;
}

bool bench_problem_build(const bench_case *c, bool sparse, bool backward, bench_problem *bp, char *note,
                         size_t note_size)
{
    memset(bp, 0, sizeof *bp);
    fc_attention_desc *d = &bp->d;
    *d = fc_attention_desc_init();
    const bool packed = c->lens[0] != 0;
    const int64_t nb = bench_case_batches(c), D = c->head_dim, Dv = c->v_head_dim ? c->v_head_dim : D;
    const int64_t Dr = c->rope_dim;
    const fc_dtype dt = c->dtype, kdt = c->kv_dtype ? c->kv_dtype : dt;
    int64_t tq = nb * c->q_len, tkv = nb * c->kv_len;
    if (packed) {
        tq = tkv = 0;
        for (int64_t b = 0; b < nb; b++)
            bp->lens[b] = c->lens[b], tq += c->lens[b], tkv += c->lens[b];
        d->packed = true;
        d->q_lens = d->kv_lens = bp->lens;
    }
    d->batch = nb, d->q_heads = c->q_heads, d->kv_heads = c->kv_heads;
    d->head_dim = D, d->v_head_dim = Dv, d->rope_dim = Dr;
    d->q_len = c->q_len, d->kv_len = c->kv_len;
    bp->q_elems = (size_t)(tq * c->q_heads * D);
    bp->kv_elems = (size_t)(tkv * c->kv_heads * D);
    bp->out_elems = (size_t)(tq * c->q_heads * Dv);
    const size_t es = fc_dtype_size(dt), kes = fc_dtype_size(kdt), v_elems = (size_t)(tkv * c->kv_heads * Dv);
    void *q = take(bp, bp->q_elems * es), *k = take(bp, bp->kv_elems * kes), *v = take(bp, v_elems * kes);
    void *out = take(bp, bp->out_elems * es);
    if (!q || !k || !v || !out)
        goto oom;
    bench_fill_random(q, dt, bp->q_elems, 1);
    bench_fill_random(k, kdt, bp->kv_elems, 2);
    bench_fill_random(v, kdt, v_elems, 3);
    d->q = view(q, dt, c, c->q_heads, c->q_len, D);
    d->k = view(k, kdt, c, c->kv_heads, c->kv_len, D);
    d->v = view(v, kdt, c, c->kv_heads, c->kv_len, Dv);
    d->out = view(out, dt, c, c->q_heads, c->q_len, Dv);
    if (kdt == FC_I8) { /* per-tensor scales: values in [-1, 1) like the float cases */
        bp->kv_scale[0] = bp->kv_scale[1] = 1.0f / 127.0f;
        d->kv.k_dequant = (fc_affine){.scale = &bp->kv_scale[0], .dtype = FC_F32};
        d->kv.v_dequant = (fc_affine){.scale = &bp->kv_scale[1], .dtype = FC_F32};
    }
    if (Dr) {
        void *qr = take(bp, (size_t)(tq * c->q_heads * Dr) * es), *kr = take(bp, (size_t)(tkv * c->kv_heads * Dr) * es);
        if (!qr || !kr)
            goto oom;
        bench_fill_random(qr, dt, (size_t)(tq * c->q_heads * Dr), 4);
        bench_fill_random(kr, dt, (size_t)(tkv * c->kv_heads * Dr), 5);
        d->q_rope = view(qr, dt, c, c->q_heads, c->q_len, Dr);
        d->k_rope = view(kr, dt, c, c->kv_heads, c->kv_len, Dr);
    }
    if (sparse) {
        if (!sparse_indices(bp, c, nb))
            goto oom;
    } else if (c->causal) {
        d->vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    }
    if (backward) {
        const size_t rows = (size_t)(tq * c->q_heads);
        bp->stats[0] = take(bp, rows * sizeof(float));
        bp->stats[1] = take(bp, rows * sizeof(float));
        void *dout = take(bp, bp->out_elems * es), *dq = take(bp, bp->q_elems * es);
        void *dk = take(bp, bp->kv_elems * es), *dv = take(bp, v_elems * es);
        if (!bp->stats[0] || !bp->stats[1] || !dout || !dq || !dk || !dv)
            goto oom;
        bench_fill_random(dout, dt, bp->out_elems, 6);
        d->stats = (fc_stats){.max = bp->stats[0], .sum = bp->stats[1], .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
        fc_attention_grads *g = &bp->g;
        g->d_out = view(dout, dt, c, c->q_heads, c->q_len, Dv);
        g->dq = view(dq, dt, c, c->q_heads, c->q_len, D);
        g->dk = view(dk, dt, c, c->kv_heads, c->kv_len, D);
        g->dv = view(dv, dt, c, c->kv_heads, c->kv_len, Dv);
        if (Dr) {
            void *dqr = take(bp, (size_t)(tq * c->q_heads * Dr) * es), *dkr = take(bp, (size_t)(tkv * c->kv_heads * Dr) * es);
            if (!dqr || !dkr)
                goto oom;
            g->dq_rope = view(dqr, dt, c, c->q_heads, c->q_len, Dr);
            g->dk_rope = view(dkr, dt, c, c->kv_heads, c->kv_len, Dr);
        }
    }
    return true;
oom:
    snprintf(note, note_size, "out of memory for the operands");
    bench_problem_free(bp);
    return false;
}

void bench_problem_free(bench_problem *bp)
{
    for (int i = 0; i < bp->nmem; i++)
        free(bp->mem[i]);
    bp->nmem = 0;
}

bool bench_plan_make(bench_plan *p, const bench_problem *bp, bool backward, int threads, char *note, size_t note_size)
{
    memset(p, 0, sizeof *p);
    const fc_options opt = {.backend = FC_BACKEND_CPU, .threads = threads};
    fc_status st = backward ? fc_plan_create_backward(&bp->d, &bp->g, &opt, &p->plan) : fc_plan_create(&bp->d, &opt, &p->plan);
    if (st == FC_OK)
        st = fc_plan_workspace_size(p->plan, &p->ws_bytes);
    if (st == FC_OK && p->ws_bytes && !(p->ws = bench_alloc(p->ws_bytes)))
        st = FC_ERR_NO_MEMORY;
    if (st != FC_OK) {
        snprintf(note, note_size, "flashc: %s", st == FC_ERR_NO_MEMORY ? "out of memory" : fc_last_error());
        bench_plan_free(p);
        return false;
    }
    return true;
}

bool bench_plan_run(void *ctx)
{
    bench_plan *p = ctx;
    return fc_plan_run(p->plan, NULL, p->ws, p->ws_bytes) == FC_OK;
}

void bench_plan_free(bench_plan *p)
{
    fc_plan_destroy(p->plan);
    free(p->ws);
    memset(p, 0, sizeof *p);
}
