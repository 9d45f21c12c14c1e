/*
 * Every argument of the two SparseFlashAttention first phases in one struct, so that bad-input and
 * second-phase tests can start from a valid call and change one thing.
 */
#ifndef FLASHC_TESTS_CANN_SFA_CALLS_H
#define FLASHC_TESTS_CANN_SFA_CALLS_H

#include "common/harness.h"

typedef struct sfa_args {
    bool grad;
    const aclTensor *q, *k, *v, *idx, *table, *aq, *akv, *qr, *kr, *out, *smax, *ssum; /* forward (and shared) */
    const aclTensor *dout, *dq, *dk, *dv, *dqr, *dkr;                                   /* grad */
    double scale;
    int64_t bs, mode, pre, next, amode;
    bool lse, det;
    char *lq, *lkv; /* forward */
    char *layout;   /* grad */
    uint64_t *ws;
    aclOpExecutor **ex;
} sfa_args;

/* The first phase of the forward or the grad. */
aclnnStatus sfa_call(const sfa_args *a);
/* The second phase of the forward or the grad. */
aclnnStatus sfa_call_run(bool grad, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream);

/* Calls a and checks the code, that the newest message starts with the function's name and
 * contains every non-NULL needle, and that *executor / *workspaceSize were cleared. */
void sfa_expect(const sfa_args *a, aclnnStatus code, const char *needle1, const char *needle2);

/* The second phase of a fresh executor for a (which must pass the first phase): the code and the
 * message's needles as above. */
void sfa_expect_run(const sfa_args *a, aclnnStatus code, const char *needle1, const char *needle2);

#endif /* FLASHC_TESTS_CANN_SFA_CALLS_H */
