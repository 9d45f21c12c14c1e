/*
 * flashc-bench: shared types.
 *
 * A suite is a named list of cases; a case is an operator kind plus a shape plus options.  Each
 * operator kind (bench_op) knows how to measure one case and fill a bench_result, so adding the
 * backward, decode (GB/s) or sparse operators later means one new bench_op and new table rows —
 * the CLI, the timing loop and the report formats stay as they are.
 */
#ifndef FLASHC_BENCH_H
#define FLASHC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flashc.h"

/* Operator kinds. */
typedef enum bench_op_kind {
    BENCH_OP_FORWARD = 0,
    BENCH_OP_BACKWARD,   /* GFLOP/s, FLOPs = 2.5 × the forward's */
    BENCH_OP_DECODE,     /* GB/s of K and V read; baseline: a plain read of the same bytes */
    BENCH_OP_SPARSE_FWD, /* GFLOP/s over selected positions; baseline: the dense forward's rate */
    BENCH_OP_SPARSE_BWD, /* the same for the gradient */
    BENCH_OP_RING,       /* ring attention under mpirun; baseline: one process, all the ranks' threads */
    BENCH_OP_COUNT
} bench_op_kind;

#define BENCH_MAX_BATCH 16

typedef struct bench_case {
    bench_op_kind op;
    fc_dtype dtype;     /* q, k, v and out */
    int64_t batch;
    int64_t q_heads, kv_heads;
    int64_t q_len, kv_len; /* dense: per batch; ignored when lens is set */
    int64_t head_dim;
    bool causal;        /* top-left aligned, the usual prefill mask */
    /* varlen: packed (TND) batches with these lengths, query = key lengths; lens[0] == 0 ends it */
    int64_t lens[BENCH_MAX_BATCH];
    int repeat;         /* 0 = the --repeat value */
    int64_t v_head_dim; /* 0 = head_dim */
    int64_t rope_dim;   /* extra query/key features (MLA) */
    fc_dtype kv_dtype;  /* decode: the cache's dtype (FC_I8 = int8 with per-channel scales); 0 = dtype */
    int64_t topk, block; /* sparse: blocks selected per query row, block size */
    bool zigzag;        /* ring: zig-zag sharding (else contiguous) */
    bool bsnd;          /* dense operands in BSND (each position's heads side by side) instead of BNSD */
} bench_case;

typedef struct bench_suite {
    const char *name;
    const char *about;
    const bench_case *cases;
    size_t count;
    bool in_all;        /* part of --suite all (demo and smoke repeat or shrink the others) */
} bench_suite;

/* Settings that apply to every case of a run. */
typedef struct bench_config {
    int threads;          /* flashc and the baseline */
    int repeat;           /* timed runs per case (min and median are reported) */
    int warmup;           /* untimed runs before them */
    bool baseline;        /* measure the unfused OpenBLAS reference too */
    double baseline_cap;  /* bytes: skip the baseline when its score buffers exceed this */
} bench_config;

/* One measured case.  "work" is FLOPs (visible positions only) or bytes, as unit says. */
typedef struct bench_result {
    const char *suite;
    char name[160];         /* a readable one-line description, also what --filter matches */
    const bench_case *c;
    const char *unit;       /* "GFLOP/s" (or "GB/s" for memory-bound operators later) */
    double work;
    int runs;
    double flashc_min, flashc_median; /* seconds */
    bool has_baseline;
    double base_min, base_median;
    double base_work;       /* the baseline's own work when it differs (0 = the same work) */
    double max_abs_err;     /* flashc output vs the baseline's, when both ran */
    bool mismatch;          /* max_abs_err above what the output dtype's rounding explains */
    char note[256];         /* why the baseline is missing, an error, or the ring's account */
    bool failed;
} bench_result;

/* The operator table: one entry per bench_op_kind. */
typedef struct bench_op {
    const char *name; /* "fwd" */
    const char *unit;
    /* Measures c under cfg into r (r->suite, r->name and r->c are already set).  Returns false
     * when flashc itself failed; r->note says why. */
    bool (*measure)(const bench_case *c, const bench_config *cfg, bench_result *r);
} bench_op;

const bench_op *bench_op_get(bench_op_kind kind);
bool bench_forward_measure(const bench_case *c, const bench_config *cfg, bench_result *r);
bool bench_backward_measure(const bench_case *c, const bench_config *cfg, bench_result *r);
bool bench_decode_measure(const bench_case *c, const bench_config *cfg, bench_result *r);
bool bench_sparse_measure(const bench_case *c, const bench_config *cfg, bench_result *r);
bool bench_ring_measure(const bench_case *c, const bench_config *cfg, bench_result *r);

/* Suites (suites.c). */
const bench_suite *bench_suites(size_t *count);
const bench_suite *bench_suite_find(const char *name);
void bench_case_describe(const bench_case *c, char *buf, size_t size);
int64_t bench_case_batches(const bench_case *c); /* lens entries for varlen, else batch */

#endif
