/*
 * Internals of the ring (flashc_mpi).  The ring only uses flashc's public native API: every block
 * — one piece of this rank's query rows against one piece of a key/value shard — is an ordinary
 * fc_attention_desc with global start positions, planned and run by libflashc.
 */
#ifndef FC_MPI_RING_H
#define FC_MPI_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "flashc_mpi.h"

/* ---- errors (error.c) ---------------------------------------------------------------------- */
fc_status ring_fail(fc_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ring_clear_error(void);
/* Wraps a failed libflashc call: its status, its message prefixed with `what`. */
fc_status ring_fail_flashc(fc_status status, const char *what);

/* ---- geometry (shard.c) -------------------------------------------------------------------- */
/* A run of positions, as an offset into the gathered sequence. */
typedef struct ring_span {
    int64_t off, len;
} ring_span;

/* Where every rank's rows lie in the gathered problem; the same on every rank. */
typedef struct ring_geom {
    int ranks, rank;
    int64_t q_total, kv_total;
    int64_t q0, kv0;      /* global positions of the gathered row 0 / column 0 */
    ring_span (*q)[2];    /* [ranks][2]: the query pieces of each rank, in local row order */
    ring_span (*kv)[2];   /* [ranks][2]: the key/value pieces of each shard */
    uint8_t *needs;       /* [ranks·ranks]: needs[r·ranks + s] = rank r's queries see part of shard s */
} ring_geom;

/* Everything one call needs; built by ring_begin, released by ring_end. */
typedef struct ring_ctx {
    const char *fn;
    const fc_attention_desc *d;
    const fc_attention_grads *g; /* backward only */
    fc_ring_options opt;
    MPI_Comm comm;              /* a private duplicate of the caller's communicator (once created) */
    MPI_Comm *dup;              /* where MPI_Comm_idup writes it: heap, as a timed-out idup still will */
    struct ring_leftover *left; /* what this call could not complete (leftover.c); NULL: nothing */
    bool keep_buffers;          /* a request was abandoned: transfer buffers outlive the call */
    ring_geom geom;
    int64_t B, Nq, Nkv, D, Dv;
    fc_window *win;        /* [B]: the gathered problem's windows, top-left aligned */
    int64_t *block_prefix; /* [B]: scratch for one block's prefixes */
    double deadline_s;     /* per wait */
    void *ws;              /* libflashc workspace, grown on demand */
    size_t ws_bytes;
    fc_ring_timing t;
    double t_start;
} ring_ctx;

/* Fills geom from every rank's (q_len, kv_len, q_start, kv_start) rows [ranks][4]; fails with a
 * message naming the rank when they do not form one sharded sequence. */
fc_status ring_geom_build(ring_ctx *c, const int64_t (*rows)[4]);
void ring_geom_free(ring_geom *g);
/* Converts desc windows into top-left windows over gathered positions (bottom-right folds in
 * kv_total − q_total). */
fc_status ring_windows(ring_ctx *c);
/* Whether any position of query piece q sees any of kv piece k. */
bool ring_block_visible(const ring_ctx *c, ring_span q, ring_span k);
static inline bool ring_needs(const ring_geom *g, int r, int s) { return g->needs[r * g->ranks + s] != 0; }
static inline int ring_mod(int a, int n) { return ((a % n) + n) % n; }
/* This rank's query rows cut into slices of at most ring_rows_per_call rows: the unit of every
 * block call, accumulator and statistics buffer.  Returns the count (slices allocated). */
typedef struct ring_slice {
    int64_t row;    /* first local row */
    ring_span span; /* its gathered positions */
} ring_slice;
int ring_slices(const ring_ctx *c, ring_slice **slices);
/* The longest key/value shard of any rank. */
int64_t ring_max_kv_rows(const ring_geom *g);
/* Whether shard s must move from rank s+t−1 to rank s+t (someone at or after s+t needs it). */
bool ring_kv_moves(const ring_geom *g, int s, int t);

/* ---- agreement across ranks (agree.c) ------------------------------------------------------- */
/* Checks this rank's description, exchanges every rank's, fails on every rank when they do not
 * match, and builds the geometry.  Always takes part in the exchange, even when the local check
 * failed, so no rank is left waiting. */
fc_status ring_begin(ring_ctx *c, const char *fn, const fc_attention_desc *d, const fc_attention_grads *g,
                     const fc_ring_options *opt, MPI_Comm comm);
void ring_end(ring_ctx *c);
/* This rank's own check (check.c): what the ring supports and libflashc's validation of the shard. */
fc_status ring_check_local(ring_ctx *c, bool backward);

/* ---- transfers (comm.c) --------------------------------------------------------------------- */
double ring_now(void);
/* Waits for n requests (MPI_REQUEST_NULL entries are fine) until the deadline; `what` names them
 * in the timeout message ("a key/value shard from rank 3").  Counts the time as waiting.  On a
 * timeout the requests stay as they are: the caller abandons them (ring_abandon). */
fc_status ring_wait(ring_ctx *c, MPI_Request *reqs, int n, const char *what);
/* "what from rank a" / "what from rank a and to rank b" (a or b < 0: left out), in a buffer of
 * this thread's: the argument of one ring_wait. */
const char *ring_peers_text(const ring_ctx *c, const char *what, int from, int to);
/* Lets MPI move outstanding transfers while the compute runs (single-copy transports only copy
 * inside MPI calls). */
void ring_progress(MPI_Request *reqs, int n);
/* Hands requests still outstanding after a failure to the call's leftovers (receives are
 * cancelled first; sends and collectives cannot be): they complete later, never into freed memory. */
void ring_abandon(ring_ctx *c, MPI_Request *reqs, int n, bool receives);
/* Frees a buffer a transfer of this call used, or keeps it with the call's leftovers while any
 * request is outstanding. */
void ring_free_transfer(ring_ctx *c, void *p);
int ring_tag_kv(const ring_ctx *c, int shard);
int ring_tag_dkv(const ring_ctx *c, int shard);

/* ---- what failed calls leave behind (leftover.c) ---------------------------------------------- */
/* Outstanding requests, the memory they may touch and the call's duplicate communicator, kept
 * process-wide until the requests complete; tested at every fc_ring_* call and at MPI_Finalize. */
typedef struct ring_leftover ring_leftover;
typedef void (*ring_leftover_then)(ring_leftover *e);
ring_leftover *ring_leftover_new(void);
void ring_leftover_add_request(ring_leftover *e, MPI_Request req);
void ring_leftover_add_buffer(ring_leftover *e, void *p);
void ring_leftover_set_comm(ring_leftover *e, MPI_Comm *comm);
/* The entry's outstanding request is an MPI_Comm_idup of `parent`. */
void ring_leftover_set_parent(ring_leftover *e, MPI_Comm parent);
MPI_Comm ring_leftover_comm(const ring_leftover *e);
/* Runs once the requests have completed (then the entry's communicator is valid); may add more. */
void ring_leftover_then_do(ring_leftover *e, ring_leftover_then then);
bool ring_leftover_pending(const ring_leftover *e);
/* Keeps the entry until it finishes (MPI_Finalize waits at most wait_s for it). */
void ring_leftover_keep(ring_leftover *e, double wait_s);
void ring_leftover_free(ring_leftover *e);
/* Advances every kept entry, releasing those that finished; returns how many remain. */
int ring_leftovers_poll(void);
/* Whether an abandoned MPI_Comm_idup of `parent` is still outstanding (advancing the entries first).
 * A new one must wait for it: OpenMPI 4.1 mismatches two outstanding duplications of one
 * communicator when another rank has posted only the first. */
bool ring_leftovers_duplicating(MPI_Comm parent);

/* ---- data (data.c) -------------------------------------------------------------------------- */
/* Bytes of a packed key/value shard of `rows` positions ([B][Nkv][rows][D] keys, then values). */
size_t ring_kv_bytes(const ring_ctx *c, int64_t rows);
/* Packs this rank's keys and values (any strides) into buf. */
void ring_pack_kv(const ring_ctx *c, void *buf);
/* A view of the keys / values of rows [off, off + len) of a packed shard of `rows` positions. */
fc_tensor ring_kv_key(const ring_ctx *c, void *buf, int64_t rows, int64_t off);
fc_tensor ring_kv_value(const ring_ctx *c, void *buf, int64_t rows, int64_t off);
/* A view of rows starting at local row `row` of a caller tensor. */
fc_tensor ring_rows(fc_tensor t, int64_t row);
/* Element (b, n, i, e) of a caller tensor as float. */
float ring_load(const fc_tensor *t, int64_t b, int64_t n, int64_t i, int64_t e);
/* Row (b, n, i) of a caller tensor stored from len floats (x NULL: zeros). */
void ring_store_row(const fc_tensor *t, int64_t b, int64_t n, int64_t i, const float *x, int64_t len);
/* Index of replica 0 of the statistics of (b, n, local row i) in the caller's order. */
int64_t ring_stats_index(const ring_ctx *c, int64_t q_len, int64_t b, int64_t n, int64_t i);
int64_t ring_stats_replicas(const ring_ctx *c);
/* Allocation with an overflow-checked size; NULL with a failure recorded. */
void *ring_alloc(size_t count, size_t size, const char *what);

/* ---- blocks (block.c) ----------------------------------------------------------------------- */
/* One forward block: queries of the caller rows [q_row, q_row + q.len) (gathered piece q) against
 * kv piece k of a packed shard; writes fp32 output [B][Nq][q.len][Dv] and statistics
 * [B][Nq][q.len]. */
fc_status ring_block_forward(ring_ctx *c, int64_t q_row, ring_span q, void *kv_buf, int64_t kv_rows,
                             int64_t kv_row, ring_span k, float *out, float *max, float *sum);
/* One backward block: given statistics of those rows (fp32 [B][Nq][q.len]), writes fp32 dq
 * [B][Nq][q.len][D] and fp32 dk / dv over rows [kv_row, kv_row + k.len) of shard-shaped
 * buffers [B][Nkv][kv_rows][D / Dv]. */
fc_status ring_block_backward(ring_ctx *c, int64_t q_row, ring_span q, const float *max, const float *sum,
                              void *kv_buf, int64_t kv_rows, int64_t kv_row, ring_span k, float *dq, float *dk,
                              float *dv);
/* Rows per block call: bounds the time between progress calls. */
int64_t ring_rows_per_call(const ring_ctx *c, int64_t kv_len);

#endif
