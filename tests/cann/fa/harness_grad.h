/*
 * The backward test harness.  A grad case is a forward case (harness.h) plus what only the
 * backward has.  fag_run_case runs the forward operator of the case through the face, then the
 * matching backward (V1 → ScoreGrad, V2 → GradV2, V3 → GradV3, VarLen/V5 → UnpaddingScoreGradV5)
 * on the forward's attentionOut and statistics with a random dy, and checks every gradient
 * element against tests/reference's ref_backward on the same logical values (the output and
 * statistics as the library wrote them):
 *   - dq, dk, dv, dq_rope, dk_rope and dsink within the §0.4 gradient tolerance;
 *   - dq (and dq_rope) rows of rows that see nothing exactly 0;
 *   - replicas 1..7 of the statistics are NaN during the backward (only replica 0 may be read);
 *   - gaps of strided gradient views untouched; input gaps are NaN.
 */
#ifndef FLASHC_TESTS_CANN_HARNESS_GRAD_H
#define FLASHC_TESTS_CANN_HARNESS_GRAD_H

#include <stdbool.h>

#include "grad_calls.h"
#include "harness_case.h"

typedef struct fag_case {
    fa_case f;       /* the forward call the backward describes */
    bool skew_stats; /* statistics that are not the forward's (m + 0.25, l · 1.5): used as given */
} fag_case;

/* A case with every option off (fa_case_default). */
fag_case fag_case_default(void);

/* Runs and checks the case (TC checks, context from name); false when a library call failed. */
bool fag_run_case(const char *name, const fag_case *c);
/* fag_run_case with the forward checked too (fa_run_case's checks, before the backward reads its
 * output and statistics): the one run of the feature tests, test_fa_*.c. */
bool fa_run_both(const char *name, const fag_case *c);
/* fa_run_both with the name formatted. */
bool fa_run_bothf(const fag_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fa_run_both; then, where other_fn or other_sil (V5's "same_as_input") differ from the case's, the
 * same case again through that forward operator and statistics order (seed + 5000, name suffixed):
 * for the rows that the forward and the backward tests once ran through different operators. */
void fa_run_both_as(const char *name, fag_case *g, fa_fn other_fn, bool other_sil);

/* ---- the steps of fag_run_case, for tests that run the backward more than once --------------- */

typedef struct fag_run {
    fa_run r;                       /* the forward case and its tensors */
    const fag_case *gc;
    double *dy, *out, *smax, *ssum; /* logical: [B][N1][S1cap][Dv], [B][N1][S1cap] */
    dev_tensor tdy, tdq, tdk, tdv, tdqr, tdkr, tdsink;
} fag_run;

/* Inputs, the forward through the face, its output and statistics as the backward's inputs
 * (skewed if asked, replicas 1..7 NaN), dy and the gradient tensors.  False when the forward failed
 * (g must still be closed). */
bool fag_open(fag_run *g, const fag_case *c);
/* The backward's first phase on g (current context options and OpenMP thread count). */
aclnnStatus fag_prepare(fag_run *g, uint64_t *ws, aclOpExecutor **ex);
/* Both phases, with a fresh workspace and stream. */
bool fag_backward(fag_run *g);
/* Every gradient against ref_backward. */
void fag_check(fag_run *g);
void fag_close(fag_run *g);
/* The backward function paired with a forward function. */
fag_fn fag_grad_fn(fa_fn fn);

#endif /* FLASHC_TESTS_CANN_HARNESS_GRAD_H */
