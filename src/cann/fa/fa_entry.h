/*
 * The entry pairs of the FlashAttention family from one list per function: LIST(P) expands to
 * P(field, declaredName) for each parameter in declaration order, up to but excluding
 * workspaceSize and executor (every function ends with them).  From that list alone come the
 * function's signature (names and order for the rules, signature.h), the parameter list of its
 * definition (so the compiler checks the list against the public declaration: order and types),
 * and the filling of its typed fa_call.
 */
#ifndef FC_CANN_FA_ENTRY_H
#define FC_CANN_FA_ENTRY_H

#include "cann/common/executor.h"
#include "fa_params.h"

/* A kind's type as the aclnn declarations spell it (strings are not const there). */
#define FA_DECL_TYPE_T const aclTensor *
#define FA_DECL_TYPE_I const aclIntArray *
#define FA_DECL_TYPE_S char *
#define FA_DECL_TYPE_F double
#define FA_DECL_TYPE_N int64_t
#define FA_DECL_TYPE_W uint64_t *
#define FA_DECL_TYPE_E aclOpExecutor **

/* Each parameter's id and declared type under its field's name, for the functions' lists. */
#define FA_ALIAS_(id, field, kind) FA_ID_##field = id,
enum { FA_PARAMS(FA_ALIAS_) };
#undef FA_ALIAS_
#define FA_DECL_(id, field, kind) typedef FA_DECL_TYPE_##kind fa_decl_##field;
FA_PARAMS(FA_DECL_)
#undef FA_DECL_

#define FA_ENTRY_NAME_(field, name) {FA_ID_##field, #name},
#define FA_ENTRY_DECLARE_(field, name) fa_decl_##field name,
#define FA_ENTRY_FILL_(field, name) c.field = name;

/* Defines aclnn<fn>GetWorkspaceSize, which fills a fa_call and returns prepare(call, ...), and
 * aclnn<fn>, which runs the executor; sigvar names the signature, `required` its mask of
 * parameters that must not be NULL. */
#define FA_ENTRY_PAIR(fn, sigvar, LIST, required, prepare)                                                             \
    static const cann_param sigvar##_params[] = {LIST(FA_ENTRY_NAME_){FA_WORKSPACE_SIZE, "workspaceSize"},             \
                                                 {FA_EXECUTOR, "executor"}};                                           \
    static const cann_signature sigvar = {#fn "GetWorkspaceSize", #fn, sigvar##_params,                                \
                                          (int)(sizeof sigvar##_params / sizeof sigvar##_params[0]), required};        \
    aclnnStatus fn##GetWorkspaceSize(LIST(FA_ENTRY_DECLARE_) uint64_t *workspaceSize, aclOpExecutor **executor)        \
    {                                                                                                                  \
        fa_call c = {.sig = &sigvar, .pse_type = 1};                                                                   \
        LIST(FA_ENTRY_FILL_)                                                                                           \
        return prepare(&c, workspaceSize, executor);                                                                   \
    }                                                                                                                  \
    aclnnStatus fn(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)         \
    {                                                                                                                  \
        return cann_executor_run(sigvar.run_fn, workspace, workspaceSize, executor, stream);                           \
    }

#endif /* FC_CANN_FA_ENTRY_H */
