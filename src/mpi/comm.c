/* Transfers: every wait is bounded, so a missing or mismatched rank gives an error, never a hang,
 * and what a failed call leaves outstanding is kept (leftover.c) rather than freed under MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ring.h"

double ring_now(void) { return MPI_Wtime(); }

fc_status ring_wait(ring_ctx *c, MPI_Request *reqs, int n, const char *what)
{
    const double t0 = ring_now();
    long nap_ns = 20000;
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return ring_fail(FC_ERR_BACKEND, "%s: rank %d of %d: MPI failed while waiting for %s", c->fn, c->geom.rank,
                             c->geom.ranks, what);
        if (done)
            break;
        if (ring_now() - t0 > c->deadline_s)
            return ring_fail(FC_ERR_BACKEND, "%s: rank %d of %d timed out after %g s waiting for %s", c->fn,
                             c->geom.rank, c->geom.ranks, c->deadline_s, what);
        /* an earlier call's leftovers may be what another rank is waiting for */
        ring_leftovers_poll();
        /* sleep rather than spin (the other ranks' compute threads may share this core), longer
         * the longer the wait: ≤ 256 µs late, a few thousand wake-ups a second at most */
        nanosleep(&(struct timespec){0, nap_ns}, NULL);
        nap_ns = nap_ns < 256000 ? 2 * nap_ns : 256000;
    }
    c->t.wait += ring_now() - t0;
    return FC_OK;
}

const char *ring_peers_text(const ring_ctx *c, const char *what, int from, int to)
{
    static _Thread_local char text[160];
    int n = snprintf(text, sizeof text, "%s", what);
    if (from >= 0 && n < (int)sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, " from rank %d", from);
    if (to >= 0 && n < (int)sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, "%s to rank %d", from >= 0 ? " and" : "", to);
    return text;
}

void ring_progress(MPI_Request *reqs, int n)
{
    int done;
    MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
}

void ring_abandon(ring_ctx *c, MPI_Request *reqs, int n, bool receives)
{
    for (int k = 0; k < n; k++) {
        if (reqs[k] == MPI_REQUEST_NULL)
            continue;
        if (receives)
            MPI_Cancel(&reqs[k]);
        if (!c->left)
            c->left = ring_leftover_new();
        if (c->left)
            ring_leftover_add_request(c->left, reqs[k]);
        reqs[k] = MPI_REQUEST_NULL; /* without memory for the bookkeeping: left to MPI, buffers kept */
        c->keep_buffers = true;
    }
}

void ring_free_transfer(ring_ctx *c, void *p)
{
    if (!c->keep_buffers)
        free(p);
    else if (c->left)
        ring_leftover_add_buffer(c->left, p);
}

int ring_tag_kv(const ring_ctx *c, int shard) { return shard; }
int ring_tag_dkv(const ring_ctx *c, int shard) { return c->geom.ranks + shard; }
