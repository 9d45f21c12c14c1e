/*
 * What one IFA harness run owns (private to ifa_build.c and ifa_check.c): the sizes, each batch's
 * kv window worked out from semantics §4.3 by the test itself, and the device operands.
 *
 * Values are functions of their logical index (seed, batch, head, token of the window, feature),
 * not of an RNG sequence, so two cases that store the same logical cache differently (paged vs
 * contiguous, left-padded vs trimmed, list vs padded tensor) hold the same numbers.
 */
#ifndef FLASHC_TESTS_CANN_IFA_RUN_H
#define FLASHC_TESTS_CANN_IFA_RUN_H

#include "ifa_harness.h"

typedef struct ifa_run {
    const ifa_case *c;
    aclDataType adt, out_dt;
    int B, N1, N2, D;
    int S[IFA_MAXB];      /* physical kv length per batch (paged: W·blockSize) */
    int Smax, cols;       /* Smax and the mask/pse column count */
    int64_t L[IFA_MAXB];  /* L_b */
    int lo[IFA_MAXB], len[IFA_MAXB]; /* the window: physical tokens [lo, lo + len) */
    int blocks;           /* paged: blockNum */
    int nkv;              /* tensors per list */
    dev_tensor tq, tout, tmask, tpse, taqs, taqo, tqs, tqo, tbt, tpad;
    dev_tensor tk[IFA_MAXB], tv[IFA_MAXB];
    aclTensorList *lk, *lv;
    aclIntArray *act;
    int32_t *table;       /* paged: the block table as uploaded (B × W) */
    double *gathered[2];  /* paged: key/value caches gathered into [B][N2][Smax][D] (raw int8 values) */
} ifa_run;

/* A value in [−1, 1) determined by the seed and up to five indices. */
double ifa_hash_unit(uint64_t seed, int kind, int64_t a, int64_t b, int64_t c, int64_t d);

/* Sizes and windows, then every device operand (the kvPaddingSize tensor holds a wrong value
 * until ifa_write_pad). */
void ifa_build(ifa_run *r, const ifa_case *c);
void ifa_write_pad(ifa_run *r);
void ifa_free(ifa_run *r);

/* The first phase over the run's operands and the case's options. */
aclnnStatus ifa_first_phase(const ifa_run *r, uint64_t *ws, aclOpExecutor **ex);

/* The layout index of (b, n, s, e) of a sequence tensor with E features per head. */
void ifa_seq_index(const char *layout, int E, int64_t b, int64_t n, int64_t s, int64_t e, int64_t *idx);

/* Element (n, e) of the antiquant map of key (which 0) or value (1), and of the output quant map
 * (channel c = n1·D + e); offsets 0 when absent. */
double ifa_aq_scale(const ifa_run *r, int which, int n, int e);
double ifa_aq_offset(const ifa_run *r, int which, int n, int e);
double ifa_qs(const ifa_run *r, int c);
double ifa_qo(const ifa_run *r, int c);

/* The stored kv element (b, n2, physical token t, e) as the reference reads it: dense and list
 * forms from their tensors, paged forms gathered through the block table (tests/reference). */
double ifa_kv_at(const ifa_run *r, int which, int b, int n, int t, int e);

#endif /* FLASHC_TESTS_CANN_IFA_RUN_H */
