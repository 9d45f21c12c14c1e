/*
 * The per-thread queue behind aclGetRecentErrMsg (semantics §6.7): every failing acl, aclrt and
 * aclnn call pushes one message; retrieval returns them newest first and clears the queue.
 */
#ifndef FC_CANN_ERRMSG_H
#define FC_CANN_ERRMSG_H

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"

/* Pushes a message and returns code (for aclnn and acl calls alike: both are plain ints). */
int cann_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Pushes a message and returns NULL (for the object constructors). */
void *cann_fail_null(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Adds a consequence to the newest pending message (nothing when none is pending). */
void cann_fail_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* FC_CANN_ERRMSG_H */
