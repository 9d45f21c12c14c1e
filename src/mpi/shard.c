/* Sharding geometry: which global positions each rank holds, which blocks are visible, and which
 * key/value shards must travel. */
#include <stdlib.h>

#include "ring.h"

int64_t fc_ring_shard(fc_ring_sharding sharding, int64_t total, int rank, int ranks, int64_t start[2], int64_t len[2])
{
    start[0] = start[1] = len[0] = len[1] = 0;
    if (total < 0 || ranks < 1 || rank < 0 || rank >= ranks)
        return 0;
    const int64_t parts = sharding == FC_RING_ZIGZAG ? 2 * (int64_t)ranks : ranks;
    const int64_t base = total / parts, extra = total % parts;
    /* chunk c starts at c·base + min(c, extra) and has base + (c < extra) positions */
    const int64_t chunks[2] = {rank, sharding == FC_RING_ZIGZAG ? parts - 1 - rank : -1};
    for (int k = 0; k < 2 && chunks[k] >= 0; k++) {
        const int64_t c = chunks[k];
        start[k] = c * base + (c < extra ? c : extra);
        len[k] = base + (c < extra);
    }
    return len[0] + len[1];
}

/* Contiguous: each rank's own start positions chain; zig-zag: one start for the whole sequence and
 * lengths fixed by the chunk rule. */
fc_status ring_geom_build(ring_ctx *c, const int64_t (*rows)[4])
{
    ring_geom *g = &c->geom;
    const int P = g->ranks;
    const bool zz = c->opt.sharding == FC_RING_ZIGZAG;
    g->q_total = g->kv_total = 0;
    for (int r = 0; r < P; r++)
        g->q_total += rows[r][0], g->kv_total += rows[r][1];
    g->q0 = rows[0][2], g->kv0 = rows[0][3];
    if (g->q_total < 1 || g->kv_total < 1)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: the gathered problem has %lld query and %lld key positions; both must be >= 1",
                         c->fn, (long long)g->q_total, (long long)g->kv_total);
    ring_windows(c);
    g->q = calloc((size_t)P, sizeof *g->q);
    g->kv = calloc((size_t)P, sizeof *g->kv);
    g->needs = calloc((size_t)P * (size_t)P, 1);
    if (!g->q || !g->kv || !g->needs)
        return ring_fail(FC_ERR_NO_MEMORY, "%s: out of memory for the ring geometry", c->fn);
    int64_t q_at = 0, kv_at = 0;
    for (int r = 0; r < P; r++) {
        const int64_t *row = rows[r];
        if (zz) {
            int64_t st[2], ln[2];
            for (int side = 0; side < 2; side++) {
                const int64_t total = side ? g->kv_total : g->q_total, want_start = side ? g->kv0 : g->q0;
                const int64_t n = fc_ring_shard(FC_RING_ZIGZAG, total, r, P, st, ln);
                if (row[side] != n || row[2 + side] != want_start)
                    return ring_fail(FC_ERR_INVALID_ARG,
                                     "%s: zig-zag sharding of %lld %s positions over %d ranks gives rank %d %lld rows "
                                     "starting the sequence at %lld; rank %d has desc.%s = %lld, desc.vis.%s = %lld",
                                     c->fn, (long long)total, side ? "key" : "query", P, r, (long long)n,
                                     (long long)want_start, r, side ? "kv_len" : "q_len", (long long)row[side],
                                     side ? "kv_start" : "q_start", (long long)row[2 + side]);
                ring_span *sp = side ? g->kv[r] : g->q[r];
                sp[0] = (ring_span){st[0], ln[0]}, sp[1] = (ring_span){st[1], ln[1]};
            }
        } else {
            if (row[2] != g->q0 + q_at || row[3] != g->kv0 + kv_at)
                return ring_fail(FC_ERR_INVALID_ARG,
                                 "%s: contiguous shards must follow each other: rank %d should start at query %lld / key "
                                 "%lld, it has desc.vis.q_start = %lld, desc.vis.kv_start = %lld",
                                 c->fn, r, (long long)(g->q0 + q_at), (long long)(g->kv0 + kv_at), (long long)row[2],
                                 (long long)row[3]);
            g->q[r][0] = (ring_span){q_at, row[0]};
            g->kv[r][0] = (ring_span){kv_at, row[1]};
            q_at += row[0], kv_at += row[1];
        }
    }
    for (int r = 0; r < P; r++)
        for (int s = 0; s < P; s++)
            for (int a = 0; a < 2; a++)
                for (int k = 0; k < 2; k++)
                    g->needs[r * P + s] |= ring_block_visible(c, g->q[r][a], g->kv[s][k]);
    return FC_OK;
}

void ring_geom_free(ring_geom *g)
{
    free(g->q), free(g->kv), free(g->needs);
    g->q = NULL, g->kv = NULL, g->needs = NULL;
}

/* Far beyond any position, small enough that adding one never overflows. */
#define RING_FAR ((int64_t)1 << 61)

static int64_t shift_bound(int64_t v, int64_t by)
{
    if (v == FC_UNBOUNDED)
        return v;
    const __int128 s = (__int128)v + by;
    return s > RING_FAR ? RING_FAR : s < -RING_FAR ? -RING_FAR : (int64_t)s;
}

fc_status ring_windows(ring_ctx *c)
{
    const fc_visibility *vis = &c->d->vis;
    const int64_t diag = c->geom.kv_total - c->geom.q_total;
    for (int64_t b = 0; b < c->B; b++) {
        fc_window w = vis->batch_window ? vis->batch_window[b] : vis->window;
        /* −left ≤ x − diag ≤ right  ⇔  −(left − diag) ≤ x ≤ right + diag */
        if (w.enabled && w.align == FC_ALIGN_BOTTOM_RIGHT)
            w.left = shift_bound(w.left, -diag), w.right = shift_bound(w.right, diag);
        w.align = FC_ALIGN_TOP_LEFT;
        c->win[b] = w;
    }
    return FC_OK;
}

bool ring_block_visible(const ring_ctx *c, ring_span q, ring_span k)
{
    if (q.len <= 0 || k.len <= 0)
        return false;
    const ring_geom *g = &c->geom;
    /* x = global column − global row over the block */
    const __int128 x_lo = (__int128)g->kv0 + k.off - ((__int128)g->q0 + q.off + q.len - 1);
    const __int128 x_hi = (__int128)g->kv0 + k.off + k.len - 1 - ((__int128)g->q0 + q.off);
    for (int64_t b = 0; b < c->B; b++) {
        const fc_window *w = &c->win[b];
        if (c->d->vis.prefix && c->d->vis.prefix[b] > k.off)
            return true;
        if (!w->enabled)
            return true;
        const bool lo_ok = w->left == FC_UNBOUNDED || x_hi >= -(__int128)w->left;
        const bool hi_ok = w->right == FC_UNBOUNDED || x_lo <= (__int128)w->right;
        const bool nonempty = w->left == FC_UNBOUNDED || w->right == FC_UNBOUNDED || -(__int128)w->left <= w->right;
        if (lo_ok && hi_ok && nonempty)
            return true;
    }
    return false;
}

bool ring_kv_moves(const ring_geom *g, int s, int t)
{
    for (int u = t; u < g->ranks; u++)
        if (ring_needs(g, ring_mod(s + u, g->ranks), s))
            return true;
    return false;
}

int64_t ring_max_kv_rows(const ring_geom *g)
{
    int64_t m = 0;
    for (int r = 0; r < g->ranks; r++)
        m = g->kv[r][0].len + g->kv[r][1].len > m ? g->kv[r][0].len + g->kv[r][1].len : m;
    return m;
}

int ring_slices(const ring_ctx *c, ring_slice **slices)
{
    const ring_geom *g = &c->geom;
    const int64_t per = ring_rows_per_call(c, ring_max_kv_rows(g));
    const ring_span *mine = g->q[g->rank];
    const int64_t count = (mine[0].len + per - 1) / per + (mine[1].len + per - 1) / per;
    *slices = ring_alloc((size_t)count, sizeof **slices, "the query slices");
    if (!*slices)
        return -1;
    int n = 0;
    for (int64_t k = 0, row = 0; k < 2; row += mine[k].len, k++)
        for (int64_t a = 0; a < mine[k].len; a += per) {
            const int64_t len = mine[k].len - a < per ? mine[k].len - a : per;
            (*slices)[n++] = (ring_slice){row + a, {mine[k].off + a, len}};
        }
    return n;
}
