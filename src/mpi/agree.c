/* Before any data moves, every rank checks its own description and the ranks exchange them: a rank
 * whose description is bad, or descriptions that differ where they must agree, fail on every rank
 * with the same message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

/* Fields every rank must agree on, then this rank's rows. */
enum { F_OK, F_BATCH, F_QH, F_KVH, F_D, F_DV, F_QT, F_KT, F_VT, F_OT, F_SCALE, F_SOFTCAP, F_WINDOWS, F_PREFIX,
       F_SINK, F_ALIBI, F_STATS, F_SHARDING, F_OP, F_AGREED, F_QLEN = F_AGREED, F_KVLEN, F_QSTART, F_KVSTART,
       F_COUNT };

static const char *const field_names[F_AGREED] = {
    "", "desc.batch", "desc.q_heads", "desc.kv_heads", "desc.head_dim", "desc.v_head_dim", "desc.q.dtype",
    "desc.k.dtype", "desc.v.dtype", "desc.out.dtype", "desc.scale", "desc.softcap",
    "desc.vis.window / batch_window", "desc.vis.prefix", "desc.sink", "desc.alibi",
    "desc.stats (given or not)", "options.sharding", "the operation (forward / backward)"};

typedef struct ring_record {
    int64_t f[F_COUNT];
    char msg[320];
} ring_record;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

static int64_t hash_i64(uint64_t h, int64_t v) { return (int64_t)fnv(h, &v, sizeof v); }

static void fill_agreed(const ring_ctx *c, int64_t *f, bool backward)
{
    const fc_attention_desc *d = c->d;
    f[F_BATCH] = d->batch, f[F_QH] = d->q_heads, f[F_KVH] = d->kv_heads, f[F_D] = d->head_dim, f[F_DV] = c->Dv;
    f[F_QT] = d->q.dtype, f[F_KT] = d->k.dtype, f[F_VT] = d->v.dtype, f[F_OT] = d->out.dtype;
    memcpy(&f[F_SCALE], &d->scale, sizeof d->scale);
    float cap = d->softcap;
    f[F_SOFTCAP] = (int64_t)fnv(1469598103934665603ull, &cap, sizeof cap);
    uint64_t hw = 1469598103934665603ull, hp = hw, hs = hw, ha = hw;
    for (int64_t b = 0; b < d->batch; b++) {
        const fc_window *w = d->vis.batch_window ? &d->vis.batch_window[b] : &d->vis.window;
        const int64_t v[4] = {w->enabled, w->left, w->right, w->align};
        hw = fnv(hw, v, sizeof v);
        if (d->vis.prefix)
            hp = (uint64_t)hash_i64(hp, d->vis.prefix[b]);
        for (int64_t n = 0; d->alibi.slopes && n < d->q_heads; n++)
            ha = fnv(ha, &d->alibi.slopes[b * d->alibi.stride_batch + n * d->alibi.stride_head], sizeof(float));
    }
    if (d->sink)
        hs = fnv(hs, d->sink, (size_t)d->q_heads * sizeof(float));
    f[F_WINDOWS] = (int64_t)hw;
    f[F_PREFIX] = d->vis.prefix ? (int64_t)hp : 0;
    f[F_SINK] = d->sink ? (int64_t)hs : 0;
    f[F_ALIBI] = d->alibi.slopes ? hash_i64(ha, d->alibi.sqrt_distance) : 0;
    f[F_STATS] = d->stats.max || d->stats.sum;
    f[F_SHARDING] = c->opt.sharding;
    f[F_OP] = backward;
}

/* What the ring does not take (yet): features whose data is indexed by gathered rows or columns. */
static fc_status check_supported(const ring_ctx *c, bool backward)
{
    const fc_attention_desc *d = c->d;
    const char *fn = c->fn;
    const char *bad = d->rope_dim ? "desc.rope_dim (rope features)"
                      : d->bias.data ? "desc.bias"
                      : d->vis.mask.data ? "desc.vis.mask"
                      : d->dropout.keep_bits && d->dropout.keep_prob != 0 && d->dropout.keep_prob < 1 ? "desc.dropout"
                      : d->sparse.indices ? "desc.sparse"
                      : d->q_lens || d->kv_lens ? "desc.q_lens / kv_lens (per-batch lengths)"
                      : d->packed ? "desc.packed"
                      : d->kv_starts ? "desc.kv_starts"
                      : d->kv.k_batches || d->kv.v_batches || d->kv.block_table ? "desc.kv (per-batch or paged storage)"
                      : d->k.dtype == FC_I8 || d->v.dtype == FC_I8 ? "int8 keys / values"
                      : d->out.dtype == FC_I8 ? "an int8 output"
                      : NULL;
    if (bad)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: %s is not supported by the ring", fn, bad);
    if (c->opt.sharding != FC_RING_CONTIGUOUS && c->opt.sharding != FC_RING_ZIGZAG)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: options.sharding must be FC_RING_CONTIGUOUS or FC_RING_ZIGZAG, got %d",
                         fn, (int)c->opt.sharding);
    if (d->q_len < 0 || d->kv_len < 0)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: desc.q_len and desc.kv_len must be >= 0 (0 = an empty shard), got %lld, %lld",
                         fn, (long long)d->q_len, (long long)d->kv_len);
    if (backward && (!d->stats.max || !d->stats.sum))
        return ring_fail(FC_ERR_NULL_ARG, "%s: desc.stats.max and desc.stats.sum (the forward's statistics) are required",
                         fn);
    return FC_OK;
}

/* libflashc's own validation on this rank's shard; an empty side stands in as one row of scratch. */
static fc_status check_with_flashc(const ring_ctx *c, bool backward)
{
    fc_attention_desc d = *c->d;
    fc_attention_grads g = c->g ? *c->g : (fc_attention_grads){0};
    const bool q_empty = d.q_len == 0, kv_empty = d.kv_len == 0;
    float *dummy = NULL;
    if (q_empty || kv_empty) {
        const int64_t r = d.stats.replicas > 0 ? d.stats.replicas : 1;
        const int64_t dim = c->D > c->Dv ? c->D : c->Dv, per = dim > r ? dim : r;
        dummy = ring_alloc((size_t)(d.batch * d.q_heads), (size_t)per * sizeof(float) * 2, "a stand-in row");
        if (!dummy)
            return FC_ERR_NO_MEMORY;
    }
    if (q_empty) {
        d.q_len = 1;
        d.q = fc_tensor_bnsd(dummy, d.q.dtype, d.q_heads, 1, c->D);
        d.out = fc_tensor_bnsd(dummy, d.out.dtype, d.q_heads, 1, c->Dv);
        if (d.stats.max)
            d.stats.max = dummy, d.stats.sum = dummy;
        g.d_out = fc_tensor_bnsd(dummy, g.d_out.dtype, d.q_heads, 1, c->Dv);
        g.dq = fc_tensor_bnsd(dummy, g.dq.dtype, d.q_heads, 1, c->D);
    }
    if (kv_empty) {
        d.kv_len = 1;
        d.k = fc_tensor_bnsd(dummy, d.k.dtype, d.kv_heads, 1, c->D);
        d.v = fc_tensor_bnsd(dummy, d.v.dtype, d.kv_heads, 1, c->Dv);
        g.dk = fc_tensor_bnsd(dummy, g.dk.dtype, d.kv_heads, 1, c->D);
        g.dv = fc_tensor_bnsd(dummy, g.dv.dtype, d.kv_heads, 1, c->Dv);
    }
    fc_plan *plan = NULL;
    const fc_status st = backward ? fc_plan_create_backward(&d, &g, NULL, &plan) : fc_plan_create(&d, NULL, &plan);
    fc_plan_destroy(plan);
    free(dummy);
    return st == FC_OK ? FC_OK : ring_fail_flashc(st, c->fn);
}

static fc_status check_local(ring_ctx *c, bool backward)
{
    if (!c->d)
        return ring_fail(FC_ERR_NULL_ARG, "%s: desc is NULL", c->fn);
    if (backward && !c->g)
        return ring_fail(FC_ERR_NULL_ARG, "%s: grads is NULL", c->fn);
    fc_status st = check_supported(c, backward);
    if (st == FC_OK)
        st = check_with_flashc(c, backward);
    if (st == FC_OK && backward && c->d->sink && !c->g->dsink)
        st = ring_fail(FC_ERR_NULL_ARG, "%s: grads.dsink is NULL while desc.sink is set", c->fn);
    return st;
}

/* The first disagreement, reported identically on every rank. */
static fc_status compare(ring_ctx *c, const ring_record *all)
{
    const int P = c->geom.ranks;
    for (int r = 0; r < P; r++)
        if (all[r].f[F_OK] != FC_OK)
            return ring_fail((fc_status)all[r].f[F_OK], "%s: rank %d rejected its description: %s", c->fn, r, all[r].msg);
    for (int k = 1; k < F_AGREED; k++)
        for (int r = 1; r < P; r++)
            if (all[r].f[k] != all[0].f[k])
                return ring_fail(FC_ERR_INVALID_ARG, "%s: %s differs across ranks: rank 0 has %lld, rank %d has %lld%s",
                                 c->fn, field_names[k], (long long)all[0].f[k], r, (long long)all[r].f[k],
                                 k >= F_SCALE && k <= F_ALIBI ? " (compared by value hash)" : "");
    int64_t(*rows)[4] = ring_alloc((size_t)P, sizeof *rows, "the ranks' rows");
    if (!rows)
        return FC_ERR_NO_MEMORY;
    for (int r = 0; r < P; r++)
        memcpy(rows[r], &all[r].f[F_QLEN], sizeof rows[r]);
    const fc_status st = ring_geom_build(c, (const int64_t(*)[4])rows);
    free(rows);
    return st;
}

static fc_status exchange(ring_ctx *c, const ring_record *mine, ring_record *all)
{
    MPI_Request req;
    if (MPI_Iallgather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, c->comm, &req) != MPI_SUCCESS)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI_Iallgather of the descriptions failed", c->fn);
    return ring_wait(c, &req, 1, "the other ranks' descriptions", -1);
}

fc_status ring_begin(ring_ctx *c, const char *fn, const fc_attention_desc *d, const fc_attention_grads *g,
                     const fc_ring_options *opt, MPI_Comm comm)
{
    memset(c, 0, sizeof *c);
    c->comm = MPI_COMM_NULL;
    c->fn = fn, c->d = d, c->g = g;
    c->opt = opt ? *opt : fc_ring_options_init();
    c->t_start = ring_now();
    const char *env = getenv("FLASHC_RING_TIMEOUT");
    c->deadline_s = c->opt.timeout_s > 0 ? c->opt.timeout_s : env && atof(env) > 0 ? atof(env) : 120;
    ring_clear_error();
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI is not initialized (call MPI_Init first)", fn);
    if (comm == MPI_COMM_NULL)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: comm is MPI_COMM_NULL", fn);
    MPI_Request req;
    if (MPI_Comm_idup(comm, &c->comm, &req) != MPI_SUCCESS)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI_Comm_idup failed", fn);
    fc_status st = ring_wait(c, &req, 1, "the communicator duplicate", -1);
    if (st != FC_OK)
        return st;
    MPI_Comm_size(c->comm, &c->geom.ranks);
    MPI_Comm_rank(c->comm, &c->geom.rank);

    ring_record mine = {{0}, ""};
    const bool backward = g != NULL || strstr(fn, "backward") != NULL;
    if (d) {
        c->B = d->batch, c->Nq = d->q_heads, c->Nkv = d->kv_heads, c->D = d->head_dim;
        c->Dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    }
    st = check_local(c, backward);
    if (st == FC_OK) {
        fill_agreed(c, mine.f, backward);
        mine.f[F_QLEN] = d->q_len, mine.f[F_KVLEN] = d->kv_len;
        mine.f[F_QSTART] = d->vis.q_start, mine.f[F_KVSTART] = d->vis.kv_start;
    } else {
        snprintf(mine.msg, sizeof mine.msg, "%s", fc_ring_last_error());
    }
    mine.f[F_OK] = st;
    ring_record *all = ring_alloc((size_t)c->geom.ranks, sizeof *all, "the ranks' descriptions");
    if (!all)
        return FC_ERR_NO_MEMORY; /* the other ranks time out: nothing better is possible here */
    st = exchange(c, &mine, all);
    if (st == FC_OK) {
        int *tag_ub = NULL, found = 0;
        MPI_Comm_get_attr(c->comm, MPI_TAG_UB, &tag_ub, &found);
        if (found && tag_ub && 2 * (int64_t)c->geom.ranks > *tag_ub)
            st = ring_fail(FC_ERR_INVALID_ARG, "%s: %d ranks need tags up to %d; MPI_TAG_UB is %d", fn, c->geom.ranks,
                           2 * c->geom.ranks, *tag_ub);
    }
    if (st == FC_OK) {
        c->win = ring_alloc((size_t)c->B, sizeof *c->win, "the windows");
        c->block_prefix = ring_alloc((size_t)c->B, sizeof *c->block_prefix, "the block prefixes");
        st = c->win && c->block_prefix ? compare(c, all) : FC_ERR_NO_MEMORY;
    }
    free(all);
    return st;
}

void ring_end(ring_ctx *c)
{
    ring_geom_free(&c->geom);
    free(c->win), free(c->block_prefix), free(c->ws);
    c->win = NULL, c->block_prefix = NULL, c->ws = NULL;
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    c->t.total = ring_now() - c->t_start;
    if (c->opt.timing)
        *c->opt.timing = c->t;
}

fc_ring_options fc_ring_options_init(void)
{
    return (fc_ring_options){.sharding = FC_RING_CONTIGUOUS, .threads = 0, .timeout_s = 0, .timing = NULL};
}
