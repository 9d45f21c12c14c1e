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
    MPI_Comm comm; /* a private duplicate of the caller's communicator */
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

/* ---- transfers (comm.c) --------------------------------------------------------------------- */
double ring_now(void);
/* Waits for n requests (MPI_REQUEST_NULL entries are fine) until the deadline; `what` and `peer`
 * name the transfer in the timeout message.  Counts the time as waiting.  On a timeout the
 * requests stay as they are: the caller abandons point-to-point ones (collectives cannot be). */
fc_status ring_wait(ring_ctx *c, MPI_Request *reqs, int n, const char *what, int peer);
/* Lets MPI move outstanding transfers while the compute runs (single-copy transports only copy
 * inside MPI calls). */
void ring_progress(MPI_Request *reqs, int n);
/* Cancels and frees what is still outstanding after a failure. */
void ring_abandon(MPI_Request *reqs, int n);
int ring_tag_kv(const ring_ctx *c, int shard);
int ring_tag_dkv(const ring_ctx *c, int shard);

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
