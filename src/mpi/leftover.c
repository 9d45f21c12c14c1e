/* What a failed call leaves behind.  MPI forbids freeing a pending nonblocking collective (the
 * communicator duplicate, the description exchange) and lets a cancelled receive or a pending send
 * still touch its buffer; a timed-out call therefore hands its outstanding requests, the memory they
 * may touch and its duplicate communicator to a process-wide list instead of releasing them.  The
 * list is tested at every later fc_ring_* call (and during its waits) and at MPI_Finalize (through
 * a delete callback on MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize); an entry is
 * released once its requests have completed.  Entries still pending after MPI_Finalize are kept
 * (reachable from the list, not leaked) until the process ends. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "ring.h"

struct ring_leftover {
    MPI_Request *reqs;
    int nreq, req_cap;
    void **bufs;
    int nbuf, buf_cap;
    MPI_Comm *comm;          /* the call's duplicate (heap cell: an MPI_Comm_idup may still write it) */
    MPI_Comm parent;         /* while that MPI_Comm_idup is outstanding: the communicator it duplicates */
    ring_leftover_then then; /* runs once the requests completed: may post more */
    double wait_s;           /* how long MPI_Finalize waits for the entry */
    struct ring_leftover *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ring_leftover *kept;   /* under lock */
static atomic_int kept_count; /* read without the lock: is there anything to test? */
static int finalize_keyval = MPI_KEYVAL_INVALID;

static bool grow(void **arr, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return true;
    const int cap2 = need < 4 ? 4 : 2 * need;
    void *p = realloc(*arr, (size_t)cap2 * size);
    if (!p)
        return false;
    *arr = p, *cap = cap2;
    return true;
}

ring_leftover *ring_leftover_new(void) { return calloc(1, sizeof(ring_leftover)); }

/* When memory for the bookkeeping itself runs out the entry cannot be kept: the request then stays
 * unreferenced (its buffer is kept, so nothing is freed under MPI). */
void ring_leftover_add_request(ring_leftover *e, MPI_Request req)
{
    if (req != MPI_REQUEST_NULL && grow((void **)&e->reqs, &e->req_cap, e->nreq + 1, sizeof *e->reqs))
        e->reqs[e->nreq++] = req;
}

void ring_leftover_add_buffer(ring_leftover *e, void *p)
{
    if (p && grow((void **)&e->bufs, &e->buf_cap, e->nbuf + 1, sizeof *e->bufs))
        e->bufs[e->nbuf++] = p;
}

void ring_leftover_set_comm(ring_leftover *e, MPI_Comm *comm) { e->comm = comm; }
void ring_leftover_set_parent(ring_leftover *e, MPI_Comm parent) { e->parent = parent; }
void ring_leftover_then_do(ring_leftover *e, ring_leftover_then then) { e->then = then; }
MPI_Comm ring_leftover_comm(const ring_leftover *e) { return e->comm ? *e->comm : MPI_COMM_NULL; }
bool ring_leftover_pending(const ring_leftover *e) { return e && (e->nreq > 0 || e->then); }

static void release(ring_leftover *e)
{
    for (int k = 0; k < e->nbuf; k++)
        free(e->bufs[k]);
    if (e->comm && *e->comm != MPI_COMM_NULL)
        MPI_Comm_free(e->comm);
    free(e->comm), free(e->reqs), free(e->bufs), free(e);
}

void ring_leftover_free(ring_leftover *e)
{
    if (e)
        release(e);
}

/* Advances one entry; true when it is finished (its requests completed, nothing more to post). */
static bool advance(ring_leftover *e)
{
    for (;;) {
        if (e->nreq > 0) {
            int done = 0;
            if (MPI_Testall(e->nreq, e->reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS || !done)
                return false;
            e->nreq = 0;
            e->parent = MPI_COMM_NULL;
        }
        if (!e->then)
            return true;
        const ring_leftover_then then = e->then;
        e->then = NULL;
        then(e);
    }
}

static int poll_locked(void)
{
    int left = 0;
    for (ring_leftover **p = &kept; *p;) {
        ring_leftover *e = *p;
        if (advance(e)) {
            *p = e->next;
            release(e);
            atomic_fetch_sub(&kept_count, 1);
        } else {
            p = &e->next, left++;
        }
    }
    return left;
}

int ring_leftovers_poll(void)
{
    if (atomic_load(&kept_count) == 0)
        return 0;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
        return atomic_load(&kept_count);
    pthread_mutex_lock(&lock);
    const int left = poll_locked();
    pthread_mutex_unlock(&lock);
    return left;
}

bool ring_leftovers_duplicating(MPI_Comm parent)
{
    if (ring_leftovers_poll() == 0)
        return false;
    bool found = false;
    pthread_mutex_lock(&lock);
    for (ring_leftover *e = kept; e && !found; e = e->next)
        found = e->parent != MPI_COMM_NULL && e->parent == parent;
    pthread_mutex_unlock(&lock);
    return found;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else: the last chance to finish
 * what the failed calls left, for at most the longest timeout they had. */
static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    double bound = 0;
    pthread_mutex_lock(&lock);
    for (ring_leftover *e = kept; e; e = e->next)
        bound = e->wait_s > bound ? e->wait_s : bound;
    const double t0 = MPI_Wtime();
    while (poll_locked() > 0 && MPI_Wtime() - t0 < bound) {
        pthread_mutex_unlock(&lock);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    MPI_Comm_free_keyval(&finalize_keyval);
    return MPI_SUCCESS;
}

void ring_leftover_keep(ring_leftover *e, double wait_s)
{
    if (!e)
        return;
    if (!advance(e)) {
        e->wait_s = wait_s;
        pthread_mutex_lock(&lock);
        if (finalize_keyval == MPI_KEYVAL_INVALID &&
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval, NULL) == MPI_SUCCESS)
            MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
        e->next = kept, kept = e;
        atomic_fetch_add(&kept_count, 1);
        pthread_mutex_unlock(&lock);
        return;
    }
    release(e);
}
