/* Transfers: every wait is bounded, so a missing or mismatched rank gives an error, never a hang. */
#include <time.h>

#include "ring.h"

double ring_now(void) { return MPI_Wtime(); }

fc_status ring_wait(ring_ctx *c, MPI_Request *reqs, int n, const char *what, int peer)
{
    const double t0 = ring_now();
    long nap_ns = 20000;
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return ring_fail(FC_ERR_BACKEND, "%s: MPI failed while waiting for %s (rank %d)", c->fn, what, peer);
        if (done)
            break;
        if (ring_now() - t0 > c->deadline_s)
            return ring_fail(FC_ERR_BACKEND, "%s: timed out after %.0f s waiting for %s (rank %d)", c->fn,
                             c->deadline_s, what, peer);
        /* sleep rather than spin (the other ranks' compute threads may share this core), longer
         * the longer the wait: ≤ 256 µs late, a few thousand wake-ups a second at most */
        nanosleep(&(struct timespec){0, nap_ns}, NULL);
        nap_ns = nap_ns < 256000 ? 2 * nap_ns : 256000;
    }
    c->t.wait += ring_now() - t0;
    return FC_OK;
}

void ring_progress(MPI_Request *reqs, int n)
{
    int done;
    MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
}

void ring_abandon(MPI_Request *reqs, int n)
{
    for (int k = 0; k < n; k++)
        if (reqs[k] != MPI_REQUEST_NULL) {
            MPI_Cancel(&reqs[k]);
            MPI_Request_free(&reqs[k]);
            reqs[k] = MPI_REQUEST_NULL;
        }
}

int ring_tag_kv(const ring_ctx *c, int shard) { return shard; }
int ring_tag_dkv(const ring_ctx *c, int shard) { return c->geom.ranks + shard; }
