/*
 * Operand checks shared by every aclnn operator (semantics §0.6): live handle, format, dtype,
 * rank, sizes, extent (alignment, storage shape, allocation range), contiguity and non-overlap.
 * The extent is judged from the tensor's data address over the view's whole byte range
 * (fc_rt_check_view), in both phases.
 *
 * cann_operand_capture takes a snapshot of an aclTensor, so that nothing is read from the object
 * after the first phase (the caller may destroy it then).  Messages name the parameter as the
 * function declares it: "<fn>: <name> <what was expected>, got <what was received>".
 */
#ifndef FC_CANN_OPERAND_H
#define FC_CANN_OPERAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"
#include "flashc.h"
#include "objects.h"

typedef struct cann_operand {
    bool present;               /* false: the optional argument was NULL */
    const char *fn, *name;      /* for messages */
    aclDataType dtype;
    int64_t esize;
    int rank;
    int64_t dims[CANN_MAX_RANK];
    int64_t strides[CANN_MAX_RANK];
    int64_t numel;
    char *data;                 /* element 0 (the view offset applied) */
    uintptr_t base;             /* the tensor's data address: allocation checks start from it */
    uintptr_t lo;               /* bytes [lo, lo + bytes) hold every element */
    size_t bytes;
    int tracked;                /* base lay in a live runtime allocation when captured */
} cann_operand;

/* What the second phase re-checks of a captured operand. */
typedef struct cann_range {
    const char *name;
    uintptr_t base, lo;
    size_t bytes;
    int tracked;
} cann_range;

/* Snapshot of t (NULL: absent, not an error).  Checks liveness, format, that the dtype has an
 * element size, sizes (each >= 1 unless allow_empty), and the extent.  161002 on failure. */
aclnnStatus cann_operand_capture(const char *fn, const char *name, const aclTensor *t, bool allow_empty,
                                 cann_operand *op);

/* The phase-2 repetition of the allocation check: the data's allocation must still be live if it
 * was, and the range must pass the first phase's rule against the allocations of now. */
aclnnStatus cann_operand_recheck(const char *fn, const char *name, const cann_range *r);

/* dtype must be one of the n listed. */
aclnnStatus cann_check_dtype(const cann_operand *op, const aclDataType *allowed, int n);
/* dtype must equal ref's (ref names the other parameter in the message). */
aclnnStatus cann_check_same_dtype(const cann_operand *op, const cann_operand *ref);
aclnnStatus cann_check_rank(const cann_operand *op, int rank);
/* Row-major contiguous (dims of size 1 may have any stride). */
aclnnStatus cann_check_contiguous(const cann_operand *op);
/* No two elements share an address (outputs). */
aclnnStatus cann_check_disjoint(const cann_operand *op);
/* The shape must equal dims[0..rank). */
aclnnStatus cann_check_shape(const cann_operand *op, const int64_t *dims, int rank);

/* "[2, 3, 4]" into buf. */
const char *cann_shape_str(const int64_t *dims, int rank, char *buf, size_t cap);
const char *cann_dtype_name(aclDataType dtype);

/* The core dtype of a float or byte operand (FC_F32 for anything else; callers check first). */
static inline fc_dtype cann_fc_dtype(aclDataType dt)
{
    switch ((int)dt) {
    case ACL_FLOAT16: return FC_F16;
    case ACL_BF16: return FC_BF16;
    case ACL_UINT8: return FC_U8;
    case ACL_BOOL: return FC_BOOL;
    case ACL_INT8: return FC_I8;
    default: return FC_F32;
    }
}

/* A host int array argument: live check; NULL gives an absent array. */
typedef struct cann_ints {
    bool present;
    uint64_t size;
    const int64_t *value; /* valid during the first phase only */
} cann_ints;
aclnnStatus cann_ints_capture(const char *fn, const char *name, const aclIntArray *a, cann_ints *out);

/* A host copy of a present operand's bytes for a face that reads its values (lengths, tables):
 * *host is op with data in *buffer (the caller frees it; NULL when absent or empty).  Device data
 * is copied once the work queued on stream has finished (fc_rt_read), never dereferenced. */
aclnnStatus cann_operand_on_host(const char *fn, const cann_operand *op, void *stream, cann_operand *host, void **buffer);

#endif /* FC_CANN_OPERAND_H */
