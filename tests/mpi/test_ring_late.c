/*
 * What a timeout leaves behind: a rank that reaches the ring after the others gave up, and ranks
 * that give up in the middle of the ring.  Afterwards every process must go on with MPI (the
 * caller's communicator, MPI_COMM_WORLD, a new ring call, MPI_Finalize): nothing the failed call
 * started may complete into memory the library has released.
 *   mpirun -np N test_mpi_ring_late
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "flashc_mpi.h"

enum { L = 4, D = 16, BIG = 3000 };

typedef struct shard {
    int64_t rows;
    float *q, *k, *v, *out, *dout, *dq, *dk, *dv, *max, *sum;
} shard;

static shard shard_new(int64_t rows)
{
    shard s = {.rows = rows};
    float **bufs[] = {&s.q, &s.k, &s.v, &s.out, &s.dout, &s.dq, &s.dk, &s.dv};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) {
        *bufs[k] = malloc((size_t)rows * D * sizeof(float));
        for (int64_t e = 0; e < rows * D; e++)
            (*bufs[k])[e] = (float)((e * 7 + k) % 13) / 13.0f - 0.5f;
    }
    s.max = calloc((size_t)rows, sizeof(float)), s.sum = malloc((size_t)rows * sizeof(float));
    for (int64_t i = 0; i < rows; i++)
        s.sum[i] = 1; /* statistics the backward can use */
    return s;
}

static void shard_free(shard *s)
{
    free(s->q), free(s->k), free(s->v), free(s->out), free(s->dout), free(s->dq), free(s->dk), free(s->dv);
    free(s->max), free(s->sum);
}

/* A causal problem whose rank r holds rows [start, start + rows). */
static fc_attention_desc desc_of(shard *s, int64_t start)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = 1, d.kv_heads = 1, d.head_dim = D, d.q_len = d.kv_len = s->rows;
    d.vis.q_start = d.vis.kv_start = start;
    d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    d.q = fc_tensor_bnsd(s->q, FC_F32, 1, s->rows, D);
    d.k = fc_tensor_bnsd(s->k, FC_F32, 1, s->rows, D);
    d.v = fc_tensor_bnsd(s->v, FC_F32, 1, s->rows, D);
    d.out = fc_tensor_bnsd(s->out, FC_F32, 1, s->rows, D);
    d.stats = (fc_stats){.max = s->max, .sum = s->sum};
    return d;
}

static fc_ring_options options(double timeout_s)
{
    fc_ring_options o = fc_ring_options_init();
    o.threads = 1, o.timeout_s = timeout_s;
    return o;
}

/* A small ring call over comm that must succeed on every rank. */
static void expect_works(const char *what, MPI_Comm comm, int rank)
{
    shard s = shard_new(L);
    fc_attention_desc d = desc_of(&s, (int64_t)rank * L);
    const fc_ring_options o = options(60);
    const fc_status st = fc_ring_attention(&d, &o, comm);
    TC_CHECK(st == FC_OK, "%s: a good call afterwards failed: %s", what, fc_ring_last_error());
    shard_free(&s);
}

static bool contains(const char *text, const char *needle) { return strstr(text, needle) != NULL; }

/* The defect this guards against: the late rank's arrival completed the others' abandoned
 * communicator duplication into released memory, and their next MPI call crashed. */
static void late_rank(int rank, int ranks)
{
    tc_context("a late rank");
    const int late = ranks - 1;
    MPI_Comm ring;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    shard s = shard_new(L);
    fc_attention_desc d = desc_of(&s, (int64_t)rank * L);
    const fc_ring_options o = options(1);
    if (rank == late)
        sleep(3);
    const fc_status st = fc_ring_attention(&d, &o, ring);
    const char *msg = fc_ring_last_error();
    char me[32];
    snprintf(me, sizeof me, "rank %d of %d", rank, ranks);
    TC_CHECK(st == FC_ERR_BACKEND, "rank %d: got %s \"%s\", want FC_ERR_BACKEND", rank, fc_status_name(st), msg);
    if (rank != late)
        TC_CHECK(contains(msg, me) && contains(msg, "timed out") && contains(msg, "every rank"),
                 "rank %d: the timeout should name this rank and what it waited for: \"%s\"", rank, msg);
    TC_CHECK(!contains(msg, "rank -1"), "rank %d: \"%s\"", rank, msg);
    MPI_Barrier(MPI_COMM_WORLD); /* crashed here */
    MPI_Barrier(ring);           /* the caller's communicator stays usable */
    expect_works("after a late rank", MPI_COMM_WORLD, rank);
    expect_works("after a late rank, on the caller's communicator", ring, rank);
    MPI_Comm_free(&ring);
    shard_free(&s);
}

/* The others retry at once; the late rank's first call then hears that they gave up (well before
 * its own timeout), and its retry meets theirs. */
static void late_rank_retries(int rank, int ranks)
{
    tc_context("a late rank, everyone retries");
    const int late = ranks - 1;
    MPI_Comm ring;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    shard s = shard_new(L);
    fc_attention_desc d = desc_of(&s, (int64_t)rank * L);
    const fc_ring_options quick = options(1), patient = options(60);
    fc_status st;
    if (rank == late) {
        sleep(3);
        const double t0 = MPI_Wtime();
        st = fc_ring_attention(&d, &patient, ring);
        const char *msg = fc_ring_last_error();
        TC_CHECK(st == FC_ERR_BACKEND && contains(msg, "given up") && contains(msg, "rank 0 "),
                 "late rank: got %s \"%s\", want FC_ERR_BACKEND naming rank 0, which had given up", fc_status_name(st),
                 msg);
        TC_CHECK(MPI_Wtime() - t0 < 30, "late rank: heard of it after %.1f s", MPI_Wtime() - t0);
    } else {
        st = fc_ring_attention(&d, &quick, ring);
        TC_CHECK(st == FC_ERR_BACKEND, "rank %d: got %s, want FC_ERR_BACKEND", rank, fc_status_name(st));
    }
    st = fc_ring_attention(&d, &patient, ring);
    TC_CHECK(st == FC_OK, "rank %d: the retry failed: %s \"%s\"", rank, fc_status_name(st), fc_ring_last_error());
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&ring);
    shard_free(&s);
}

/* Rank 0 holds most of the sequence (long compute); the others give up after `timeout_s`, at
 * whichever stage that finds them (duplication, exchange, or waiting for key/value shards and
 * gradient accumulators with transfers outstanding).  Any of FC_OK / FC_ERR_BACKEND may result;
 * what matters is what follows. */
static void give_up_mid_ring(int rank, int ranks, double timeout_s, bool backward)
{
    tc_context("giving up after %g s (%s)", timeout_s, backward ? "backward" : "forward");
    const int64_t rows = rank == 0 ? BIG : 1, start = rank == 0 ? 0 : BIG + rank - 1;
    shard s = shard_new(rows);
    fc_attention_desc d = desc_of(&s, start);
    const fc_ring_options o = options(rank == 0 ? 2 : timeout_s);
    const fc_attention_grads g = {.d_out = fc_tensor_bnsd(s.dout, FC_F32, 1, rows, D),
                                  .dq = fc_tensor_bnsd(s.dq, FC_F32, 1, rows, D),
                                  .dk = fc_tensor_bnsd(s.dk, FC_F32, 1, rows, D),
                                  .dv = fc_tensor_bnsd(s.dv, FC_F32, 1, rows, D)};
    const fc_status st = backward ? fc_ring_attention_backward(&d, &g, &o, MPI_COMM_WORLD)
                                  : fc_ring_attention(&d, &o, MPI_COMM_WORLD);
    const char *msg = fc_ring_last_error();
    TC_CHECK(st == FC_OK || (st == FC_ERR_BACKEND && (contains(msg, "timed out") || contains(msg, "given up"))),
             "rank %d: got %s \"%s\"", rank, fc_status_name(st), msg);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_works("after giving up", MPI_COMM_WORLD, rank);
    shard_free(&s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    late_rank(rank, ranks);
    late_rank_retries(rank, ranks);
    const double timeouts[] = {0.001, 0.02, 0.2};
    for (int k = 0; k < 3; k++)
        for (int backward = 0; backward < 2; backward++)
            give_up_mid_ring(rank, ranks, timeouts[k], backward);
    tc_context("%s", "");
    int fails = tc_failures(), all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_mpi_ring_late (np %d): %d checks on rank 0, %d failures over all ranks\n", ranks, tc_checks(), all);
    MPI_Finalize(); /* finishes what the failed calls left (leftover.c) */
    return all ? 1 : 0;
}
