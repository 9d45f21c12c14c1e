/* Arguments of a call by id through its family's field table (params.h). */
#include "params.h"

#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

static bool has_kind(const cann_fields *t, int id, cann_kind kind)
{
    return id >= 0 && id < t->count && t->field[id].kind == kind;
}

const void *cann_arg_pointer(const cann_fields *t, const void *call, int id)
{
    if (id < 0 || id >= t->count)
        return NULL;
    const char *at = (const char *)call + t->field[id].offset;
    switch ((cann_kind)t->field[id].kind) {
        /* the field read as the type its kind declares, then converted */
#define AS_POINTER(kind, type)                                                                                         \
    case kind: {                                                                                                       \
        type v;                                                                                                        \
        memcpy(&v, at, sizeof v);                                                                                      \
        return (const void *)v;                                                                                        \
    }
        AS_POINTER(CANN_KIND_T, CANN_FIELD_TYPE_T)
        AS_POINTER(CANN_KIND_L, CANN_FIELD_TYPE_L)
        AS_POINTER(CANN_KIND_I, CANN_FIELD_TYPE_I)
        AS_POINTER(CANN_KIND_S, CANN_FIELD_TYPE_S)
        AS_POINTER(CANN_KIND_W, CANN_FIELD_TYPE_W)
        AS_POINTER(CANN_KIND_E, CANN_FIELD_TYPE_E)
#undef AS_POINTER
    default:
        return NULL; /* scalars */
    }
}

/* The kind check makes each conversion back give the type the field was declared with. */
const aclTensor *cann_arg_tensor(const cann_fields *t, const void *call, int id)
{
    return has_kind(t, id, CANN_KIND_T) ? (const aclTensor *)cann_arg_pointer(t, call, id) : NULL;
}

const aclTensorList *cann_arg_list(const cann_fields *t, const void *call, int id)
{
    return has_kind(t, id, CANN_KIND_L) ? (const aclTensorList *)cann_arg_pointer(t, call, id) : NULL;
}

const aclIntArray *cann_arg_ints(const cann_fields *t, const void *call, int id)
{
    return has_kind(t, id, CANN_KIND_I) ? (const aclIntArray *)cann_arg_pointer(t, call, id) : NULL;
}

aclnnStatus cann_args_check_required(const cann_fields *t, const cann_signature *s, const void *call)
{
    const void *ptr[CANN_MAX_PARAMS] = {0};
    if (t->count > CANN_MAX_PARAMS)
        return cann_fail(ACLNN_ERR_INNER, "%s: internal error: %d parameter ids exceed CANN_MAX_PARAMS", s->fn,
                         t->count);
    for (int id = 0; id < t->count; id++)
        ptr[id] = cann_arg_pointer(t, call, id);
    return cann_check_required(s, ptr);
}

void *cann_prepare_state(const cann_fields *t, const cann_signature *s, const void *call, size_t size,
                         aclnnStatus *st)
{
    if ((*st = cann_args_check_required(t, s, call)) != ACLNN_SUCCESS)
        return NULL;
    void *state = calloc(1, size);
    if (!state)
        *st = cann_fail(ACLNN_ERR_INNER, "%s: out of host memory", s->fn);
    return state;
}
