/*
 * Test harness of the ring: one seeded problem generated identically on every rank, the
 * single-process operator on the gathered problem as the judge, and this rank's shard copied out
 * of it (in a different layout, BSND, so the ring sees strides of its own).
 */
#ifndef FLASHC_TESTS_RING_HARNESS_H
#define FLASHC_TESTS_RING_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/halfconv.h"
#include "flashc_mpi.h"

#define RH_MAX_RANKS 16

typedef struct rh_case {
    fc_ring_sharding sharding;
    int64_t B, Nq, Nkv, D, Dv, Sq, Skv;
    int64_t q0, kv0;                            /* global positions of the gathered row / column 0 */
    int64_t q_cut[RH_MAX_RANKS + 1], kv_cut[RH_MAX_RANKS + 1]; /* contiguous shard bounds */
    tc_dtype dt, gdt;                           /* inputs and output / gradients */
    fc_window window;
    int64_t prefix;                             /* < 0: none */
    float softcap;
    bool sink, alibi;
    fc_stats_order order;
    int64_t replicas;
} rh_case;

/* A random case for `ranks` ranks from the rng state (the same on every rank). */
rh_case rh_draw(uint64_t seed, int ranks);
const char *rh_describe(const rh_case *c);

/* Runs the case: ring forward (and backward) on this rank's shard against the single-process
 * operator on the gathered problem; failures are recorded with TC_CHECK. */
void rh_run(const rh_case *c, MPI_Comm comm, bool backward);

/* What the last rh_run's first ring forward reported. */
extern fc_ring_timing rh_forward_timing;

/* This rank's rows of a side (0 = queries, 1 = keys): up to two gathered spans. */
int64_t rh_shard(const rh_case *c, int side, int rank, int ranks, int64_t start[2], int64_t len[2]);

#endif
