/*
 * Non-finite values put into a case's logical inputs (semantics §0.3), for tests that run the same
 * poisoned case on the CPU kernels (test_nonfinite.c) and on emulated CUDA kernels (tests/unit):
 * the puts, and a check that the reference holds both non-finite and finite values, so that
 * neither propagation nor containment can pass vacuously.
 */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_NONFINITE_H
#define FLASHC_TESTS_NATIVE_HARNESS_NONFINITE_H

#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { NF_Q, NF_K, NF_V, NF_BIAS, NF_BIAS_ROW, NF_SINK, NF_DOUT, NF_Q_ROPE, NF_K_ROPE } nf_at;

/* One value: q[b][n][i][e], k/v[b][n][j][e] (n a kv head), bias[b][n][i][j] (NF_BIAS_ROW: every
 * column of row i), sink[n]; the backward's d_out[b][n][i][e] (NF_DOUT: nf_backward only); the
 * rope parts q_rope[b][n][i][e], k_rope[b][n][j][e] (e < Dr). */
typedef struct nf_put {
    nf_at at;
    int b, n, i, j, e;
    double value;
} nf_put;

/* Writes the n puts into d's logical inputs. */
void nf_put_all(const nt_case *c, nt_data *d, const nf_put *puts, int n);
/* Checks that the reference outputs and statistics of r's real rows hold both kinds of values. */
void nf_check_mixed(const nt_case *c, const nt_result *r);
/* The forward of c with the puts: on the CPU backend (runner NULL), else on the CPU backend and
 * through runner, each against the reference and the runner's against the CPU's
 * (nt_run_elsewhere_on); the reference checked by nf_check_mixed either way. */
void nf_forward(const nt_case *c, const nf_put *puts, int n, nt_runner_fn runner);

/* The forward suites, operands and output of dtype dt, through runner (NULL: the CPU backend):
 * NaN and ±inf in q, k and v at visible and hidden positions (causal window, mask tensor,
 * per-batch lengths), in the bias (either order) and the sink, with softcap; the decode shape
 * (one query row, G query heads per kv head, long kv rows: splits); block-sparse selection.
 * hidden_values false leaves out the two cases with non-finite values at positions that rows of
 * the same tile do not see (the CUDA kernels' P·V multiplies them by 0: NaN; ARCHITECTURE.md). */
void nf_dense_suite(fc_dtype dt, nt_runner_fn runner, bool hidden_values);
void nf_decode_suite(int g, fc_dtype dt, nt_runner_fn runner);
void nf_sparse_suite(fc_dtype dt, nt_runner_fn runner);
/* The backward of c (o's options: dtype, runner, edits of d_out and statistics) with the puts in
 * its inputs; the reference gradients must hold both non-finite and finite values. */
void nf_backward(const nt_case *c, const nf_put *puts, int n, const nt_bwd *o);
/* The suites' shapes, for backward cases: B 2, 4 / 2 heads, D 24, Dv 20, Sq 130, Skv 150, causal,
 * statistics; and a block-sparse one (blocks of 16, 3 per token, ends and duplicates). */
nt_case nf_dense_case(uint64_t seed);
nt_case nf_sparse_case(uint64_t seed, bool causal);

#ifdef __cplusplus
}
#endif

#endif /* FLASHC_TESTS_NATIVE_HARNESS_NONFINITE_H */
