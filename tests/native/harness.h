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
    double range;             /* inputs uniform in [−range, range]; 0 = 1 */
    double v_range;           /* value inputs in [−v_range, v_range]; 0 = range */
    double scale;             /* 0 = default 1/sqrt(D + Dr) */
    float softcap;

    nt_bias_spec bias;
    struct { bool on, per_batch, sqrt_distance; } alibi;
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
} nt_case;

nt_case nt_default(void);

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

/* Test driver: argv[1] names the ISA ("scalar", "avx2", "avx512"; none = library default).
 * Returns TC_SKIP when that ISA is not available here. */
int nt_main(int argc, char **argv, const char *name, void (*body)(void));

/* Logical index helpers. */
static inline int64_t nt_row(const nt_case *c, int S1cap, int b, int n1, int i)
{
    return ((int64_t)b * c->N1 + n1) * S1cap + i;
}

#endif
