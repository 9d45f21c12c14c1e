/*
 * flashc's CANN-compatible face: the acl entry header (semantics §6.1).  Pulls in the base types
 * and the aclrt runtime, and declares initialisation and error retrieval.
 */
#ifndef FLASHC_ACL_H
#define FLASHC_ACL_H

#include <stdio.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/* Messages of the calling thread's failures since the previous call, newest first, one per line;
 * NULL when there are none.  Valid until the next call in this thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACL_H */
