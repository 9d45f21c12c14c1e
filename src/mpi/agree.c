/* Before any data moves, every rank checks its own description and the ranks exchange them: a rank
 * whose description is bad, or descriptions that differ where they must agree, fail on every rank
 * with the same message.  The call's private communicator is created here too; a rank that gives
 * up waiting for it leaves a note (RING_GAVE_UP) for ranks that arrive later. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agree.h"

static const char *const field_names[F_AGREED] = {
    "", "desc.batch", "desc.q_heads", "desc.kv_heads", "desc.head_dim", "desc.v_head_dim", "desc.q.dtype",
    "desc.k.dtype", "desc.v.dtype", "desc.out.dtype", "desc.scale", "desc.softcap",
    "desc.vis.window / batch_window", "desc.vis.prefix", "desc.sink", "desc.alibi",
    "desc.stats (given or not)", "options.sharding", "the operation (forward / backward)"};

static void fill_agreed(const ring_ctx *c, int64_t *f, bool backward)
{
    const fc_attention_desc *d = c->d;
    f[F_BATCH] = d->batch, f[F_QH] = d->q_heads, f[F_KVH] = d->kv_heads, f[F_D] = d->head_dim, f[F_DV] = c->Dv;
    f[F_QT] = d->q.dtype, f[F_KT] = d->k.dtype, f[F_VT] = d->v.dtype, f[F_OT] = d->out.dtype;
    memcpy(&f[F_SCALE], &d->scale, sizeof d->scale);
    const float cap = d->softcap;
    memcpy(&f[F_SOFTCAP], &cap, sizeof cap);
    for (int k = F_WINDOWS; k <= F_ALIBI; k++)
        f[k] = ring_array_hash(c, k);
    f[F_STATS] = d->stats.max || d->stats.sum;
    f[F_SHARDING] = c->opt.sharding;
    f[F_OP] = backward;
}

/* A scalar field's value as text: doubles and floats by value, the rest as integers. */
static void scalar_text(int k, int64_t v, char *out, size_t size)
{
    if (k == F_SCALE) {
        double x;
        memcpy(&x, &v, sizeof x);
        snprintf(out, size, "%.17g", x);
    } else if (k == F_SOFTCAP) {
        float x;
        memcpy(&x, &v, sizeof x);
        snprintf(out, size, "%.9g", x);
    } else {
        snprintf(out, size, "%lld", (long long)v);
    }
}

/* The first disagreement, reported identically on every rank. */
static fc_status compare(ring_ctx *c, const ring_record *all)
{
    const int P = c->geom.ranks;
    for (int r = 0; r < P; r++)
        if (all[r].f[F_OK] == RING_GAVE_UP)
            return ring_fail(FC_ERR_BACKEND, "%s: rank %d had given up on this call before every rank arrived: %s; "
                             "call again on every rank", c->fn, r, all[r].msg);
    for (int r = 0; r < P; r++)
        if (all[r].f[F_OK] != FC_OK) {
            /* a bad description anywhere is an invalid argument of the collective call */
            const fc_status st = (fc_status)all[r].f[F_OK];
            return ring_fail(st == FC_ERR_NULL_ARG ? FC_ERR_INVALID_ARG : st, "%s: rank %d rejected its description: %s",
                             c->fn, r, all[r].msg);
        }
    for (int k = 1; k < F_AGREED; k++)
        for (int r = 1; r < P; r++) {
            if (all[r].f[k] == all[0].f[k])
                continue;
            if (ring_field_is_array(k))
                return ring_array_mismatch(c, k, r);
            char a[48], b[48];
            scalar_text(k, all[0].f[k], a, sizeof a);
            scalar_text(k, all[r].f[k], b, sizeof b);
            return ring_fail(FC_ERR_INVALID_ARG, "%s: %s differs across ranks: rank 0 has %s, rank %d has %s", c->fn,
                             field_names[k], a, r, b);
        }
    int64_t(*rows)[4] = ring_alloc((size_t)P, sizeof *rows, "the ranks' rows");
    if (!rows)
        return FC_ERR_NO_MEMORY;
    for (int r = 0; r < P; r++)
        memcpy(rows[r], &all[r].f[F_QLEN], sizeof rows[r]);
    const fc_status st = ring_geom_build(c, (const int64_t(*)[4])rows);
    free(rows);
    return st;
}

/* records[0] is this rank's; every rank's land in records[1 ..]. */
static fc_status exchange(ring_ctx *c, ring_record *records)
{
    MPI_Request req;
    if (MPI_Iallgather(records, sizeof *records, MPI_BYTE, records + 1, sizeof *records, MPI_BYTE, c->comm, &req) !=
        MPI_SUCCESS)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI_Iallgather of the descriptions failed", c->fn);
    const fc_status st = ring_wait(c, &req, 1, "the other ranks' descriptions");
    if (st != FC_OK)
        ring_abandon(c, &req, 1, false);
    return st;
}

/* Run (leftover.c) once a duplicate this rank gave up on is complete, i.e. once every rank has
 * called: the later ranks wait in the description exchange; tell them. */
static void post_gave_up(ring_leftover *e)
{
    const MPI_Comm comm = ring_leftover_comm(e);
    int rank = 0, ranks = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_size(comm, &ranks) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return;
    ring_record *records = calloc((size_t)ranks + 1, sizeof *records);
    if (!records)
        return; /* the later ranks time out instead */
    records[0].f[F_OK] = RING_GAVE_UP;
    snprintf(records[0].msg, sizeof records[0].msg, "it timed out waiting for every rank to call");
    MPI_Request req;
    if (MPI_Iallgather(records, sizeof *records, MPI_BYTE, records + 1, sizeof *records, MPI_BYTE, comm, &req) ==
        MPI_SUCCESS)
        ring_leftover_add_request(e, req);
    ring_leftover_add_buffer(e, records);
}

/* The call's private communicator, created collectively but with a bounded wait: first for an
 * earlier call's duplication of the same communicator that this rank gave up on (the ranks that
 * arrive late take part in that one first), then for this one. */
static fc_status duplicate(ring_ctx *c, MPI_Comm comm)
{
    const double t0 = ring_now();
    while (ring_leftovers_duplicating(comm)) {
        if (ring_now() - t0 > c->deadline_s)
            return ring_fail(FC_ERR_BACKEND,
                             "%s: rank %d of %d timed out after %g s waiting for every rank to reach an earlier call on "
                             "this communicator that timed out here (one has not called yet, or never will)",
                             c->fn, c->geom.rank, c->geom.ranks, c->deadline_s);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    c->dup = malloc(sizeof *c->dup);
    if (!c->dup)
        return ring_fail(FC_ERR_NO_MEMORY, "%s: out of memory", c->fn);
    *c->dup = MPI_COMM_NULL;
    MPI_Request req;
    if (MPI_Comm_idup(comm, c->dup, &req) != MPI_SUCCESS)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI_Comm_idup failed", c->fn);
    const fc_status st =
        ring_wait(c, &req, 1, "every rank of the communicator to call (one has not called yet, or never will)");
    if (st != FC_OK) {
        ring_abandon(c, &req, 1, false);
        if (c->left) {
            ring_leftover_set_parent(c->left, comm);
            ring_leftover_then_do(c->left, post_gave_up);
        }
        return st;
    }
    c->comm = *c->dup;
    return FC_OK;
}

static void read_options(ring_ctx *c, const fc_ring_options *opt)
{
    c->opt = opt ? *opt : fc_ring_options_init();
    const char *env = getenv("FLASHC_RING_TIMEOUT");
    c->deadline_s = c->opt.timeout_s > 0 ? c->opt.timeout_s : env && atof(env) > 0 ? atof(env) : 120;
}

fc_status ring_begin(ring_ctx *c, const char *fn, const fc_attention_desc *d, const fc_attention_grads *g,
                     const fc_ring_options *opt, MPI_Comm comm)
{
    memset(c, 0, sizeof *c);
    c->comm = MPI_COMM_NULL;
    c->fn = fn, c->d = d, c->g = g;
    read_options(c, opt);
    c->t_start = ring_now();
    ring_clear_error();
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return ring_fail(FC_ERR_BACKEND, "%s: MPI is %s", fn,
                         finalized ? "finalized" : "not initialized (call MPI_Init first)");
    if (comm == MPI_COMM_NULL)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: comm is MPI_COMM_NULL", fn);
    ring_leftovers_poll();
    MPI_Comm_size(comm, &c->geom.ranks);
    MPI_Comm_rank(comm, &c->geom.rank);
    fc_status st = duplicate(c, comm);
    if (st != FC_OK)
        return st;

    const bool backward = g != NULL || strstr(fn, "backward") != NULL;
    if (d) {
        c->B = d->batch, c->Nq = d->q_heads, c->Nkv = d->kv_heads, c->D = d->head_dim;
        c->Dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    }
    ring_record *records = ring_alloc((size_t)c->geom.ranks + 1, sizeof *records, "the ranks' descriptions");
    if (!records)
        return FC_ERR_NO_MEMORY; /* the other ranks time out: nothing better is possible here */
    memset(records, 0, sizeof *records);
    ring_record *mine = records, *all = records + 1;
    st = ring_check_local(c, backward);
    if (st == FC_OK) {
        fill_agreed(c, mine->f, backward);
        mine->f[F_QLEN] = d->q_len, mine->f[F_KVLEN] = d->kv_len;
        mine->f[F_QSTART] = d->vis.q_start, mine->f[F_KVSTART] = d->vis.kv_start;
    } else {
        snprintf(mine->msg, sizeof mine->msg, "%s (%s on that rank)", fc_ring_last_error(), fc_status_name(st));
    }
    mine->f[F_OK] = st;
    st = exchange(c, records);
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
    ring_free_transfer(c, records);
    return st;
}

void ring_end(ring_ctx *c)
{
    ring_geom_free(&c->geom);
    free(c->win), free(c->block_prefix), free(c->ws);
    c->win = NULL, c->block_prefix = NULL, c->ws = NULL;
    if (c->left) { /* the duplicate goes with what is outstanding on it */
        ring_leftover_set_comm(c->left, c->dup);
        ring_leftover_keep(c->left, c->deadline_s);
    } else if (c->dup && !c->keep_buffers) { /* (kept: no memory to track what MPI still writes) */
        if (*c->dup != MPI_COMM_NULL)
            MPI_Comm_free(c->dup);
        free(c->dup);
    }
    c->left = NULL, c->dup = NULL, c->comm = MPI_COMM_NULL;
    c->t.total = ring_now() - c->t_start;
    if (c->opt.timing)
        *c->opt.timing = c->t;
}

fc_ring_options fc_ring_options_init(void)
{
    return (fc_ring_options){.sharding = FC_RING_CONTIGUOUS, .threads = 0, .timeout_s = 0, .timing = NULL};
}
