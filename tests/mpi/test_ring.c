/*
 * Ring attention under mpirun: outputs, statistics and gradients of every rank's shard equal the
 * single-process operator on the gathered problem (semantics §0.4), over named cases — causal
 * contiguous and zig-zag, an empty shard, windows, GQA — and a seeded random sweep.
 *   mpirun -np N test_mpi_ring [cases] [seed]
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "ring_harness.h"

static rh_case named(int k, int ranks)
{
    rh_case c = rh_draw(1000 + (uint64_t)k, ranks);
    c.prefix = -1, c.softcap = 0, c.sink = false, c.alibi = false, c.q0 = c.kv0 = 0;
    c.B = 1, c.Nq = 4, c.Nkv = 2, c.D = c.Dv = 32, c.dt = c.gdt = TC_F32;
    c.order = FC_STATS_HEAD_MAJOR, c.replicas = 1;
    c.Sq = c.Skv = 97;
    const int64_t cut_empty[RH_MAX_RANKS + 1] = {0, 40, 40, 70, 97};
    switch (k) {
    case 0: /* zig-zag causal, uneven chunks */
        c.sharding = FC_RING_ZIGZAG, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
        break;
    case 1: /* contiguous causal, rank 1 empty */
        c.sharding = FC_RING_CONTIGUOUS, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        for (int r = 0; r <= ranks; r++)
            c.q_cut[r] = c.kv_cut[r] = r == ranks ? 97 : cut_empty[r < 4 ? r : 3];
        break;
    case 2: /* contiguous non-causal */
        c.sharding = FC_RING_CONTIGUOUS, c.window = (fc_window){0};
        break;
    case 3: /* sliding window, zig-zag */
        c.sharding = FC_RING_ZIGZAG, c.window = fc_window_band(16, 0, FC_ALIGN_TOP_LEFT);
        break;
    case 4: /* fewer positions than zig-zag chunks: empty chunks; cross lengths bottom-right */
        c.sharding = FC_RING_ZIGZAG, c.Sq = 3, c.Skv = 11, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
        break;
    default: /* causal with a prefix and a sink, bf16 */
        c.sharding = FC_RING_CONTIGUOUS, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.prefix = 20;
        c.sink = true, c.dt = TC_BF16;
        break;
    }
    if (k != 1) /* even contiguous cuts for the sizes set here */
        for (int r = 0; r <= ranks; r++) {
            int64_t st[2], ln[2];
            fc_ring_shard(FC_RING_CONTIGUOUS, c.Sq, r < ranks ? r : ranks - 1, ranks, st, ln);
            c.q_cut[r] = r < ranks ? st[0] : c.Sq;
            fc_ring_shard(FC_RING_CONTIGUOUS, c.Skv, r < ranks ? r : ranks - 1, ranks, st, ln);
            c.kv_cut[r] = r < ranks ? st[0] : c.Skv;
        }
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int count = argc > 1 ? atoi(argv[1]) : 30;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
    if (ranks > RH_MAX_RANKS) {
        if (rank == 0)
            fprintf(stderr, "test_mpi_ring: at most %d ranks\n", RH_MAX_RANKS);
        MPI_Finalize();
        return 1;
    }
    for (int k = 0; k < 6; k++) {
        const rh_case c = named(k, ranks);
        tc_context("named %d: %s", k, rh_describe(&c));
        rh_run(&c, MPI_COMM_WORLD, true);
        if (k == 1) { /* causal, contiguous: nothing flows back from the last rank, rank 0 needs only its own */
            const fc_ring_timing *t = &rh_forward_timing;
            if (rank == ranks - 1)
                TC_CHECK(t->bytes_sent == 0, "causal contiguous: the last rank sent %.0f bytes", t->bytes_sent);
            if (rank == 0)
                TC_CHECK(t->blocks_computed == 1, "causal contiguous: rank 0 ran %d blocks", t->blocks_computed);
        }
    }
    for (int k = 0; k < count; k++) {
        const rh_case c = rh_draw(seed + (uint64_t)k, ranks);
        tc_context("seed %#llx: %s", (unsigned long long)(seed + (uint64_t)k), rh_describe(&c));
        rh_run(&c, MPI_COMM_WORLD, true);
    }
    int fails = tc_failures(), all = 0, checks = tc_checks(), all_checks = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_mpi_ring (np %d): %d checks over all ranks, %d failures\n", ranks, all_checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
