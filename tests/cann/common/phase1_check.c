#include "phase1_check.h"

#include <string.h>

#include "acl/acl.h"
#include "common/check.h"

void cann_expect_phase1(const char *fn, cann_phase1_call call, const void *args, bool pass_ws, bool pass_ex,
                        aclnnStatus code, const char *needle1, const char *needle2)
{
    aclGetRecentErrMsg(); /* start from an empty queue */
    uint64_t ws = 12345;
    aclOpExecutor *ex = (aclOpExecutor *)&ws; /* garbage the call must clear */
    const aclnnStatus st = call(args, pass_ws ? &ws : NULL, pass_ex ? &ex : NULL);
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(st == code, "expected %d, got %d (message: %s)", code, st, msg ? msg : "(none)");
    if (code == ACLNN_SUCCESS) {
        TC_CHECK(msg == NULL, "a successful call left a message: %s", msg);
        if (st == ACLNN_SUCCESS && pass_ex)
            aclDestroyAclOpExecutor(ex);
        return;
    }
    if (pass_ex)
        TC_CHECK(ex == NULL, "*executor must be NULL after a failure");
    if (pass_ws)
        TC_CHECK(ws == 0, "*workspaceSize must be 0 after a failure, got %llu", (unsigned long long)ws);
    cann_expect_message(fn, msg, needle1, needle2);
}

void cann_expect_message(const char *fn, const char *msg, const char *needle1, const char *needle2)
{
    if (!TC_CHECK(msg != NULL, "no message for a failure"))
        return;
    TC_CHECK(strstr(msg, fn) == msg, "message must start with the function name %s: %s", fn, msg);
    if (needle1)
        TC_CHECK(strstr(msg, needle1) != NULL, "message must contain \"%s\": %s", needle1, msg);
    if (needle2)
        TC_CHECK(strstr(msg, needle2) != NULL, "message must contain \"%s\": %s", needle2, msg);
}
