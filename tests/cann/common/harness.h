/*
 * The CANN-face test harness.  One fa_case describes a forward call in CANN terms (operator,
 * layout, dtype, sizes, sparse mode, mask shape, pse type and shape, dropout, sink, rope, softmax
 * layout, strided views); fa_run_case makes seeded random data, uploads it through aclrtMalloc /
 * aclrtMemcpy into aclTensors, runs the operator's two phases, runs tests/reference on the same
 * logical values (with its CANN rule helpers), and checks every output element:
 *   - out, softmax max and sum within the §0.4 tolerance;
 *   - fully masked rows exactly 0 with statistics −FLT_MAX / +FLT_MAX (bits), all 8 replicas
 *     bit-identical;
 *   - output gaps of strided views untouched; input gaps are NaN (a wrong stride poisons results).
 */
#ifndef FLASHC_TESTS_CANN_HARNESS_H
#define FLASHC_TESTS_CANN_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "common/check.h"
#include "common/halfconv.h"

#define FA_MAXB 16

typedef enum { FA_V1, FA_V2, FA_V3, FA_VARLEN, FA_V5 } fa_fn;

/* How tensors are laid out in their allocations. */
typedef enum {
    ST_CONTIGUOUS = 0,
    ST_GAPS = 1,     /* every stride doubled, plus a view offset: gaps between all elements */
    ST_REVERSED = 2  /* dims stored in reverse order (the first dim varies fastest) */
} fa_strides;

typedef struct fa_case {
    fa_fn fn;
    const char *layout;          /* "BSH", "SBH", "BSND", "BNSD" or "TND" */
    tc_dtype dtype;
    int B, N1, N2, D, Dv, Dr;    /* Dv 0 = D */
    int S1, S2;                  /* dense lengths */
    int s1[FA_MAXB], s2[FA_MAXB]; /* TND per-batch lengths */
    double scale;                /* 0 = 1/sqrt(D) */
    double keep_prob;            /* 0 = 1 */
    int64_t pre, next;           /* used when band is set; else 2147483647 each */
    bool band;
    int sparse_mode, inner_precise;

    int mask_rank;               /* 0 = no attenMask; else 2 or 4 with mask_dims */
    int64_t mask_dims[4];
    bool mask_u8;                /* UINT8 instead of BOOL */
    double mask_density;         /* share of masked elements (element masks) */
    bool prefix;                 /* pass prefix_v (mode 6) */
    int64_t prefix_v[FA_MAXB];

    int pse_rank;                /* 0 = no realShiftOptional; else pse_dims */
    int64_t pse_dims[4];
    int pse_type;                /* V1 and VarLen: must be 1 */
    bool starts;                 /* pass qStartIdx / kvStartIdx */
    int64_t q_start, kv_start;

    int sink;                    /* 0 none, 1 finite, 2 some heads −inf */
    bool same_as_input;          /* V5 softmaxOutLayout "same_as_input" */
    bool stats_nt;               /* TND statistics declared [N1, T1, 8] */
    bool all_keep;               /* dropout mask all ones */
    fa_strides strides;
    double range;                /* inputs uniform in [−range, range]; 0 = 1 */
    uint64_t seed;
} fa_case;

/* A case with every option off: BNSD, FLOAT32, V2, 1×2×2 heads, S 8×8, D 16. */
fa_case fa_case_default(void);

/* An explicit mask of this rank and shape (unused trailing dims 0). */
void fa_mask_shape(fa_case *c, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3);
/* The compressed mask of the case's sparse mode (2048×2048, 3072×2048 for mode 6), as [S, S]
 * (four false) or [1, 1, S, S]; random contents, which must not be read. */
void fa_mask_compressed(fa_case *c, bool four);

/* Runs the case and checks it (TC checks, context set from name).  Returns false when the library
 * call itself failed. */
bool fa_run_case(const char *name, const fa_case *c);

/* ---- device tensors (also used by the bad-input tests) --------------------------------------- */

typedef struct dev_tensor {
    aclTensor *t;
    void *dev;            /* aclrtMalloc'ed */
    unsigned char *host;  /* host image of the whole allocation */
    size_t bytes;
    aclDataType dt;
    int rank;
    int64_t dims[8], strides[8], offset;
} dev_tensor;

/* Lays out a tensor of these dims (stride mode st), host image filled with fill_byte. */
void dt_layout(dev_tensor *x, aclDataType dt, int rank, const int64_t *dims, fa_strides st, unsigned char fill_byte);
/* Element offset of a multi-index. */
int64_t dt_at(const dev_tensor *x, const int64_t *idx);
void dt_set(dev_tensor *x, const int64_t *idx, double v);
double dt_get(const dev_tensor *x, const unsigned char *image, const int64_t *idx);
/* Allocates, copies the host image up and creates the aclTensor. */
void dt_upload(dev_tensor *x);
/* Copies the allocation back into a new host image (caller frees). */
unsigned char *dt_download(const dev_tensor *x);
void dt_free(dev_tensor *x);
size_t dt_esize(aclDataType dt);

/* Shorthand: a contiguous tensor of dims (values 0) uploaded; for tests that only need operands. */
dev_tensor dt_simple(aclDataType dt, int rank, const int64_t *dims);

#endif /* FLASHC_TESTS_CANN_HARNESS_H */
