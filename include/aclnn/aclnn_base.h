/*
 * flashc's CANN-compatible face: executors and aclnn initialisation (semantics §6.4, §6.6).
 *
 * Two phases: aclnnXxxGetWorkspaceSize validates and captures everything into a new executor;
 * aclnnXxx(workspace, size, executor, stream) runs it.  An executor runs once and is freed by that
 * run, unless aclSetAclOpExecutorRepeatable was called first; then aclDestroyAclOpExecutor frees it.
 */
#ifndef FLASHC_ACLNN_BASE_H
#define FLASHC_ACLNN_BASE_H

#include "acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);

/* Accepted for compatibility; no other effect. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACLNN_BASE_H */
