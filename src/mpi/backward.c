/* The ring backward.  Key/value shards travel as in the forward; each shard's dK/dV accumulator
 * travels from one rank that sees the shard to the next (in ring order, so the sum has a fixed
 * order) and, after the last, home to its owner.  Every block takes the forward's output and
 * statistics as given, so its probabilities are those of the gathered problem. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

typedef struct bwd_state {
    int count;
    ring_slice *slices;
    float **max, **sum, **dq; /* per slice: given statistics, dq accumulator */
    float *blk_dq;
    void *kv[2];
    float *blk_dkv, *mine, *in, *out[2], *final; /* shard-shaped fp32 [B][Nkv][rows][D], then dv */
    MPI_Request send[2], final_req;
    int sends;
    bool final_ready; /* this rank's own dK/dV is in `final` */
} bwd_state;

static int threads(const ring_ctx *c) { return c->opt.threads > 0 ? c->opt.threads : omp_get_max_threads(); }

static int64_t shard_rows(const ring_geom *g, int s) { return g->kv[s][0].len + g->kv[s][1].len; }
static int64_t dkv_count(const ring_ctx *c, int64_t rows) { return c->B * c->Nkv * rows * (c->D + c->Dv); }

static void add_into(const ring_ctx *c, float *dst, const float *a, const float *b, int64_t n)
{
#pragma omp parallel for schedule(static) num_threads(threads(c))
    for (int64_t k = 0; k < n; k++)
        dst[k] = a[k] + b[k];
}

/* Adds rows [at, at + len) of a shard-shaped block gradient into `mine`. */
static void add_piece(const ring_ctx *c, float *mine, const float *blk, int64_t rows, int64_t at, int64_t len)
{
    const int64_t heads = c->B * c->Nkv;
    for (int side = 0; side < 2; side++) {
        const int64_t dim = side ? c->Dv : c->D, base = side ? heads * rows * c->D : 0;
#pragma omp parallel for schedule(static) num_threads(threads(c))
        for (int64_t h = 0; h < heads; h++) {
            const int64_t o = base + (h * rows + at) * dim;
            for (int64_t k = 0; k < len * dim; k++)
                mine[o + k] += blk[o + k];
        }
    }
}

static fc_status bwd_alloc(ring_ctx *c, bwd_state *f)
{
    const fc_attention_desc *d = c->d;
    f->count = ring_slices(c, &f->slices);
    if (f->count < 0)
        return FC_ERR_NO_MEMORY;
    const size_t heads = (size_t)(c->B * c->Nq), n = (size_t)f->count + 1;
    const int64_t rows = ring_max_kv_rows(&c->geom);
    const size_t kv = ring_kv_bytes(c, rows), dkv = (size_t)dkv_count(c, rows);
    if (kv > INT_MAX || dkv > INT_MAX)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: a key/value shard of %zu bytes exceeds one MPI message", c->fn, kv);
    f->max = calloc(n, sizeof *f->max), f->sum = calloc(n, sizeof *f->sum), f->dq = calloc(n, sizeof *f->dq);
    int64_t most = 1;
    for (int k = 0; k < f->count; k++)
        most = f->slices[k].span.len > most ? f->slices[k].span.len : most;
    f->blk_dq = ring_alloc(heads * (size_t)most, (size_t)c->D * sizeof(float), "the block dq");
    float **bufs[] = {&f->blk_dkv, &f->mine, &f->in, &f->out[0], &f->out[1], &f->final};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        if (!(*bufs[k] = ring_alloc(dkv, sizeof(float), "a dK/dV buffer")))
            return FC_ERR_NO_MEMORY;
    f->kv[0] = ring_alloc(kv, 1, "a key/value shard");
    f->kv[1] = ring_alloc(kv, 1, "a key/value shard");
    if (!f->max || !f->sum || !f->dq || !f->blk_dq || !f->kv[0] || !f->kv[1])
        return FC_ERR_NO_MEMORY;
    for (int k = 0; k < f->count; k++) {
        const ring_slice *sl = &f->slices[k];
        const size_t r = heads * (size_t)sl->span.len;
        f->max[k] = ring_alloc(r, sizeof(float), "slice statistics");
        f->sum[k] = ring_alloc(r, sizeof(float), "slice statistics");
        f->dq[k] = ring_alloc(r, (size_t)c->D * sizeof(float), "a dq accumulator");
        if (!f->max[k] || !f->sum[k] || !f->dq[k])
            return FC_ERR_NO_MEMORY;
        memset(f->dq[k], 0, r * (size_t)c->D * sizeof(float));
        for (int64_t b = 0; b < c->B; b++)
            for (int64_t h = 0; h < c->Nq; h++)
                for (int64_t i = 0; i < sl->span.len; i++) {
                    const int64_t at = ring_stats_index(c, d->q_len, b, h, sl->row + i);
                    const int64_t to = (b * c->Nq + h) * sl->span.len + i;
                    f->max[k][to] = d->stats.max[at], f->sum[k][to] = d->stats.sum[at];
                }
    }
    f->send[0] = f->send[1] = f->final_req = MPI_REQUEST_NULL;
    return FC_OK;
}

static void bwd_free(ring_ctx *c, bwd_state *f)
{
    for (int k = 0; k < f->count; k++) {
        if (f->max)
            free(f->max[k]);
        if (f->sum)
            free(f->sum[k]);
        if (f->dq)
            free(f->dq[k]);
    }
    free(f->max), free(f->sum), free(f->dq), free(f->slices), free(f->blk_dq), free(f->blk_dkv), free(f->mine);
    void *transfers[] = {f->kv[0], f->kv[1], f->in, f->out[0], f->out[1], f->final};
    for (size_t k = 0; k < sizeof transfers / sizeof transfers[0]; k++)
        ring_free_transfer(c, transfers[k]);
}

/* The ranks before / after step t on shard s's path that see it (−1: none). */
static int contributor(const ring_geom *g, int s, int t, int dir)
{
    for (int u = t + dir; u >= 0 && u < g->ranks; u += dir)
        if (ring_needs(g, ring_mod(s + u, g->ranks), s))
            return ring_mod(s + u, g->ranks);
    return -1;
}

/* This rank's blocks against shard s: dq into the slices, dK/dV into f->mine. */
static fc_status bwd_blocks(ring_ctx *c, bwd_state *f, int s, void *buf, MPI_Request *reqs, int nreq)
{
    const ring_geom *g = &c->geom;
    const int64_t rows = shard_rows(g, s);
    memset(f->mine, 0, (size_t)dkv_count(c, rows) * sizeof(float));
    for (int k = 0; k < f->count; k++)
        for (int64_t p = 0, at = 0; p < 2; at += g->kv[s][p].len, p++) {
            const ring_span piece = g->kv[s][p];
            const ring_slice *sl = &f->slices[k];
            if (piece.len == 0)
                continue;
            if (!ring_block_visible(c, sl->span, piece)) {
                c->t.blocks_skipped++;
                continue;
            }
            const double t0 = ring_now();
            float *dk = f->blk_dkv, *dv = f->blk_dkv + c->B * c->Nkv * rows * c->D;
            const fc_status st = ring_block_backward(c, sl->row, sl->span, f->max[k], f->sum[k], buf, rows, at,
                                                     piece, f->blk_dq, dk, dv);
            if (st != FC_OK)
                return st;
            const int64_t nq = c->B * c->Nq * sl->span.len * c->D;
            add_into(c, f->dq[k], f->dq[k], f->blk_dq, nq);
            add_piece(c, f->mine, f->blk_dkv, rows, at, piece.len);
            c->t.compute += ring_now() - t0;
            c->t.blocks_computed++;
            ring_progress(reqs, nreq);
        }
    return FC_OK;
}

/* After this rank's blocks: adds the accumulator that came in and passes the sum on. */
static fc_status bwd_pass_dkv(ring_ctx *c, bwd_state *f, int s, int t, int prev, MPI_Request *in_req)
{
    const ring_geom *g = &c->geom;
    const int64_t n = dkv_count(c, shard_rows(g, s));
    fc_status st = ring_wait(c, in_req, 1, ring_peers_text(c, "a dK/dV accumulator", prev, -1));
    float *out = f->out[f->sends % 2];
    if (st == FC_OK)
        st = ring_wait(c, &f->send[f->sends % 2], 1, "another rank to take an earlier dK/dV accumulator");
    if (st != FC_OK)
        return st;
    const int next = contributor(g, s, t, +1), dest = next >= 0 ? next : s;
    if (dest == g->rank) { /* only this rank sees its own shard */
        memcpy(f->final, f->mine, (size_t)n * sizeof(float));
        f->final_ready = true;
        return FC_OK;
    }
    if (prev >= 0)
        add_into(c, out, f->in, f->mine, n);
    else
        memcpy(out, f->mine, (size_t)n * sizeof(float));
    MPI_Isend(out, (int)n, MPI_FLOAT, dest, ring_tag_dkv(c, s), c->comm, &f->send[f->sends % 2]);
    c->t.bytes_sent += (double)n * sizeof(float);
    f->sends++;
    return FC_OK;
}

static fc_status bwd_step(ring_ctx *c, bwd_state *f, int t)
{
    const ring_geom *g = &c->geom;
    const int P = g->ranks, me = g->rank, left = ring_mod(me - 1, P), right = ring_mod(me + 1, P);
    const int s = ring_mod(me - t, P), next = ring_mod(me - t - 1, P);
    void *cur = f->kv[t % 2], *nxt = f->kv[(t + 1) % 2];
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (t + 1 < P && ring_kv_moves(g, next, t + 1))
        MPI_Irecv(nxt, (int)ring_kv_bytes(c, shard_rows(g, next)), MPI_BYTE, left, ring_tag_kv(c, next), c->comm,
                  &reqs[0]);
    if (t + 1 < P && ring_kv_moves(g, s, t + 1)) {
        const size_t bytes = ring_kv_bytes(c, shard_rows(g, s));
        MPI_Isend(cur, (int)bytes, MPI_BYTE, right, ring_tag_kv(c, s), c->comm, &reqs[1]);
        c->t.bytes_sent += (double)bytes;
    }
    fc_status st = FC_OK;
    if (ring_needs(g, me, s)) {
        const int prev = contributor(g, s, t, -1);
        if (prev >= 0)
            MPI_Irecv(f->in, (int)dkv_count(c, shard_rows(g, s)), MPI_FLOAT, prev, ring_tag_dkv(c, s), c->comm,
                      &reqs[2]);
        st = bwd_blocks(c, f, s, cur, reqs, 3);
        if (st == FC_OK)
            st = bwd_pass_dkv(c, f, s, t, prev, &reqs[2]);
    }
    if (st == FC_OK)
        st = ring_wait(c, reqs, 2, ring_peers_text(c, "key/value shards", left, right));
    if (st != FC_OK) {
        ring_abandon(c, &reqs[0], 1, true);
        ring_abandon(c, &reqs[1], 1, false);
        ring_abandon(c, &reqs[2], 1, true);
    }
    return st;
}

/* dsink = −Σ over every row of the problem of p_sink·D, summed in rank order. */
static fc_status bwd_dsink(ring_ctx *c)
{
    const fc_attention_desc *d = c->d;
    const int P = c->geom.ranks;
    double *part = ring_alloc((size_t)c->Nq * (size_t)(P + 1), sizeof(double), "the sink partials");
    if (!part)
        return FC_ERR_NO_MEMORY;
    double *all = part + c->Nq;
    for (int64_t n = 0; n < c->Nq; n++) {
        double acc = 0;
        for (int64_t b = 0; b < c->B && d->sink[n] != -INFINITY; b++)
            for (int64_t i = 0; i < d->q_len; i++) {
                double D = 0;
                for (int64_t e = 0; e < c->Dv; e++)
                    D += (double)ring_load(&c->g->d_out, b, n, i, e) * ring_load(&d->out, b, n, i, e);
                const int64_t at = ring_stats_index(c, d->q_len, b, n, i);
                acc += exp((double)d->sink[n] - d->stats.max[at]) / d->stats.sum[at] * D;
            }
        part[n] = acc;
    }
    MPI_Request req;
    MPI_Iallgather(part, (int)c->Nq, MPI_DOUBLE, all, (int)c->Nq, MPI_DOUBLE, c->comm, &req);
    const fc_status st = ring_wait(c, &req, 1, "the other ranks' sink gradients");
    if (st != FC_OK)
        ring_abandon(c, &req, 1, false);
    for (int64_t n = 0; st == FC_OK && n < c->Nq; n++) {
        double sum = 0;
        for (int r = 0; r < P; r++)
            sum += all[r * c->Nq + n];
        c->g->dsink[n] = (float)-sum;
    }
    ring_free_transfer(c, part);
    return st;
}

static void bwd_write(ring_ctx *c, bwd_state *f)
{
    const fc_attention_desc *d = c->d;
    for (int k = 0; k < f->count; k++) {
        const ring_slice *sl = &f->slices[k];
        for (int64_t b = 0; b < c->B; b++)
            for (int64_t n = 0; n < c->Nq; n++)
                for (int64_t i = 0; i < sl->span.len; i++)
                    ring_store_row(&c->g->dq, b, n, sl->row + i, f->dq[k] + ((b * c->Nq + n) * sl->span.len + i) * c->D,
                                   c->D);
    }
    const int64_t rows = d->kv_len, dv_base = c->B * c->Nkv * rows * c->D;
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t n = 0; n < c->Nkv; n++)
            for (int64_t i = 0; i < rows; i++) {
                const int64_t h = (b * c->Nkv + n) * rows + i;
                ring_store_row(&c->g->dk, b, n, i, f->final_ready ? f->final + h * c->D : NULL, c->D);
                ring_store_row(&c->g->dv, b, n, i, f->final_ready ? f->final + dv_base + h * c->Dv : NULL, c->Dv);
            }
}

static fc_status bwd_run(ring_ctx *c, bwd_state *f)
{
    const ring_geom *g = &c->geom;
    const int me = g->rank;
    ring_pack_kv(c, f->kv[0]);
    /* this rank's own dK/dV comes home from the last rank that sees the shard */
    const int last = contributor(g, me, g->ranks, -1);
    if (last >= 0 && last != me) {
        MPI_Irecv(f->final, (int)dkv_count(c, shard_rows(g, me)), MPI_FLOAT, last, ring_tag_dkv(c, me), c->comm,
                  &f->final_req);
        f->final_ready = true;
    }
    fc_status st = FC_OK;
    for (int t = 0; t < g->ranks && st == FC_OK; t++)
        st = bwd_step(c, f, t);
    if (st == FC_OK)
        st = ring_wait(c, f->send, 2, "other ranks to take this rank's dK/dV accumulators");
    if (st == FC_OK)
        st = ring_wait(c, &f->final_req, 1, ring_peers_text(c, "this rank's own dK/dV", last, -1));
    if (st == FC_OK && c->d->sink)
        st = bwd_dsink(c);
    if (st != FC_OK) {
        ring_abandon(c, f->send, 2, false);
        ring_abandon(c, &f->final_req, 1, true);
        return st;
    }
    bwd_write(c, f);
    return FC_OK;
}

fc_status fc_ring_attention_backward(const fc_attention_desc *desc, const fc_attention_grads *grads,
                                     const fc_ring_options *options, MPI_Comm comm)
{
    ring_ctx c;
    fc_status st = ring_begin(&c, "fc_ring_attention_backward", desc, grads, options, comm);
    if (st == FC_OK) {
        bwd_state f = {0};
        st = bwd_alloc(&c, &f);
        if (st == FC_OK)
            st = bwd_run(&c, &f);
        bwd_free(&c, &f);
    }
    ring_end(&c);
    return st;
}
