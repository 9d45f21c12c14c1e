/*
 * Conformance tolerance of semantics §0.4: y passes against reference r when
 *     |y − r| ≤ atol·M + rtol·|r|
 * (M = 1 for forward outputs, max(1, max|r|) for gradients), plus the exact checks the document
 * requires: bit-exact statistics of empty rows, exact zeros, bit-identical replicas.
 */
#ifndef FLASHC_TESTS_TOLERANCE_H
#define FLASHC_TESTS_TOLERANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "halfconv.h"

typedef struct tc_tol {
    double rtol, atol;
} tc_tol;

tc_tol tc_tol_out(tc_dtype out_dtype); /* output rows by dtype */
tc_tol tc_tol_max(void);               /* softmax max (fp32) */
tc_tol tc_tol_sum(void);               /* softmax sum (fp32) */

bool tc_close(double y, double r, tc_tol t, double M);

/* M for a gradient tensor: max(1, max |r|). */
double tc_grad_scale(const double *r, int64_t n);

/* Compares n values; one TC check for the whole array, the first few mismatches printed.
 * Returns the number of elements out of tolerance (NaN passes exactly where the reference is NaN,
 * ±inf where it is the same inf). */
int64_t tc_compare(const char *what, const double *y, const double *r, int64_t n, tc_tol t, double M);

/* Bit patterns of the fp32 values the document fixes exactly. */
#define TC_NEG_FLT_MAX_BITS 0xFF7FFFFFu
#define TC_FLT_MAX_BITS 0x7F7FFFFFu
uint32_t tc_f32_bits(float f);

#endif
