/*
 * What the validation order of semantics §0.5 needs to know about one aclnn function: its
 * parameters in declaration order, their spelled names and which are required.
 *
 * Parameters are identified by a family-wide id (an enum of the operator family, < 64) so that
 * shared helpers can name "the query" whatever a function calls it.  Checks are written as rules
 * that declare the parameters they relate; cann_run_rules runs each rule at the position of the
 * last of those parameters the function declares, which is exactly "a check that relates several
 * arguments is charged to the last of them in declaration order".
 */
#ifndef FC_CANN_SIGNATURE_H
#define FC_CANN_SIGNATURE_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"

#define CANN_MAX_PARAMS 64
#define CANN_BIT(id) ((uint64_t)1 << (id))
#define CANN_MAX_RULES 128

typedef struct cann_param {
    signed char id;
    const char *name; /* as spelled in the declaration */
} cann_param;

typedef struct cann_signature {
    const char *fn;           /* first phase, e.g. "aclnnFlashAttentionScoreV2GetWorkspaceSize" */
    const char *run_fn;       /* second phase, e.g. "aclnnFlashAttentionScoreV2" */
    const cann_param *params; /* in declaration order */
    int count;
    uint64_t required;        /* ids whose NULL gives ACLNN_ERR_PARAM_NULLPTR */
} cann_signature;

/* The declared name of parameter id; NULL when the function does not declare it. */
const char *cann_sig_name(const cann_signature *s, int id);
static inline bool cann_sig_has(const cann_signature *s, int id) { return cann_sig_name(s, id) != NULL; }

/* A check and the parameters it relates (a mask of CANN_BIT(id)). */
typedef aclnnStatus (*cann_rule_fn)(void *ctx);
typedef struct cann_rule {
    uint64_t involves;
    cann_rule_fn check;
} cann_rule;

/* Phase 1, step 1: the first required pointer (ptr[id]) that is NULL, in declaration order. */
aclnnStatus cann_check_required(const cann_signature *s, const void *const *ptr);

/* Phase 1, step 2: runs the rules ordered by the position they are charged to (ties: table
 * order); stops at the first failure.  Rules relating no declared parameter never run. */
aclnnStatus cann_run_rules(const cann_signature *s, const cann_rule *rules, int n, void *ctx);

#endif /* FC_CANN_SIGNATURE_H */
