/*
 * The native-API test harness: one nt_case describes a forward problem in test terms (sizes,
 * layout, strides, dtype, features); the harness makes seeded random data, lays it out in library
 * buffers, runs fc_plan_create/fc_plan_run (or fc_attention), runs the reference on the same
 * logical values, and checks every output element:
 *   - visible rows within the §0.4 tolerance (out, softmax max, softmax sum);
 *   - fully masked rows and padding rows exactly 0 with statistics −FLT_MAX / +FLT_MAX (bits);
 *   - all statistics replicas bit-identical; nothing written outside the logical outputs (gaps of
 *     padded strides and guard elements keep their sentinel).
 * Input gaps are NaN, so a kernel that reads through a wrong stride poisons its result.
 *
 * Data lives in nt_data as logical double arrays (the reference's layout, reference.h); tests may
 * edit it between nt_prepare and nt_execute to build identities.
 */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_H
#define FLASHC_TESTS_NATIVE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flashc.h"

typedef enum { NT_BNSD, NT_BSND, NT_BSH, NT_SBH, NT_TND } nt_layout;

typedef struct nt_bias_spec {
    bool on;
    fc_bias_order order;
    fc_dtype dtype;
    bool bcast_batch, bcast_head, bcast_row, bcast_col; /* stride 0 on that axis */
    bool bottom_right, compressed;
    int rows;                   /* compressed: the stored rows R; otherwise 0 = what batches need */
    int extra_rows, extra_cols; /* block larger than needed (bottom_right then shifts the reading) */
} nt_bias_spec;

typedef struct nt_mask_spec {
    bool on;
    fc_dtype dtype; /* FC_BOOL, FC_U8, FC_I8 */
    bool bcast_batch, bcast_head, bcast_row, bcast_col;
    bool by_tokens;
    double density; /* share of hidden elements */
} nt_mask_spec;

typedef enum { NT_SINK_NONE, NT_SINK_FINITE, NT_SINK_SOME_NEG_INF, NT_SINK_ALL_NEG_INF } nt_sink_mode;

/* Key/value storage (flashc.h fc_kv_storage).  Paged caches are made physically (random blocks,
 * NaN in unused slots and spare blocks) and the logical key/value the reference sees is gathered
 * from them through the block table (reference/kvcache.h), so paged == gathered cache (§9 h). */
typedef enum { NT_KV_TENSOR, NT_KV_PAGED, NT_KV_BATCHES } nt_kv_mode;

typedef struct nt_kv_spec {
    nt_kv_mode mode;
    int block_size;         /* paged: slots per block */
    bool head_major_blocks; /* paged: a block is [N2][block_size][E] (else [block_size][N2][E]) */
    int spare_blocks;       /* paged: physical blocks no used table entry points to */
    bool shared_blocks;     /* paged: batches may point at the same physical blocks */
    bool int8;              /* FC_I8 key and value with k_dequant / v_dequant (reference: (x+offset)·scale) */
    bool per_channel;       /* dequant values per (head, feature); else one value (strides 0) */
    bool offset;            /* dequant offsets given */
    fc_dtype affine_dt;     /* dtype of the dequant scale/offset */
} nt_kv_spec;

/* FC_I8 output (out_dt = FC_I8): desc.out_quant, y = sat(rne(fp16(x·scale + offset))). */
typedef struct nt_quant_spec {
    bool per_channel, offset;
    fc_dtype dtype;
} nt_quant_spec;

/* Top-k block-sparse selection (flashc.h fc_sparse): one index row per (b, query row, kv head). */
typedef struct nt_sparse_spec {
    bool on;
    fc_dtype dtype;   /* FC_I32 or FC_I64 */
    int count, block_size;
    bool causal;
    double end_p;     /* per entry: the list ends here (−1, garbage after it) */
    double dup_p;     /* per entry: repeat an earlier entry */
    double late_p;    /* per entry: a block at or after the row's causal threshold */
    bool all_blocks;  /* every block of the batch once, in random order (then −1 padding) */
    int pad;          /* extra elements on the index strides */
} nt_sparse_spec;

typedef struct nt_case {
    uint64_t seed;
    int B, N1, N2, D, Dv, Dr; /* Dv 0 = D (passed to the library as 0 when v_dim_zero) */
    bool v_dim_zero;          /* pass v_head_dim = 0 ("means head_dim") */
    int Sq, Skv;              /* padded: q_len, kv_len */
    const int *sq, *skv;      /* per-batch lengths (packed: required); NULL = Sq / Skv */
    bool lens;                /* padded: pass sq/skv as desc.q_lens / kv_lens */
    bool packed;
    nt_layout layout;         /* q, k, v, rope, out (packed: TND) */
    bool mixed_layouts;       /* k/v and out use other padded layouts than q */
    int pad;                  /* extra elements on every stride */
    int dim_stride;           /* feature stride (0 or 1 = contiguous) */
    bool kv_bcast_seq;        /* k/v/k_rope stride_seq = 0 */
    bool q_bcast_head;        /* q/q_rope stride_head = 0 */
    fc_dtype dt, out_dt;
    fc_dtype out_tolerance;   /* fc_options.out_tolerance; the output is checked at the looser of it and out_dt */
    double range;             /* inputs uniform in [−range, range]; 0 = 1 */
    double v_range;           /* value inputs in [−v_range, v_range]; 0 = range */
    double scale;             /* 0 = default 1/sqrt(D + Dr) */
    float softcap;

    nt_bias_spec bias;
    struct { bool on, per_batch, sqrt_distance, bottom_right; } alibi;
    fc_window window;
    bool batch_windows;       /* random per-batch windows */
    bool prefix;              /* random per-batch prefixes */
    int64_t q_start, kv_start;
    nt_mask_spec mask;
    double keep_prob;         /* 0/1 = none */
    bool keep_all;            /* all keep bits 1 (else random) */
    bool keep_bits_with_p1;   /* pass random bits although keep_prob is 1 */
    nt_sink_mode sink;
    bool stats;
    fc_stats_order stats_order;
    int replicas;             /* 0 → passed as 0 (= 1) */
    int threads;
    bool oneshot;             /* fc_attention instead of a plan */
    const char *may_reject;   /* FC_ERR_INVALID_ARG naming this is an accepted outcome too */

    /* decode storage, left padding, int8 output, sparse selection */
    nt_kv_spec kv;
    bool kv_starts;           /* random per-batch desc.kv_starts in [0, Skv_b] */
    nt_quant_spec out_quant;  /* used when out_dt is FC_I8 */
    nt_sparse_spec sparse;
} nt_case;

nt_case nt_default(void);

/* The tests' common fixture: nt_default() with these sizes, a seed and statistics written. */
typedef struct nt_sizes {
    int B, N1, N2, D, Dv, Sq, Skv;
} nt_sizes;
nt_case nt_fixture(uint64_t seed, nt_sizes s);
/* The sparse tests' fixture: B 2, 4 query heads on 2 kv heads, D 24, Dv 16, 9 rows over
 * 5·bs + 3 columns, 6 entries per index row in blocks of bs (some −1, repeated, or past the causal
 * limit), statistics in (B, N2, S1, G). */
nt_case nt_sparse_fixture(uint64_t seed, int bs, bool causal, fc_dtype idt);

typedef struct nt_data {
    int S1cap, S2cap, Dv;
    int *s1, *s2;                 /* per-batch lengths */
    double *q, *k, *v, *qr, *kr;  /* reference layout */
    double *bias;                 /* flat, addressed by bias strides (fc_bias) */
    int64_t bias_n, bias_rows, bias_cols, bias_st[4];
    uint8_t *mask;                /* flat, addressed by mask strides */
    int64_t mask_n, mask_st[4];
    float *slopes;                /* flat, addressed by alibi strides */
    int64_t slopes_n, slope_st[2];
    float *sink;                  /* [N1] */
    int64_t *prefix;              /* [B] */
    fc_window *bwin;              /* [B] */
    uint8_t *keep;                /* dropout bits */
    int64_t keep_n;

    int64_t *kv_starts;           /* [B] */
    /* int8 key/value: raw values, logical layout (tensor / per-batch storage) */
    int8_t *k8, *v8;
    double *kdq[2], *vdq[2];      /* dequant scale, offset: [N2·D] / [N2·Dv] or [1]; offset may be NULL */
    /* paged storage: physical caches (doubles, NaN in unused slots; int8 raw values when int8) */
    int32_t *table;
    int64_t table_stride, num_blocks;
    int64_t pst[3][4];            /* per k, v, k_rope: strides block, slot, head, dim */
    int64_t pcount[3];            /* elements per physical cache */
    double *kp, *vp, *krp;
    int8_t *kp8, *vp8;
    double *oq[2];                /* output quant scale, offset: [N1·Dv] or [1]; offset may be NULL */
    /* sparse indices as int64 values, addressed by sp_st (batch, seq, head, entry) */
    int64_t *sp;
    int64_t sp_n, sp_st[4];
} nt_data;

/* Seeded random data for the case. */
nt_data nt_prepare(const nt_case *c);
void nt_data_free(nt_data *d);

typedef struct nt_result {
    fc_status status;
    int S1cap, Dv;
    double *out;          /* library output, logical [B][N1][S1cap][Dv] (padding rows included) */
    double *smax, *ssum;  /* library statistics, replica 0, [B][N1][S1cap] */
    double *ref_out, *ref_max, *ref_sum;
    int *nvis;            /* reference visible count per row (−1 = padding row) */
    void *out_raw;        /* the output buffer as the library wrote it */
    size_t out_bytes;
    float *stats_raw_max, *stats_raw_sum;
    size_t stats_count;
    size_t workspace;
    int64_t failures;     /* checks this run failed */
} nt_result;

/* Runs the library and the reference on d, checks everything; returns the number of failed
 * checks.  r may be NULL; otherwise it keeps the outputs (free with nt_result_free). */
int64_t nt_execute(const nt_case *c, const nt_data *d, nt_result *r);
/* nt_prepare + nt_execute + free; returns failed checks. */
int64_t nt_run(const nt_case *c);
void nt_result_free(nt_result *r);

/* Library-versus-library comparisons for identities (tolerance of out_dt; stats fp32 rows). */
int64_t nt_compare_results(const char *what, const nt_result *a, const nt_result *b, const nt_case *c, bool stats);
/* Runs a and b on the same logical data and compares them; b may enable more features than a (the
 * data is prepared for b; a ignores what it does not enable). */
void nt_same_data(const char *what, const nt_case *a, const nt_case *b, bool stats);
/* Bitwise equality of the raw outputs and statistics. */
bool nt_bitwise_equal(const nt_result *a, const nt_result *b);
/* The thread count compared with one thread in the determinism checks: FLASHC_TEST_THREADS
 * (2..1024), else 2 — a many-core machine runs the suite with its core count. */
int nt_other_threads(void);
/* Runs the case on d with 1 and with nt_other_threads() threads (c->threads is left there) and
 * checks that the outputs and statistics are bitwise identical (each run against the reference). */
void nt_check_threads(nt_case *c, const nt_data *d);
/* nt_check_threads on the case's own data (nt_prepare, then free). */
void nt_run_threads(nt_case *c);

/* The sparse reference (reference/sparse.h) for the case's data: lengths, operands, indices. */
struct ref_sparse;
void nt_sparse_ref(const nt_case *c, const nt_data *d, struct ref_sparse *p);

/* Test driver: argv[1] names the ISA ("scalar", "avx2", "avx512", ...; none = library default).
 * Returns TC_SKIP when that ISA is not available here. */
int nt_main(int argc, char **argv, const char *name, void (*body)(void));

/* Logical index helpers. */
static inline int64_t nt_row(const nt_case *c, int S1cap, int b, int n1, int i)
{
    return ((int64_t)b * c->N1 + n1) * S1cap + i;
}

#endif
