/*
 * The oracle's backward: the gradients of semantics §3.3 in double precision, for the forward
 * described by a ref_fwd (reference.h: the same operands, hooks, softcap, sink, dropout).
 *
 * The backward is given the forward output and the softmax statistics and uses them exactly as
 * given (§3.3, §8.16: no re-normalisation): for a visible position (i, j) of row (b, n1, i)
 *   P(i,j)   = exp(x(i,j) − m_i) / l_i,              Pd  = P·keep/keepProb (P without dropout)
 *   D_i      = Σ_e dout[i,e]·out[i,e]
 *   dP(i,j)  = Σ_e dout[i,e]·v[j,e],                 dPd = dP·keep/keepProb
 *   dS(i,j)  = P·(dPd − D_i)·∂x/∂s                  (∂x/∂s = scale, or through softcap·tanh)
 *   dq[i] += dS·k[j], dq_rope[i] += dS·k_rope[j], dk[n2][j] += dS·q[i], dk_rope[n2][j] += dS·q_rope[i],
 *   dv[n2][j] += Pd·dout[i]        (kv gradients summed over the G query heads of kv head n2)
 *   dsink[n1] = −Σ_b Σ_{i < S1_b} exp(sink[n1] − m_i)/l_i · D_i   (heads with a sink; else 0)
 * Rows with no visible position contribute nothing to dq/dk/dv (their dq row is 0).
 * row_wanted is not consulted: every row of every batch takes part.
 */
#ifndef FLASHC_TESTS_REFERENCE_BACKWARD_H
#define FLASHC_TESTS_REFERENCE_BACKWARD_H

#include "reference.h"

/* Gradient arrays in the layout of the operands they belong to (reference.h):
 *   dq [B][N1][S1cap][D], dk [B][N2][S2cap][D], dv [B][N2][S2cap][Dv],
 *   dq_rope [B][N1][S1cap][Dr], dk_rope [B][N2][S2cap][Dr] (used when Dr > 0), dsink [N1].
 * Every element is written; positions beyond a batch's length and kv rows no visible position
 * reaches get 0.  Any pointer may be NULL (that gradient is not produced). */
typedef struct ref_grads {
    double *dq, *dk, *dv, *dq_rope, *dk_rope;
    double *dsink;
} ref_grads;

/* dout, out: [B][N1][S1cap][Dv]; smax, ssum: [B][N1][S1cap]. */
void ref_backward(const ref_fwd *p, const double *dout, const double *out, const double *smax, const double *ssum,
                  ref_grads *g);

/* Allocates (zeroed) the arrays of g that p needs: dq, dk, dv, and dq_rope/dk_rope when Dr > 0,
 * dsink when p->sink is set; ref_grads_free releases them. */
ref_grads ref_grads_alloc(const ref_fwd *p);
void ref_grads_free(ref_grads *g);

/* Element counts of the gradient arrays (for comparisons). */
int64_t ref_count_q(const ref_fwd *p, int E);  /* B·N1·S1cap·E */
int64_t ref_count_kv(const ref_fwd *p, int E); /* B·N2·S2cap·E */

#endif
