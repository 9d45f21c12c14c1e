/*
 * An entry pair from one list per function: LIST(P) expands to P(field, declaredName) for each
 * parameter in declaration order, up to but excluding workspaceSize and executor (every function
 * ends with them; the family's list names them workspace_size and executor).  From that list
 * alone come the function's signature (names and order for the rules, signature.h), the parameter
 * list of its definition (so the compiler checks the list against the public declaration: order
 * and types) and the filling of the family's typed call struct (params.h).
 */
#ifndef FC_CANN_ENTRY_H
#define FC_CANN_ENTRY_H

#include "executor.h"
#include "params.h"

/* A kind's type as the aclnn declarations spell it (strings are not const there). */
#define CANN_DECL_TYPE_T const aclTensor *
#define CANN_DECL_TYPE_L const aclTensorList *
#define CANN_DECL_TYPE_I const aclIntArray *
#define CANN_DECL_TYPE_S char *
#define CANN_DECL_TYPE_F double
#define CANN_DECL_TYPE_N int64_t
#define CANN_DECL_TYPE_B bool
#define CANN_DECL_TYPE_W uint64_t *
#define CANN_DECL_TYPE_E aclOpExecutor **

#define CANN_ENTRY_ALIAS_(f, id, field, kind) CANN_ID_##field = id,
#define CANN_ENTRY_DECL_(f, id, field, kind) typedef CANN_DECL_TYPE_##kind cann_decl_##field;
/* Each parameter's id and declared type under its field's name, for the functions' lists (one
 * family per translation unit). */
#define CANN_ENTRY_ALIASES(PARAMS)                                                                                     \
    enum { PARAMS(CANN_ENTRY_ALIAS_, ~) };                                                                             \
    PARAMS(CANN_ENTRY_DECL_, ~)

/* The first phase's outputs before anything is checked: no workspace, no executor. */
static inline void cann_entry_clear(uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (workspaceSize)
        *workspaceSize = 0;
    if (executor)
        *executor = NULL;
}

#define CANN_ENTRY_NAME_(field, name) {CANN_ID_##field, #name},
#define CANN_ENTRY_DECLARE_(field, name) cann_decl_##field name,
#define CANN_ENTRY_FILL_(field, name) c.field = name;

/* Defines aclnn<fn>GetWorkspaceSize, which fills a call_type (designated `defaults` first: the
 * values of parameters the function lacks), clears its outputs and returns prepare(call,
 * workspaceSize, executor), and aclnn<fn>, which
 * runs the executor; sigvar names the signature, `required` its mask of parameters that must not
 * be NULL. */
#define CANN_ENTRY_PAIR(fn, sigvar, LIST, required, call_type, defaults, prepare)                                      \
    static const cann_param sigvar##_params[] = {LIST(CANN_ENTRY_NAME_){CANN_ID_workspace_size, "workspaceSize"},      \
                                                 {CANN_ID_executor, "executor"}};                                      \
    static const cann_signature sigvar = {#fn "GetWorkspaceSize", #fn, sigvar##_params,                                \
                                          (int)(sizeof sigvar##_params / sizeof sigvar##_params[0]), required};        \
    aclnnStatus fn##GetWorkspaceSize(LIST(CANN_ENTRY_DECLARE_) uint64_t *workspaceSize, aclOpExecutor **executor)      \
    {                                                                                                                  \
        call_type c = {.sig = &sigvar, defaults};                                                                      \
        LIST(CANN_ENTRY_FILL_)                                                                                         \
        c.workspace_size = workspaceSize;                                                                              \
        c.executor = executor;                                                                                         \
        cann_entry_clear(workspaceSize, executor);                                                                     \
        return prepare(&c, workspaceSize, executor);                                                                   \
    }                                                                                                                  \
    aclnnStatus fn(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)         \
    {                                                                                                                  \
        return cann_executor_run(sigvar.run_fn, workspace, workspaceSize, executor, stream);                           \
    }

#endif /* FC_CANN_ENTRY_H */
