/* One block of the ring: a piece of this rank's query rows against a piece of a key/value shard,
 * as an ordinary native description with global start positions, run by libflashc. */
#include <stdlib.h>

#include "ring.h"

/* The caller's description narrowed to the block: its rows, the shard piece, block prefixes and
 * the gathered problem's windows (top-left over global positions). */
static fc_attention_desc block_desc(ring_ctx *c, int64_t q_row, ring_span q, void *kv_buf, int64_t kv_rows,
                                    int64_t kv_row, ring_span k)
{
    const fc_attention_desc *d = c->d;
    fc_attention_desc b = *d;
    b.q_len = q.len, b.kv_len = k.len;
    b.q = ring_rows(d->q, q_row);
    b.k = ring_kv_key(c, kv_buf, kv_rows, kv_row);
    b.v = ring_kv_value(c, kv_buf, kv_rows, kv_row);
    b.vis.q_start = c->geom.q0 + q.off;
    b.vis.kv_start = c->geom.kv0 + k.off;
    b.vis.window = c->win[0];
    b.vis.batch_window = d->vis.batch_window ? c->win : NULL;
    b.vis.prefix = NULL;
    if (d->vis.prefix) {
        for (int64_t i = 0; i < c->B; i++) {
            const int64_t p = d->vis.prefix[i] - k.off;
            c->block_prefix[i] = p < 0 ? 0 : p > k.len ? k.len : p;
        }
        b.vis.prefix = c->block_prefix;
    }
    b.sink = NULL; /* the sink enters once, when the pieces are merged */
    b.stats = (fc_stats){0};
    return b;
}

/* The blocks' fp32 outputs are merged and rounded to the caller's dtype at the end, so they need
 * only that dtype's tolerance (on AMX this keeps P·V on bf16 tiles, as for the whole problem). */
static fc_options block_options(const ring_ctx *c)
{
    const fc_dtype out = c->d->out.dtype;
    return (fc_options){.backend = FC_BACKEND_CPU,
                        .threads = c->opt.threads,
                        .out_tolerance = out == FC_BF16 || out == FC_F16 ? out : FC_F32};
}

static fc_status run_plan(ring_ctx *c, fc_plan *plan, const char *what)
{
    size_t need = 0;
    fc_status st = fc_plan_workspace_size(plan, &need);
    if (st == FC_OK && need > c->ws_bytes) {
        free(c->ws);
        c->ws = ring_alloc(need, 1, "the block workspace");
        c->ws_bytes = c->ws ? need : 0;
        if (!c->ws) {
            fc_plan_destroy(plan);
            return FC_ERR_NO_MEMORY;
        }
    }
    if (st == FC_OK)
        st = fc_plan_run(plan, NULL, c->ws, c->ws_bytes);
    fc_plan_destroy(plan);
    return st == FC_OK ? FC_OK : ring_fail_flashc(st, what);
}

fc_status ring_block_forward(ring_ctx *c, int64_t q_row, ring_span q, void *kv_buf, int64_t kv_rows,
                             int64_t kv_row, ring_span k, float *out, float *max, float *sum)
{
    fc_attention_desc b = block_desc(c, q_row, q, kv_buf, kv_rows, kv_row, k);
    b.out = fc_tensor_bnsd(out, FC_F32, c->Nq, q.len, c->Dv);
    b.out_quant = (fc_affine){0};
    b.stats = (fc_stats){.max = max, .sum = sum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    const fc_options o = block_options(c);
    fc_plan *plan;
    const fc_status st = fc_plan_create(&b, &o, &plan);
    if (st != FC_OK)
        return ring_fail_flashc(st, "ring forward block");
    return run_plan(c, plan, "ring forward block");
}

fc_status ring_block_backward(ring_ctx *c, int64_t q_row, ring_span q, const float *max, const float *sum,
                              void *kv_buf, int64_t kv_rows, int64_t kv_row, ring_span k, float *dq, float *dk,
                              float *dv)
{
    fc_attention_desc b = block_desc(c, q_row, q, kv_buf, kv_rows, kv_row, k);
    b.out = ring_rows(c->d->out, q_row);
    b.stats = (fc_stats){.max = (float *)max, .sum = (float *)sum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    fc_attention_grads g = {0};
    g.d_out = ring_rows(c->g->d_out, q_row);
    g.dq = fc_tensor_bnsd(dq, FC_F32, c->Nq, q.len, c->D);
    g.dk = fc_tensor_bnsd(dk, FC_F32, c->Nkv, kv_rows, c->D);
    g.dk.data = dk + kv_row * c->D;
    g.dv = fc_tensor_bnsd(dv, FC_F32, c->Nkv, kv_rows, c->Dv);
    g.dv.data = dv + kv_row * c->Dv;
    const fc_options o = block_options(c);
    fc_plan *plan;
    const fc_status st = fc_plan_create_backward(&b, &g, &o, &plan);
    if (st != FC_OK)
        return ring_fail_flashc(st, "ring backward block");
    return run_plan(c, plan, "ring backward block");
}

int64_t ring_rows_per_call(const ring_ctx *c, int64_t kv_len)
{
    /* about 2^27 scores per call: a few progress calls per step at the sizes the ring is for */
    const int64_t scores = (int64_t)1 << 27, per_row = c->B * c->Nq * (kv_len > 0 ? kv_len : 1);
    const int64_t rows = scores / per_row;
    return rows < 256 ? 256 : rows;
}
