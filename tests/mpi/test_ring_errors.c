/*
 * Bad input under mpirun: descriptions that do not match across ranks, a rank with an invalid or
 * missing description, inconsistent shards, a rank that never arrives.  Every rank must get the
 * error with a message naming the field (never a hang), and the ring must work again afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "flashc_mpi.h"

enum { L = 8, D = 16 };

typedef struct shard {
    float q[L * 2 * D], k[L * 2 * D], v[L * 2 * D], out[L * 2 * D];
    float bias[4];
} shard;

static fc_attention_desc good(shard *s, int rank)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = 1, d.kv_heads = 1, d.head_dim = D, d.q_len = d.kv_len = L;
    d.vis.q_start = d.vis.kv_start = (int64_t)rank * L;
    d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    d.q = fc_tensor_bnsd(s->q, FC_F32, 1, L, D);
    d.k = fc_tensor_bnsd(s->k, FC_F32, 1, L, D);
    d.v = fc_tensor_bnsd(s->v, FC_F32, 1, L, D);
    d.out = fc_tensor_bnsd(s->out, FC_F32, 1, L, D);
    return d;
}

/* Every rank must fail with `status` and a message containing `needle`. */
static void expect_all(const char *what, fc_status st, fc_status status, const char *needle)
{
    const char *msg = fc_ring_last_error();
    int ok = st == status && strstr(msg, needle) != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    TC_CHECK(ok, "%s: got %s \"%s\", want %s containing \"%s\"", what, fc_status_name(st), msg, fc_status_name(status),
             needle);
    TC_CHECK(all, "%s: some rank did not report the error", what);
}

static void expect_works(const char *what, shard *s, int rank)
{
    fc_attention_desc d = good(s, rank);
    fc_ring_options o = fc_ring_options_init();
    o.threads = 1;
    const fc_status st = fc_ring_attention(&d, &o, MPI_COMM_WORLD);
    TC_CHECK(st == FC_OK, "%s: a good call afterwards failed: %s", what, fc_ring_last_error());
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    shard *s = calloc(1, sizeof *s);
    for (int k = 0; k < L * 2 * D; k++)
        s->q[k] = s->k[k] = s->v[k] = (float)((k * 7 + rank) % 13) / 13.0f;
    const int last = ranks - 1;
    fc_ring_options o = fc_ring_options_init();
    o.threads = 1, o.timeout_s = 30;
    fc_attention_desc d;

    expect_works("baseline", s, rank);

    d = good(s, rank);
    if (rank == last)
        d.head_dim = D / 2;
    expect_all("head_dim mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, "desc.head_dim differs");
    expect_works("after head_dim mismatch", s, rank);

    /* mismatches name the values, not hashes of them */
    d = good(s, rank);
    if (rank == 0)
        d.vis.window = fc_window_band(4, 0, FC_ALIGN_TOP_LEFT);
    expect_all("window mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "desc.vis.window / batch_window (batch 0) differs across ranks: rank 0 has window (left 4, right 0, "
               "top-left), rank 1 has window (left unbounded, right 0, top-left)");

    char want[160];
    d = good(s, rank);
    d.scale = rank == last ? 0.5f : 0.25f;
    snprintf(want, sizeof want, "desc.scale differs across ranks: rank 0 has 0.25, rank %d has 0.5", last);
    expect_all("scale mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, want);

    d = good(s, rank);
    d.softcap = rank == last ? 50.0f : 30.0f;
    snprintf(want, sizeof want, "desc.softcap differs across ranks: rank 0 has 30, rank %d has 50", last);
    expect_all("softcap mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, want);

    float sink[1];
    sink[0] = rank == last ? -1.5f : 0.75f;
    d = good(s, rank);
    d.sink = sink;
    snprintf(want, sizeof want, "desc.sink[0] differs across ranks: rank 0 has 0.75, rank %d has -1.5", last);
    expect_all("sink mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, want);

    d = good(s, rank);
    d.sink = rank == last ? sink : NULL;
    snprintf(want, sizeof want, "desc.sink differs across ranks: rank 0 has none, rank %d has one", last);
    expect_all("sink on one rank", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, want);

    int64_t prefix[1];
    prefix[0] = rank == last ? 5 : 3;
    d = good(s, rank);
    d.vis.prefix = prefix;
    snprintf(want, sizeof want, "desc.vis.prefix[0] differs across ranks: rank 0 has 3, rank %d has 5", last);
    expect_all("prefix mismatch", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, want);
    expect_works("after value mismatches", s, rank);

    d = good(s, rank);
    if (rank == last)
        d.bias = (fc_bias){.data = s->bias, .dtype = FC_F32, .rows = 1, .cols = 1};
    expect_all("unsupported bias on one rank", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "rejected its description");

    /* bottom-right ALiBi: each block would measure from its own corner, not the gathered one's */
    float slopes[1] = {0.5f};
    d = good(s, rank);
    d.alibi = (fc_alibi){.slopes = slopes, .stride_head = 1, .bottom_right = rank == last};
    expect_all("bottom-right ALiBi on one rank", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "rejected its description: fc_ring_attention: desc.alibi.bottom_right");

    d = good(s, rank);
    if (rank == last)
        d.q.data = NULL;
    expect_all("NULL query on one rank", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, "desc.q");

    d = good(s, rank);
    expect_all("NULL desc on rank 0", fc_ring_attention(rank == 0 ? NULL : &d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "rank 0 rejected its description: fc_ring_attention: desc is NULL");

    d = good(s, rank);
    if (rank == last)
        d.vis.q_start += 1;
    expect_all("contiguous shards that do not chain", fc_ring_attention(&d, &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "contiguous shards");

    d = good(s, rank);
    d.vis.q_start = d.vis.kv_start = 0;
    fc_ring_options z = o;
    z.sharding = FC_RING_ZIGZAG;
    if (rank == 0)
        d.q_len = L - 2; /* the zig-zag rule then gives rank 0 another length */
    expect_all("zig-zag lengths", fc_ring_attention(&d, &z, MPI_COMM_WORLD), FC_ERR_INVALID_ARG, "zig-zag sharding");

    d = good(s, rank);
    z.sharding = (fc_ring_sharding)7;
    expect_all("bad sharding option", fc_ring_attention(&d, rank == 0 ? &z : &o, MPI_COMM_WORLD), FC_ERR_INVALID_ARG,
               "options.sharding");

    /* forward on rank 0, backward elsewhere: the backward ranks fail their own check (no
     * statistics), and every rank reports it */
    d = good(s, rank);
    fc_attention_grads g = {.d_out = d.out, .dq = d.q, .dk = d.k, .dv = d.v};
    const fc_status st = rank == 0 ? fc_ring_attention(&d, &o, MPI_COMM_WORLD)
                                   : fc_ring_attention_backward(&d, &g, &o, MPI_COMM_WORLD);
    expect_all("forward against backward", st, FC_ERR_INVALID_ARG, "desc.stats");
    expect_works("after all mismatches", s, rank);

    /* statistics given everywhere: then the operation itself differs */
    float mx[L], sm[L];
    d = good(s, rank);
    d.stats = (fc_stats){.max = mx, .sum = sm};
    const fc_status st2 = rank == 0 ? fc_ring_attention(&d, &o, MPI_COMM_WORLD)
                                    : fc_ring_attention_backward(&d, &g, &o, MPI_COMM_WORLD);
    expect_all("forward against backward (with statistics)", st2, FC_ERR_INVALID_ARG, "the operation");
    expect_works("at the end", s, rank);

    /* a rank that never arrives: the others give up after their timeout, naming themselves (on a
     * communicator of its own; every other communicator stays usable) */
    MPI_Comm late;
    MPI_Comm_dup(MPI_COMM_WORLD, &late);
    if (rank != 0) {
        d = good(s, rank);
        fc_ring_options quick = o;
        quick.timeout_s = 1;
        const double t0 = MPI_Wtime();
        const fc_status st3 = fc_ring_attention(&d, &quick, late);
        char me[64];
        snprintf(me, sizeof me, "rank %d of %d timed out", rank, ranks);
        TC_CHECK(st3 == FC_ERR_BACKEND && strstr(fc_ring_last_error(), me) && !strstr(fc_ring_last_error(), "rank -1"),
                 "missing rank: got %s \"%s\", want FC_ERR_BACKEND \"%s\"", fc_status_name(st3), fc_ring_last_error(), me);
        TC_CHECK(MPI_Wtime() - t0 < 20, "missing rank: waited %.1f s with a 1 s timeout", MPI_Wtime() - t0);
    }
    expect_works("after a timeout on another communicator", s, rank);

    int fails = tc_failures(), all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_mpi_ring_errors (np %d): %d checks on rank 0, %d failures over all ranks\n", ranks, tc_checks(),
               all);
    free(s);
    MPI_Finalize();
    return all ? 1 : 0;
}
