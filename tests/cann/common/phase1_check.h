/*
 * The first-phase contract every aclnn operator test checks (semantics §0.5), once for all
 * operators: each operator's test adapter only says how to make its call.
 */
#ifndef FLASHC_TESTS_CANN_PHASE1_CHECK_H
#define FLASHC_TESTS_CANN_PHASE1_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"

/* Makes the call of `args` with these output pointers (NULL where the case passes NULL). */
typedef aclnnStatus (*cann_phase1_call)(const void *args, uint64_t *ws, aclOpExecutor **ex);

/* Defines `static aclnnStatus name(const void *args, uint64_t *ws, aclOpExecutor **ex)`, the
 * cann_phase1_call of an operator's argument struct T (with fields ws and ex) and its first phase
 * `call(const T *)`: a copy of the arguments with the two output pointers replaced. */
#define CANN_PHASE1_CALL(name, T, call)                                                                        \
    static aclnnStatus name(const void *args, uint64_t *ws, aclOpExecutor **ex)                                \
    {                                                                                                          \
        T b = *(const T *)args;                                                                                \
        b.ws = ws;                                                                                             \
        b.ex = ex;                                                                                             \
        return call(&b);                                                                                       \
    }

/* Calls `call` with garbage in *workspaceSize and *executor (pass_ws / pass_ex false: NULL
 * pointers instead) and checks: the status is `code`; on success no message is left (the executor
 * is destroyed); on failure *executor is NULL, *workspaceSize 0 and the newest message starts with
 * `fn` and contains every non-NULL needle. */
void cann_expect_phase1(const char *fn, cann_phase1_call call, const void *args, bool pass_ws, bool pass_ex,
                        aclnnStatus code, const char *needle1, const char *needle2);

/* The message of a failure: present, starting with `fn`, containing every non-NULL needle. */
void cann_expect_message(const char *fn, const char *msg, const char *needle1, const char *needle2);

#endif /* FLASHC_TESTS_CANN_PHASE1_CHECK_H */
