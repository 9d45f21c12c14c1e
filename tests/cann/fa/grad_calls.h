/*
 * Every argument of the four backward first phases in one struct, so that bad-input and executor
 * tests can start from a valid call and change one thing.
 */
#ifndef FLASHC_TESTS_CANN_GRAD_CALLS_H
#define FLASHC_TESTS_CANN_GRAD_CALLS_H

#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "common/harness.h"

typedef enum { FAG_V1, FAG_V2, FAG_V3, FAG_V5 } fag_fn;

typedef struct fag_args {
    fag_fn fn;
    const aclTensor *q, *qr, *k, *kr, *v, *dy, *pse, *drop, *pad, *mask, *smax, *ssum, *sin, *ain, *sink;
    const aclIntArray *prefix, *aq, *akv, *qs, *kvs;
    double scale, keep;
    int64_t pre, next, head_num, inner, mode, pse_type;
    char *layout, *sil;
    const aclTensor *dq, *dqr, *dk, *dkr, *dv, *dpse, *dsink;
    uint64_t *ws;
    aclOpExecutor **ex;
} fag_args;

/* The first phase of a.fn. */
aclnnStatus fag_call(const fag_args *a);
/* The second phase of fn. */
aclnnStatus fag_call_run(fag_fn fn, void *ws, uint64_t bytes, aclOpExecutor *ex, aclrtStream stream);
/* "aclnnFlashAttentionScoreGradV2GetWorkspaceSize" etc.; the second phase's name without the suffix. */
const char *fag_fn_name(fag_fn fn);
const char *fag_run_name(fag_fn fn);

/* Calls a and checks the code, that the newest message names the function and contains every
 * non-NULL needle, and that *executor / *workspaceSize were cleared. */
void fag_expect(const fag_args *a, aclnnStatus code, const char *needle1, const char *needle2);

#endif /* FLASHC_TESTS_CANN_GRAD_CALLS_H */
