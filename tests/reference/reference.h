/*
 * The oracle: attention written straight from docs/semantics.md in double precision.
 * Naive loops, no tiling, no online softmax, and no code shared with src/ (it does not include
 * anything from src/ and knows nothing of the library's canonical problem).
 *
 * Operands are logical dense double arrays with per-batch lengths padded to a capacity:
 *   q [B][N1][S1cap][D], k [B][N2][S2cap][D], v [B][N2][S2cap][Dv],
 *   q_rope [B][N1][S1cap][Dr], k_rope [B][N2][S2cap][Dr]; out [B][N1][S1cap][Dv];
 *   softmax max/sum [B][N1][S1cap].
 * Tests convert from whatever layout/dtype they feed the library (their own conversion code).
 *
 * Everything position-dependent comes through hooks, so one reference serves every face:
 *   x(i,j) = softcap(scale·(s(i,j) + bias_before)) + bias_after        (softcap 0 = off)
 *   hidden(i,j) → excluded; softmax over the visible x with the sink; dropout via keep().
 * Helpers evaluate the CANN rules (sparse modes §2.5, pse §2.4, ALiBi: rules_cann.h) and the native
 * window rule (flashc.h: rules_native.h) literally from their documents, for tests to plug into
 * the hooks; dropout bit lookup is in dropout.h.
 */
#ifndef FLASHC_TESTS_REFERENCE_H
#define FLASHC_TESTS_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_fwd {
    int B, N1, N2, D, Dv, Dr;
    int S1cap, S2cap;
    const int *S1, *S2; /* per-batch lengths; NULL = capacity for every batch */
    const double *q, *k, *v, *q_rope, *k_rope;
    double scale;
    double softcap;
    const double *sink; /* [N1] or NULL; -INFINITY entries mean no sink for that head */
    void *ctx;          /* passed to every hook */
    bool (*hidden)(void *ctx, int b, int n1, int i, int j);        /* NULL = all visible */
    double (*bias_before)(void *ctx, int b, int n1, int i, int j); /* NULL = 0 */
    double (*bias_after)(void *ctx, int b, int n1, int i, int j);  /* NULL = 0 */
    bool (*keep)(void *ctx, int b, int n1, int i, int j);          /* NULL = keep all */
    double keep_prob;                                             /* 0 or 1 = no dropout */
    bool (*row_wanted)(void *ctx, int b, int n1, int i);           /* NULL = every row */
} ref_fwd;

/* out, smax, ssum as above (smax/ssum may be NULL).  Fully masked rows: out 0, max −FLT_MAX,
 * sum +FLT_MAX (semantics §2.6); rows beyond a batch's length, and rows row_wanted() declines,
 * are left untouched. */
void ref_forward(const ref_fwd *p, double *out, double *smax, double *ssum);

/* The number of positions row (b, n1, i) sees (0: fully masked, §0.2). */
int ref_visible(const ref_fwd *p, int b, int n1, int i);

/* Whether head n1 has a sink (a finite-or-+inf logit; −inf counts as none, §2.6). */
bool ref_has_sink(const ref_fwd *p, int n1);

/* The score x(i,j) of the hooks above (visibility not consulted).  When dx_ds is not NULL it
 * receives ∂x/∂s, the derivative with respect to the dot product s = q·k + q_rope·k_rope:
 * scale, times 1 − tanh²(scale·(s + bias_before)/softcap) with a softcap (the chain rule through
 * softcap·tanh; the backward of reference/backward.h uses it). */
double ref_score(const ref_fwd *p, int b, int n1, int i, int j, double *dx_ds);

/* Length of batch b on the query / key side. */
int ref_s1(const ref_fwd *p, int b);
int ref_s2(const ref_fwd *p, int b);

#endif
