/* What one sfa_run_case owns, shared by the harness's data and run halves (private). */
#ifndef FLASHC_TESTS_CANN_SFA_HARNESS_INTERNAL_H
#define FLASHC_TESTS_CANN_SFA_HARNESS_INTERNAL_H

#include "common/rng.h"
#include "reference/sparse.h"
#include "sfa_harness.h"

#define SFA_GAP_IN 0xFF  /* NaN in FLOAT16 / BFLOAT16 / FLOAT: input gaps and padding positions */
#define SFA_GAP_OUT 0xA5 /* sentinel of outputs */

typedef struct sfa_run {
    const sfa_case *c;
    bool qt, kt, pa;              /* query TND, key TND, key paged */
    int B, N1, N2, G, D, Dv, Dr, K;
    int S1cap, S2cap, s1[SFA_MAXB], s2[SFA_MAXB];
    int64_t cum1[SFA_MAXB + 1], cum2[SFA_MAXB + 1], T1, T2;
    int W, nblocks;               /* PA: block-table width, physical blocks */
    int32_t *table;               /* PA: [B][W] */
    double scale;
    aclDataType adt;
    tc_rng rng;
    double *q, *k, *v, *qr, *kr;  /* logical [B][N][Scap][E] */
    dev_tensor tq, tk, tv, tqr, tkr, tidx, taq, takv, ttab, tout, tmax, tsum;
    double *dout;                 /* grad: logical dOut */
    dev_tensor tdout, tmax_in, tsum_in, tdq, tdk, tdv, tdqr, tdkr;
    ref_sparse ref;
} sfa_run;

/* ---- sfa_harness_data.c -------------------------------------------------------------------------- */

/* Sizes, lengths, block table, the forward's inputs and outputs, and ref (the reference's view). */
void sfa_setup(sfa_run *r, const sfa_case *c);
/* The grad's dOut, contiguous statistics holding the forward's values, and the gradients. */
void sfa_setup_grad(sfa_run *r, const double *smax_ref_order, const double *ssum_ref_order);
void sfa_teardown(sfa_run *r);

/* Index of logical element (b, n, s, e) of a query- or key-side tensor. */
void sfa_seq_index(const sfa_run *r, bool q_side, int b, int n, int s, int e, int64_t *idx);
/* Index of statistic (b, n1, i) in a (B,N2,S1,G) / (N2,T1,G) tensor. */
void sfa_stat_index(const sfa_run *r, int b, int n1, int i, int64_t *idx);
/* Rows of batch b that exist in query-side tensors (BSND: S1cap, TND: s1[b]); kv side likewise. */
int sfa_q_rows(const sfa_run *r, int b);
int sfa_kv_rows(const sfa_run *r, int b);

/* A query- or key-side tensor read back into a logical [B][N][Scap][E] array (rows that do not
 * exist are 0); also marks the bytes of the view in covered (when not NULL). */
double *sfa_read_seq(const sfa_run *r, const dev_tensor *t, bool q_side, int N, int E, unsigned char *covered);

#endif /* FLASHC_TESTS_CANN_SFA_HARNESS_INTERNAL_H */
