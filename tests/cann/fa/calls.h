/*
 * Every argument of the five forward first phases in one struct, so that bad-input and executor
 * tests can start from a valid call and change one thing.
 */
#ifndef FLASHC_TESTS_CANN_CALLS_H
#define FLASHC_TESTS_CANN_CALLS_H

#include "common/harness.h"

typedef struct fa_args {
    fa_fn fn;
    const aclTensor *q, *qr, *k, *kr, *v, *pse, *drop, *pad, *mask, *sink, *smax, *ssum, *sout, *out;
    const aclIntArray *prefix, *aq, *akv, *qs, *kvs;
    double scale, keep;
    int64_t pre, next, head_num, inner, mode, pse_type;
    char *layout, *sml;
    uint64_t *ws;
    aclOpExecutor **ex;
} fa_args;

/* The first phase of a.fn. */
aclnnStatus fa_call(const fa_args *a);
/* The second phase of fn. */
aclnnStatus fa_call_run(fa_fn fn, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream);
/* "aclnnFlashAttentionScoreV2GetWorkspaceSize" etc. */
const char *fa_fn_name(fa_fn fn);

/* Calls a and checks the code, that the newest message names the function and contains every
 * non-NULL needle, and that *executor / *workspaceSize were cleared. */
void fa_expect(const fa_args *a, aclnnStatus code, const char *needle1, const char *needle2);

#endif /* FLASHC_TESTS_CANN_CALLS_H */
