/* Arguments of a fa_call by id, from the one parameter list (fa_params.h). */
#include "fa_params.h"

#include <stddef.h>

enum { KIND_T, KIND_I, KIND_S, KIND_F, KIND_N, KIND_W, KIND_E };

static const unsigned char kind_of[FA_NPARAMS] = {
#define KIND(id_, field, kind) [id_] = KIND_##kind,
    FA_PARAMS(KIND)
#undef KIND
};

/* A field of each kind as an untyped pointer (scalars: none). */
#define AS_POINTER_T(v) (const void *)(v)
#define AS_POINTER_I(v) (const void *)(v)
#define AS_POINTER_S(v) (const void *)(v)
#define AS_POINTER_F(v) NULL
#define AS_POINTER_N(v) NULL
#define AS_POINTER_W(v) (const void *)(v)
#define AS_POINTER_E(v) (const void *)(v)

static const void *pointer(const fa_call *c, fa_param id)
{
    switch (id) {
#define CASE(id_, field, kind)                                                                                         \
    case id_:                                                                                                          \
        return AS_POINTER_##kind(c->field);
        FA_PARAMS(CASE)
#undef CASE
    default:
        return NULL;
    }
}

/* The kind check makes each cast back the type the field was declared with. */
const aclTensor *fa_call_tensor(const fa_call *c, fa_param id)
{
    return id >= 0 && id < FA_NPARAMS && kind_of[id] == KIND_T ? (const aclTensor *)pointer(c, id) : NULL;
}

const aclIntArray *fa_call_ints(const fa_call *c, fa_param id)
{
    return id >= 0 && id < FA_NPARAMS && kind_of[id] == KIND_I ? (const aclIntArray *)pointer(c, id) : NULL;
}

void fa_call_pointers(const fa_call *c, const void *ptr[FA_NPARAMS])
{
    for (int id = 0; id < FA_NPARAMS; id++)
        ptr[id] = pointer(c, (fa_param)id);
}
