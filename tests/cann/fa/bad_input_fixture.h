/*
 * The valid operands every bad-input rule of the FlashAttention operators starts from, forward
 * (bad_input_forward.c) and backward (bad_input_backward.c): each rule takes a valid call and
 * changes one thing.  Dense BNSD: B 2, N1 4, N2 2, S1 3, S2 5, D 8 (the backward's value and output
 * Dv 6).  TND: lengths q {2, 4} k {4, 5}, T1 6, T2 9, rope Dr 4.
 */
#ifndef FLASHC_TESTS_CANN_BAD_INPUT_FIXTURE_H
#define FLASHC_TESTS_CANN_BAD_INPUT_FIXTURE_H

#include "calls.h"
#include "grad_calls.h"

#define NULLPTR ACLNN_ERR_PARAM_NULLPTR
#define INVALID ACLNN_ERR_PARAM_INVALID
#define GARBAGE(x) ((const aclTensor *)(uintptr_t)(x))

enum { B = 2, N1 = 4, N2 = 2, S1 = 3, S2 = 5, D = 8, DV = 6, T1 = 6, T2 = 9, DR = 4 };

/* both directions: query, key, statistics (dense t*, TND n*), rope, cumulative lengths */
extern dev_tensor tq, tk, tmax, tsum, nq, nk, nmax, nsum, nqr, nkr;
extern aclIntArray *aq, *akv;
/* the forward: value and attentionOut with D features */
extern dev_tensor tv, tout, nv, nout;
/* the backward: value, dy, attentionIn and gradients with Dv = 6 value features; sink and dsink */
extern dev_tensor tv6, tdy, tin, tdq, tdk, tdv, nv6, ndy, nin, ndq, ndk, ndv, ndqr, ndkr, sink, dsink;
/* the outputs of every first phase */
extern uint64_t ws;
extern aclOpExecutor *ex;
extern char bnsd[], tnd_s[];

/* A contiguous tensor of zeros (unused trailing dims 0). */
dev_tensor bi_tensor(aclDataType dt, int rank, int64_t a, int64_t b, int64_t c, int64_t d);

void bi_setup(void);
void bi_teardown(void);

/* Every rule of one direction (TC checks). */
void fa_bad_input_forward(void);
void fa_bad_input_backward(void);

#endif /* FLASHC_TESTS_CANN_BAD_INPUT_FIXTURE_H */
