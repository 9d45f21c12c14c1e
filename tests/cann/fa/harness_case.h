/*
 * The steps of one forward case (harness_run.c), for harnesses that build on a forward call: the
 * backward harness runs the forward operator on a case, then its backward on the forward's
 * output and statistics.
 */
#ifndef FLASHC_TESTS_CANN_HARNESS_CASE_H
#define FLASHC_TESTS_CANN_HARNESS_CASE_H

#include "common/rng.h"
#include "common/harness.h"
#include "reference/reference.h"
#include "reference/rules_cann.h"

#define GAP_IN 0xFF  /* NaN in every float dtype, "masked" in masks */
#define GAP_OUT 0xA5 /* sentinel of outputs */

/* Everything one run owns. */
typedef struct fa_run {
    const fa_case *c;
    bool tnd;
    int B, N1, N2, D, Dv, Dr, S1cap, S2cap, s1[FA_MAXB], s2[FA_MAXB];
    int64_t cum1[FA_MAXB + 1], cum2[FA_MAXB + 1], T1, T2;
    aclDataType adt;
    tc_rng rng;
    double *q, *k, *v, *qr, *kr, *pse, *sink;
    uint8_t *mask, *drop;
    dev_tensor tq, tk, tv, tqr, tkr, tpse, tmask, tdrop, tsink, tmax, tsum, tout;
    aclIntArray *prefix, *aq, *akv, *qs, *kvs;
} fa_run;

/* The view shape of a sequence tensor with N heads of E features (returns the rank), and the
 * index of logical element (b, n, s, e) in it. */
int fa_seq_dims(const fa_run *r, bool q_side, int N, int E, int64_t *dims);
void fa_seq_index(const fa_run *r, bool q_side, int E, int b, int n, int s, int e, int64_t *idx);

/* A sequence tensor in the case's layout and strides: random values (logical [B][N][Scap][E],
 * returned) written unless gap is GAP_OUT (an output: only the sentinel), then uploaded. */
double *fa_make_seq(fa_run *r, dev_tensor *t, bool q_side, int N, int E, aclDataType dt, unsigned char gap);

/* Sizes and lengths; q, k, v, rope, mask, pse, dropout, sink; statistics and out; int arrays. */
void fa_setup_sizes(fa_run *r, const fa_case *c);
void fa_setup_inputs(fa_run *r, const fa_case *c);
void fa_setup_outputs(fa_run *r, const fa_case *c);
void fa_setup_arrays(fa_run *r, const fa_case *c);
/* All four steps on a cleared run. */
void fa_setup(fa_run *r, const fa_case *c);

/* The forward operator's two phases for the case's function. */
aclnnStatus fa_case_prepare(fa_run *r, uint64_t *ws, aclOpExecutor **ex);
aclnnStatus fa_case_execute(const fa_run *r, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream);

/* The second phase of an operator (the forward or a backward) whose first phase returned st, ws and
 * ex: run on a fresh workspace and stream.  Checks both codes and the stream; false when one failed. */
typedef aclnnStatus (*fa_second_phase)(void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream, const void *ctx);
bool fa_run_phases(aclnnStatus st, uint64_t ws, aclOpExecutor *ex, const char *what, fa_second_phase run,
                   const void *ctx);
/* The forward's two phases on a set-up run (fa_run_phases). */
bool fa_forward(fa_run *r);
/* The forward's outputs against the reference on the same logical values: fa_run_case's checks. */
void fa_check_forward(const fa_run *r);

/* The reference's description of the case, its hooks plugged into *cann (which must outlive it). */
void fa_case_reference(const fa_run *r, ref_fwd *fwd, ref_cann *cann);

/* Element offset of replica 0 of row (b, n1, i) in the statistics (semantics §2.8). */
int64_t fa_stat_at(const fa_run *r, int b, int n1, int i);

void fa_teardown(fa_run *r);

#endif /* FLASHC_TESTS_CANN_HARNESS_CASE_H */
