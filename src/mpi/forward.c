/* The ring forward: key/value shards travel one rank to the right per step while this rank runs
 * its visible blocks; each block's output merges into the slice's accumulator by log-sum-exp, in
 * step order (a fixed order: results are identical on every run). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

/* Running result of one slice: normalised output, row maximum (−inf = nothing seen yet), row sum. */
typedef struct slice_acc {
    float *out, *max, *sum;
} slice_acc;

static int slice_threads(const ring_ctx *c) { return c->opt.threads > 0 ? c->opt.threads : omp_get_max_threads(); }

static void merge_block(const ring_ctx *c, int64_t len, slice_acc *a, const float *out, const float *max,
                        const float *sum)
{
    const int64_t rows = c->B * c->Nq * len, dv = c->Dv;
#pragma omp parallel for schedule(static) num_threads(slice_threads(c))
    for (int64_t r = 0; r < rows; r++) {
        if (max[r] == -FLT_MAX && sum[r] == FLT_MAX)
            continue; /* the row sees nothing of this block */
        float *o = a->out + r * dv;
        const float *ob = out + r * dv;
        if (a->max[r] == -INFINITY) {
            a->max[r] = max[r], a->sum[r] = sum[r];
            memcpy(o, ob, (size_t)dv * sizeof *o);
            continue;
        }
        const double m = a->max[r] > max[r] ? a->max[r] : max[r];
        const double la = a->sum[r] * exp(a->max[r] - m), lb = sum[r] * exp(max[r] - m), l = la + lb;
        const float wa = (float)(la / l), wb = (float)(lb / l);
        for (int64_t e = 0; e < dv; e++)
            o[e] = o[e] * wa + ob[e] * wb;
        a->max[r] = (float)m, a->sum[r] = (float)l;
    }
}

/* The sink enters once per row; then the rows go to the caller's output and statistics. */
static void finish_slice(const ring_ctx *c, const ring_slice *sl, slice_acc *a)
{
    const fc_attention_desc *d = c->d;
    const int64_t reps = ring_stats_replicas(c), dv = c->Dv, len = sl->span.len;
#pragma omp parallel for schedule(static) num_threads(slice_threads(c))
    for (int64_t r = 0; r < c->B * c->Nq * len; r++) {
        const int64_t b = r / (c->Nq * len), n = r / len % c->Nq, i = r % len;
        float *o = a->out + r * dv, m = a->max[r], l = a->sum[r];
        const float sink = d->sink ? d->sink[n] : -INFINITY;
        if (m == -INFINITY && sink == -INFINITY) {
            m = -FLT_MAX, l = FLT_MAX;
            memset(o, 0, (size_t)dv * sizeof *o);
        } else if (m == -INFINITY) {
            m = sink, l = 1;
            memset(o, 0, (size_t)dv * sizeof *o);
        } else if (sink != -INFINITY) {
            const double mx = m > sink ? m : sink, lr = l * exp(m - mx), ls = lr + exp(sink - mx);
            const float w = (float)(lr / ls);
            for (int64_t e = 0; e < dv; e++)
                o[e] *= w;
            m = (float)mx, l = (float)ls;
        }
        const int64_t row = sl->row + i;
        ring_store_row(&d->out, b, n, row, o, dv);
        if (!d->stats.max)
            continue;
        const int64_t at = ring_stats_index(c, d->q_len, b, n, row);
        for (int64_t k = 0; k < reps; k++)
            d->stats.max[at + k] = m, d->stats.sum[at + k] = l;
    }
}

typedef struct fwd_state {
    int count;
    ring_slice *slices;
    slice_acc *acc;
    float *blk_out, *blk_max, *blk_sum;
    void *kv[2];
} fwd_state;

static fc_status fwd_alloc(ring_ctx *c, fwd_state *f)
{
    f->count = ring_slices(c, &f->slices);
    if (f->count < 0)
        return FC_ERR_NO_MEMORY;
    f->acc = calloc((size_t)f->count + 1, sizeof *f->acc);
    int64_t most = 1;
    for (int k = 0; k < f->count; k++)
        most = f->slices[k].span.len > most ? f->slices[k].span.len : most;
    const size_t heads = (size_t)(c->B * c->Nq), kv = ring_kv_bytes(c, ring_max_kv_rows(&c->geom));
    f->blk_out = ring_alloc(heads * (size_t)most, (size_t)c->Dv * sizeof(float), "the block output");
    f->blk_max = ring_alloc(heads * (size_t)most, sizeof(float), "the block statistics");
    f->blk_sum = ring_alloc(heads * (size_t)most, sizeof(float), "the block statistics");
    f->kv[0] = ring_alloc(kv, 1, "a key/value shard");
    f->kv[1] = ring_alloc(kv, 1, "a key/value shard");
    if (kv > INT_MAX)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: a key/value shard of %zu bytes exceeds one MPI message (INT_MAX bytes)",
                         c->fn, kv);
    if (!f->acc || !f->blk_out || !f->blk_max || !f->blk_sum || !f->kv[0] || !f->kv[1])
        return FC_ERR_NO_MEMORY;
    for (int k = 0; k < f->count; k++) {
        const size_t rows = heads * (size_t)f->slices[k].span.len;
        slice_acc *a = &f->acc[k];
        a->out = ring_alloc(rows, (size_t)c->Dv * sizeof(float), "a slice accumulator");
        a->max = ring_alloc(rows, sizeof(float), "a slice accumulator");
        a->sum = ring_alloc(rows, sizeof(float), "a slice accumulator");
        if (!a->out || !a->max || !a->sum)
            return FC_ERR_NO_MEMORY;
        for (size_t r = 0; r < rows; r++)
            a->max[r] = -INFINITY, a->sum[r] = 0;
    }
    return FC_OK;
}

static void fwd_free(ring_ctx *c, fwd_state *f)
{
    for (int k = 0; f->acc && k < f->count; k++)
        free(f->acc[k].out), free(f->acc[k].max), free(f->acc[k].sum);
    free(f->acc), free(f->slices), free(f->blk_out), free(f->blk_max), free(f->blk_sum);
    ring_free_transfer(c, f->kv[0]), ring_free_transfer(c, f->kv[1]);
}

/* This rank's blocks against shard s (held in buf), with MPI progress between block calls. */
static fc_status fwd_step(ring_ctx *c, fwd_state *f, int s, void *buf, MPI_Request *reqs, int nreq)
{
    const ring_geom *g = &c->geom;
    const int64_t rows = g->kv[s][0].len + g->kv[s][1].len;
    for (int k = 0; k < f->count; k++)
        for (int64_t p = 0, at = 0; p < 2; at += g->kv[s][p].len, p++) {
            const ring_span piece = g->kv[s][p];
            if (piece.len == 0)
                continue;
            if (!ring_block_visible(c, f->slices[k].span, piece)) {
                c->t.blocks_skipped++;
                continue;
            }
            const double t0 = ring_now();
            fc_status st = ring_block_forward(c, f->slices[k].row, f->slices[k].span, buf, rows, at, piece,
                                                    f->blk_out, f->blk_max, f->blk_sum);
            if (st != FC_OK)
                return st;
            merge_block(c, f->slices[k].span.len, &f->acc[k], f->blk_out, f->blk_max, f->blk_sum);
            c->t.compute += ring_now() - t0;
            c->t.blocks_computed++;
            ring_progress(reqs, nreq);
        }
    return FC_OK;
}

static fc_status fwd_run(ring_ctx *c, fwd_state *f)
{
    const ring_geom *g = &c->geom;
    const int P = g->ranks, me = g->rank, left = ring_mod(me - 1, P), right = ring_mod(me + 1, P);
    ring_pack_kv(c, f->kv[0]);
    for (int t = 0; t < P; t++) {
        const int s = ring_mod(me - t, P), next = ring_mod(me - t - 1, P);
        void *cur = f->kv[t % 2], *nxt = f->kv[(t + 1) % 2];
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (t + 1 < P && ring_kv_moves(g, next, t + 1))
            MPI_Irecv(nxt, (int)ring_kv_bytes(c, g->kv[next][0].len + g->kv[next][1].len), MPI_BYTE, left,
                      ring_tag_kv(c, next), c->comm, &reqs[0]);
        if (t + 1 < P && ring_kv_moves(g, s, t + 1)) {
            const size_t bytes = ring_kv_bytes(c, g->kv[s][0].len + g->kv[s][1].len);
            MPI_Isend(cur, (int)bytes, MPI_BYTE, right, ring_tag_kv(c, s), c->comm, &reqs[1]);
            c->t.bytes_sent += (double)bytes;
        }
        fc_status st = ring_needs(g, me, s) ? fwd_step(c, f, s, cur, reqs, 2) : FC_OK;
        if (st == FC_OK)
            st = ring_wait(c, reqs, 2, ring_peers_text(c, "key/value shards", left, right));
        if (st != FC_OK) {
            ring_abandon(c, &reqs[0], 1, true);
            ring_abandon(c, &reqs[1], 1, false);
            return st;
        }
    }
    for (int k = 0; k < f->count; k++)
        finish_slice(c, &f->slices[k], &f->acc[k]);
    return FC_OK;
}

fc_status fc_ring_attention(const fc_attention_desc *desc, const fc_ring_options *options, MPI_Comm comm)
{
    ring_ctx c;
    fc_status st = ring_begin(&c, "fc_ring_attention", desc, NULL, options, comm);
    if (st == FC_OK) {
        fwd_state f = {0};
        st = fwd_alloc(&c, &f);
        if (st == FC_OK)
            st = fwd_run(&c, &f);
        fwd_free(&c, &f);
    }
    ring_end(&c);
    return st;
}
