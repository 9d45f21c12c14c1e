#include "operand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lower.h"
#include "errmsg.h"
#include "runtime/alloc.h"
#include "runtime/memcheck.h"

#define INVALID(...) cann_fail(ACLNN_ERR_PARAM_INVALID, __VA_ARGS__)

const char *cann_dtype_name(aclDataType dtype)
{
    switch ((int)dtype) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_BF16: return "BFLOAT16";
    case ACL_INT8: return "INT8";
    case ACL_UINT8: return "UINT8";
    case ACL_INT16: return "INT16";
    case ACL_UINT16: return "UINT16";
    case ACL_INT32: return "INT32";
    case ACL_UINT32: return "UINT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT64: return "UINT64";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_BOOL: return "BOOL";
    default: return "an unsupported dtype";
    }
}

/* Element sizes of the dtypes operators may accept (semantics §6.2); 0 for the rest. */
static int64_t operand_esize(aclDataType dtype)
{
    switch ((int)dtype) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 0;
    }
}

/* Plain formats are read as ND; fractal/packed ones and UNDEFINED are rejected. */
static bool format_plain(aclFormat f)
{
    switch ((int)f) {
    case ACL_FORMAT_ND: case ACL_FORMAT_NCHW: case ACL_FORMAT_NHWC: case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC: case ACL_FORMAT_NCDHW: case ACL_FORMAT_NC: case ACL_FORMAT_NCL: return true;
    default: return false;
    }
}

const char *cann_shape_str(const int64_t *dims, int rank, char *buf, size_t cap)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, cap - at, "[");
    for (int k = 0; k < rank && at < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, k ? ", %lld" : "%lld", (long long)dims[k]);
    if (at < cap)
        snprintf(buf + at, cap - at, "]");
    return buf;
}

/* Byte span of the view and its checks against the storage shape and the allocations. */
static aclnnStatus operand_extent(const aclTensor *t, cann_operand *op)
{
    const char *fn = op->fn, *name = op->name;
    if (op->numel == 0)
        return ACLNN_SUCCESS;
    if (!t->data)
        return INVALID("%s: %s has %lld elements but its data address is NULL", fn, name, (long long)op->numel);
    int64_t hi = t->offset; /* highest element index */
    for (int k = 0; k < op->rank; k++) {
        int64_t step;
        if (__builtin_mul_overflow(op->dims[k] - 1, op->strides[k], &step) || __builtin_add_overflow(hi, step, &hi))
            return INVALID("%s: %s: the highest element index overflows int64", fn, name);
    }
    if (t->storage_rank > 0) {
        int64_t cap = 1;
        for (uint64_t k = 0; k < t->storage_rank; k++)
            if (__builtin_mul_overflow(cap, t->storage[k], &cap))
                cap = INT64_MAX;
        if (hi >= cap)
            return INVALID("%s: %s reaches element %lld but its storage shape holds %lld elements", fn, name,
                           (long long)hi, (long long)cap);
    }
    uintptr_t lo, end;
    int64_t off_bytes, end_bytes, count;
    if (__builtin_add_overflow(hi, 1, &count) || __builtin_mul_overflow(t->offset, op->esize, &off_bytes) ||
        __builtin_mul_overflow(count, op->esize, &end_bytes) ||
        __builtin_add_overflow((uintptr_t)t->data, (uintptr_t)off_bytes, &lo) ||
        __builtin_add_overflow((uintptr_t)t->data, (uintptr_t)end_bytes, &end))
        return INVALID("%s: %s: its byte range overflows the address space", fn, name);
    if (lo % (uintptr_t)op->esize != 0)
        return INVALID("%s: %s data address (with offset) %p is not aligned to its %lld-byte elements", fn, name,
                       (void *)lo, (long long)op->esize);
    op->data = (char *)lo;
    op->base = (uintptr_t)t->data;
    op->lo = lo;
    op->bytes = (size_t)(end - lo);
    /* judged from the tensor's own data address: the offset may move lo out of its allocation */
    if (fc_rt_check_view(t->data, lo, op->bytes, &op->tracked) != FC_RT_OK)
        return INVALID("%s: %s: %s", fn, name, fc_rt_message());
    return ACLNN_SUCCESS;
}

aclnnStatus cann_operand_capture(const char *fn, const char *name, const aclTensor *t, bool allow_empty,
                                 cann_operand *op)
{
    memset(op, 0, sizeof *op);
    op->fn = fn;
    op->name = name;
    if (!t)
        return ACLNN_SUCCESS;
    if (!cann_tensor_live(t))
        return INVALID("%s: %s is not a live aclTensor (destroyed or foreign handle %p)", fn, name, (const void *)t);
    if (!format_plain(t->format))
        return INVALID("%s: %s format must be ND or a plain format (NCHW, NHWC, HWCN, NDHWC, NCDHW, NC, NCL), got %d", fn,
                       name, (int)t->format);
    op->dtype = t->dtype;
    op->esize = operand_esize(t->dtype);
    if (op->esize == 0)
        return INVALID("%s: %s dtype %d is not supported by flashc", fn, name, (int)t->dtype);
    op->rank = (int)t->rank;
    op->numel = 1;
    for (int k = 0; k < op->rank; k++) {
        op->dims[k] = t->dims[k];
        op->strides[k] = t->strides[k];
        if (t->dims[k] < 1 && !allow_empty) {
            char s[160];
            return INVALID("%s: %s dims must all be >= 1, got shape %s", fn, name,
                           cann_shape_str(t->dims, op->rank, s, sizeof s));
        }
        if (__builtin_mul_overflow(op->numel, t->dims[k], &op->numel))
            return INVALID("%s: %s element count overflows int64", fn, name);
    }
    const aclnnStatus st = operand_extent(t, op);
    if (st == ACLNN_SUCCESS)
        op->present = true;
    return st;
}

aclnnStatus cann_operand_recheck(const char *fn, const char *name, const cann_range *r)
{
    fc_rt_alloc a;
    if (r->tracked && !fc_rt_alloc_find((const void *)r->base, &a))
        return INVALID("%s: %s: the allocation that held its data at %p has been freed since the first phase", fn, name,
                       (void *)r->base);
    int tracked;
    if (fc_rt_check_view((const void *)r->base, r->lo, r->bytes, &tracked) != FC_RT_OK)
        return INVALID("%s: %s: now %s", fn, name, fc_rt_message());
    return ACLNN_SUCCESS;
}

aclnnStatus cann_check_dtype(const cann_operand *op, const aclDataType *allowed, int n)
{
    char list[160];
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        if (op->dtype == allowed[k])
            return ACLNN_SUCCESS;
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", k ? (k + 1 == n ? " or " : ", ") : "",
                               cann_dtype_name(allowed[k]));
        if (at >= sizeof list)
            at = sizeof list - 1;
    }
    return INVALID("%s: %s dtype must be %s, got %s", op->fn, op->name, list, cann_dtype_name(op->dtype));
}

aclnnStatus cann_check_same_dtype(const cann_operand *op, const cann_operand *ref)
{
    if (op->dtype != ref->dtype)
        return INVALID("%s: %s dtype must equal the %s dtype (%s), got %s", op->fn, op->name, ref->name,
                       cann_dtype_name(ref->dtype), cann_dtype_name(op->dtype));
    return ACLNN_SUCCESS;
}

aclnnStatus cann_check_rank(const cann_operand *op, int rank)
{
    if (op->rank != rank) {
        char s[160];
        return INVALID("%s: %s must have %d dims, got %d (shape %s)", op->fn, op->name, rank, op->rank,
                       cann_shape_str(op->dims, op->rank, s, sizeof s));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_check_contiguous(const cann_operand *op)
{
    int64_t want = 1;
    for (int k = op->rank - 1; k >= 0; k--) {
        if (op->dims[k] > 1 && op->strides[k] != want) {
            char s[160], d[160];
            return INVALID("%s: %s must be contiguous (row-major strides for shape %s), got strides %s", op->fn, op->name,
                           cann_shape_str(op->dims, op->rank, d, sizeof d),
                           cann_shape_str(op->strides, op->rank, s, sizeof s));
        }
        want *= op->dims[k];
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_check_disjoint(const cann_operand *op)
{
    if (!fc_dims_disjoint(op->dims, op->strides, op->rank)) {
        char s[160], d[160];
        return INVALID("%s: %s is an output and must not overlap itself, got shape %s with strides %s", op->fn, op->name,
                       cann_shape_str(op->dims, op->rank, d, sizeof d), cann_shape_str(op->strides, op->rank, s, sizeof s));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_check_shape(const cann_operand *op, const int64_t *dims, int rank)
{
    bool same = op->rank == rank;
    for (int k = 0; same && k < rank; k++)
        same = op->dims[k] == dims[k];
    if (!same) {
        char want[160], got[160];
        return INVALID("%s: %s must have shape %s, got %s", op->fn, op->name, cann_shape_str(dims, rank, want, sizeof want),
                       cann_shape_str(op->dims, op->rank, got, sizeof got));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_ints_capture(const char *fn, const char *name, const aclIntArray *a, cann_ints *out)
{
    memset(out, 0, sizeof *out);
    if (!a)
        return ACLNN_SUCCESS;
    if (!cann_int_array_live(a))
        return INVALID("%s: %s is not a live aclIntArray (destroyed or foreign handle %p)", fn, name, (const void *)a);
    out->present = true;
    out->size = a->size;
    out->value = a->value;
    return ACLNN_SUCCESS;
}

aclnnStatus cann_operand_on_host(const char *fn, const cann_operand *op, void *stream, cann_operand *host, void **buffer)
{
    *host = *op;
    *buffer = NULL;
    if (!op->present || op->numel == 0)
        return ACLNN_SUCCESS;
    void *copy = malloc(op->bytes);
    if (!copy)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the %zu bytes of %s", fn, op->bytes, op->name);
    if (fc_rt_read(copy, op->data, op->bytes, stream) != FC_RT_OK) {
        free(copy);
        return cann_fail(ACLNN_ERR_RUNTIME_ERROR, "%s: %s: %s", fn, op->name, fc_rt_message());
    }
    host->data = copy;
    *buffer = copy;
    return ACLNN_SUCCESS;
}
