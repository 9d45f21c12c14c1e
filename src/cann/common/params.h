/*
 * An operator family's parameters as one list, and what is generated from it.  A family's list
 * LIST(X, f) expands X(f, ID, field, kind) for each of its parameters: an id (< 64), a typed field
 * of the family's call struct, and a kind that gives the field's C type; f is handed through to X
 * untouched (the call type, where a generator needs it).  Ids only identify a parameter; each
 * function's declaration order is its own list (entry.h), so one id set serves functions that
 * order their parameters differently.  Generic code (required pointers, "the tensor with id" in a
 * rule) reaches an argument by id through the family's field table, which checks the kind, so a
 * field is only ever read as the type it was declared with.
 */
#ifndef FC_CANN_PARAMS_H
#define FC_CANN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "signature.h"

/* Kinds: T tensor, L tensor list, I integer array, S string, F double, N int64, B bool, W the
 * workspace-size out pointer, E the executor out pointer. */
typedef enum cann_kind {
    CANN_KIND_T,
    CANN_KIND_L,
    CANN_KIND_I,
    CANN_KIND_S,
    CANN_KIND_F,
    CANN_KIND_N,
    CANN_KIND_B,
    CANN_KIND_W,
    CANN_KIND_E
} cann_kind;

/* A kind's field type. */
#define CANN_FIELD_TYPE_T const aclTensor *
#define CANN_FIELD_TYPE_L const aclTensorList *
#define CANN_FIELD_TYPE_I const aclIntArray *
#define CANN_FIELD_TYPE_S const char *
#define CANN_FIELD_TYPE_F double
#define CANN_FIELD_TYPE_N int64_t
#define CANN_FIELD_TYPE_B bool
#define CANN_FIELD_TYPE_W uint64_t *
#define CANN_FIELD_TYPE_E aclOpExecutor **

#define CANN_PARAM_ENUM_(f, id, field, kind) id,
#define CANN_PARAM_FIELD_(f, id, field, kind) CANN_FIELD_TYPE_##kind field;
#define CANN_PARAM_ROW_(f, id, field, kind) [id] = {CANN_KIND_##kind, offsetof(f, field)},

/* A family `fam` from its list: the enum fam_param of its ids (count: their number), the call
 * struct fam_call (the function's signature, any `extra` members, then every argument in its typed
 * field) and the declaration of its field table fam_fields (defined with CANN_PARAM_TABLE). */
#define CANN_PARAM_FAMILY(fam, LIST, count, ...)                                                                       \
    typedef enum fam##_param { LIST(CANN_PARAM_ENUM_, ~) count } fam##_param;                                          \
    typedef struct fam##_call {                                                                                        \
        const cann_signature *sig;                                                                                     \
        __VA_ARGS__                                                                                                    \
        LIST(CANN_PARAM_FIELD_, ~)                                                                                     \
    } fam##_call;                                                                                                      \
    extern const cann_fields fam##_fields

/* Defines fam_fields: each id's kind and field offset. */
#define CANN_PARAM_TABLE(fam, LIST, count)                                                                             \
    static const cann_field fam##_field_rows[count] = {LIST(CANN_PARAM_ROW_, fam##_call)};                             \
    const cann_fields fam##_fields = {fam##_field_rows, count}

typedef struct cann_field {
    unsigned char kind; /* cann_kind */
    size_t offset;      /* in the call struct */
} cann_field;

/* A family's fields by id. */
typedef struct cann_fields {
    const cann_field *field;
    int count;
} cann_fields;

/* The argument with id as a pointer (NULL when absent, for a scalar kind or an unknown id). */
const void *cann_arg_pointer(const cann_fields *t, const void *call, int id);
/* The tensor, tensor list or integer array with id; NULL when absent or of another kind. */
const aclTensor *cann_arg_tensor(const cann_fields *t, const void *call, int id);
const aclTensorList *cann_arg_list(const cann_fields *t, const void *call, int id);
const aclIntArray *cann_arg_ints(const cann_fields *t, const void *call, int id);

/* Phase 1, step 1 on a call: the first required pointer argument that is NULL (signature.h). */
aclnnStatus cann_args_check_required(const cann_fields *t, const cann_signature *s, const void *call);

/* Phase 1's start: step 1 on the call (signature s), then a zeroed state of `size` bytes for the
 * steps after it; NULL with *st set when either fails (the caller frees the state). */
void *cann_prepare_state(const cann_fields *t, const cann_signature *s, const void *call, size_t size,
                         aclnnStatus *st);

#endif /* FC_CANN_PARAMS_H */
