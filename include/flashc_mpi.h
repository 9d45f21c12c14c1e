/*
 * flashc_mpi — context parallelism over MPI: ring attention, forward and backward.
 *
 * One sequence is split along its positions across the processes of a communicator.  Each process
 * describes its own shard as an ordinary fc_attention_desc (q_len / kv_len = its local rows, q, k,
 * v, out, stats over those rows) and calls fc_ring_attention with the communicator; the key/value
 * shards travel around the ring with non-blocking point-to-point transfers overlapped with the
 * current block's compute, and the partial results merge by log-sum-exp in a fixed order (steps
 * in ring order, pieces in position order), so every run gives bit-identical results.
 *
 * The gathered problem.  The ring computes exactly what one fc_attention call computes on the
 * whole sequence (the shards concatenated in global position order), within semantics §0.4:
 *   - FC_RING_CONTIGUOUS: rank r holds one run of positions.  vis.q_start / vis.kv_start are the
 *     global positions of the shard's first row / column; rank r+1 must start where rank r ends
 *     (checked).  Lengths may differ per rank, 0 included.
 *   - FC_RING_ZIGZAG: the sequence of S positions is cut into 2P chunks (the first S mod 2P one
 *     longer); rank r holds chunks r and 2P−1−r back to back, which balances causal work.
 *     vis.q_start / vis.kv_start are the global positions of the whole sequence's first row /
 *     column (the same on every rank); each rank's q_len / kv_len must be its two chunks' sum —
 *     fc_ring_shard() gives them.
 * Windows (bottom-right alignment refers to the gathered lengths), per-batch windows, prefixes
 * (vis.prefix[b] counts columns of the gathered sequence), ALiBi over global positions, GQA,
 * softcap, sink, any float dtype and statistics order work.  Not supported (FC_ERR_INVALID_ARG):
 * rope features, bias, mask, dropout, sparse selection, per-batch lengths, packed batches,
 * kv_starts, paged / per-batch / int8 key-value storage, bottom-right ALiBi (alibi.bottom_right).
 *
 * Every rank must call with matching descriptions.  Before any data moves, the ranks exchange
 * their descriptions; a mismatch, or a rank whose own description is invalid (a NULL operand
 * included), fails on every rank with FC_ERR_INVALID_ARG and a message naming the field, the ranks
 * and their values.
 *
 * Timeouts.  Every wait is bounded (fc_ring_options.timeout_s): a rank that never arrives, or
 * arrives late, gives FC_ERR_BACKEND on the ranks that waited ("rank r of P timed out after T s
 * waiting for ..."), never a hang.  The process, the caller's communicator and every other
 * communicator stay usable.  What a timed-out call leaves behind: the call's private duplicate of
 * the communicator, the transfers it had outstanding and the buffers they use (at most the call's
 * key/value and gradient shards), kept by flashc_mpi until they complete — checked at every later
 * fc_ring_* call, during its waits, and at MPI_Finalize, which waits at most timeout_s for them.
 * A rank that arrives after the others gave up gets FC_ERR_BACKEND too ("rank r had given up on this
 * call"), at once if those ranks make another fc_ring_* call or reach MPI_Finalize meanwhile, else after its own
 * timeout.  Calling again on every rank then works: a new call on the same communicator first
 * waits (within its timeout) for the late ranks to reach the abandoned one.
 *
 * Devices.  Host memory only: every block runs on flashc's CPU backend, and the shards travel
 * through host buffers.  CUDA device buffers are not supported yet.
 */
#ifndef FLASHC_MPI_H
#define FLASHC_MPI_H

#include <mpi.h>

#include "flashc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fc_ring_sharding {
    FC_RING_CONTIGUOUS = 0,
    FC_RING_ZIGZAG = 1
} fc_ring_sharding;

/* Where the time of one call went (seconds, this rank). */
typedef struct fc_ring_timing {
    double total;        /* the whole call */
    double compute;      /* block kernels and merges */
    double wait;         /* blocked on transfers after the compute of a step was done */
    double bytes_sent;   /* payload this rank sent */
    int blocks_computed; /* (q piece, kv piece) blocks run; invisible ones are skipped */
    int blocks_skipped;
} fc_ring_timing;

typedef struct fc_ring_options {
    fc_ring_sharding sharding;
    int threads;            /* CPU threads per process, as fc_options.threads (0 = OpenMP's default) */
    double timeout_s;       /* bound on every wait; 0 = 120 s, or FLASHC_RING_TIMEOUT from the environment */
    fc_ring_timing *timing; /* optional: filled on return */
} fc_ring_options;

FC_API fc_ring_options fc_ring_options_init(void);

/* The local rows of rank `rank` of `ranks` for a sequence of `total` positions: up to two spans
 * (start[k], len[k]) in global order (the second has length 0 for contiguous sharding, which
 * splits as evenly as zig-zag's chunk rule: the first total mod ranks ranks get one more).
 * Returns the number of local rows. */
FC_API int64_t fc_ring_shard(fc_ring_sharding sharding, int64_t total, int rank, int ranks, int64_t start[2],
                             int64_t len[2]);

/* Forward: writes desc.out (local rows) and, when asked, desc.stats (local rows, the gathered
 * problem's statistics).  Collective over comm. */
FC_API fc_status fc_ring_attention(const fc_attention_desc *desc, const fc_ring_options *options, MPI_Comm comm);

/* Backward: desc.out and desc.stats hold this rank's forward output and statistics (the ring
 * forward's); writes the local dq, dk, dv and, with a sink, dsink (the whole problem's, the same on
 * every rank).  Collective over comm. */
FC_API fc_status fc_ring_attention_backward(const fc_attention_desc *desc, const fc_attention_grads *grads,
                                            const fc_ring_options *options, MPI_Comm comm);

/* Text of this thread's most recent fc_ring_* failure ("" when none). */
FC_API const char *fc_ring_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_MPI_H */
