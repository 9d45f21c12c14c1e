/*
 * The IncreFlashAttentionV4 test harness.  One ifa_case describes a decode call (layout, dtype,
 * heads, per-batch cache lengths, kv storage form, lengths, left padding, mask, pse, int8 key/value,
 * int8 output); ifa_run_case makes seeded random data, stores the cache in the chosen form (one
 * tensor, a list of per-batch tensors, or a paged cache behind a permuted block table), runs the
 * operator's two phases, and checks every output element against tests/reference on the kv
 * window each batch sees (IFA is FA with S1 = 1, semantics §9 e):
 *   - the reference reads the cache gathered back out of the paged image (§9 h) or trimmed to the
 *     batch's window (§9 o), so storage forms are compared with the same logical attention;
 *   - cache positions outside every window hold NaN (not read), input stride gaps too;
 *   - rows that see nothing (L_b = 0, window before the cache, all masked) are exactly 0;
 *   - int8 outputs within 1 of the §4.6 quantisation of the reference, exactly 0 for empty rows.
 */
#ifndef FLASHC_TESTS_CANN_IFA_HARNESS_H
#define FLASHC_TESTS_CANN_IFA_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "common/harness.h"

#define IFA_MAXB 8

typedef enum {
    IFA_DENSE = 0,   /* one tensor of batch size B */
    IFA_LIST = 1,    /* B tensors of batch size 1 (S may differ) */
    IFA_PAGED3 = 2,  /* cache (blockNum, blockSize, N2·D) */
    IFA_PAGED4 = 3   /* cache (blockNum, N2, blockSize, D), BNSD only */
} ifa_form;

typedef struct ifa_case {
    const char *layout;        /* "BSH", "BSND", "BNSD" */
    tc_dtype dtype;            /* TC_F16 or TC_BF16 */
    int B, N1, N2, D;
    bool nkv_zero;             /* pass numKeyValueHeads = 0 (then N2 must equal N1) */
    int S[IFA_MAXB];           /* kv length per batch (IFA_DENSE: S[0] for every batch) */
    ifa_form form;
    bool list_common_stride;   /* IFA_LIST: elements laid out with the capacity of the longest one */
    int block_size, W;         /* paged: block size and block-table width (Smax = W·block_size) */

    int act_count;             /* 0: no actualSeqLengths; 1: one value; else B values */
    int64_t L[IFA_MAXB];
    bool left_pad;             /* pass kvPaddingSize */
    int64_t pad;               /* its value, written after the first phase */
    bool by_position;          /* dense/list: every cache position filled, values (and mask, pse) by
                                  physical position, so one stored cache serves any padding */

    int mask_rank;             /* 0 none, 2 (B,S), 3 (B,1,S), 4 (B,1,1,S) */
    aclDataType mask_dt;       /* BOOL, INT8 or UINT8 (0 = BOOL) */
    double mask_density;
    int mask_full_batch;       /* a batch whose whole row is masked (−1 none) */
    bool pse;                  /* pseShift */
    bool pse_shared;           /* its batch dim is 1 */
    int extra_cols;            /* mask/pse columns beyond Smax */

    bool int8_kv;
    int aq_rank;               /* antiquant shape: 1 (2), 2 (2,N2·D), 3 (2,N2,D), 4 (2,N2,1,D) */
    aclDataType aq_dt;         /* 0 = FLOAT */
    bool aq_offset;

    int qs_form;               /* output quant: 0 none, 1 [1], 2 [N1·D], 3 [N1,D], 4 [1,N1,1,D], 5 [1,1,N1·D] */
    aclDataType qs_dt;         /* 0 = FLOAT */
    bool qo;                   /* quantOffset2 */
    double qs_mag;             /* scale magnitude (0 = 20) */
    int qs_nan_channel;        /* a per-channel scale set to NaN (−1 none) */

    double scale;              /* 0 = 1/sqrt(D) */
    int inner_precise;
    fa_strides strides;
    uint64_t seed;
} ifa_case;

/* B 2, N1 4, N2 2, D 16, S 10, BNSD FLOAT16, one tensor, nothing else. */
ifa_case ifa_case_default(void);

/* Runs and checks the case.  out (optional, B·N1·D doubles) receives the output as read back
 * (int8 as integers).  Returns false when a library call failed. */
bool ifa_run_case(const char *name, const ifa_case *c, double *out);

/* The same for identities: outputs of two forms of one logical case within the output tolerance. */
void ifa_expect_same(const char *what, const ifa_case *a, const ifa_case *b);

#endif /* FLASHC_TESTS_CANN_IFA_HARNESS_H */
