/* Python objects → strided views, zero-copy.  See arrays.h. */
#include "arrays.h"

#include <stdio.h>
#include <string.h>

#include "dlpack.h"

static const char *const dtype_names[] = {"float32", "float16", "bfloat16", "int8", "uint8", "bool", "int32", "int64"};

const char *fcpy_dtype_name(fc_dtype t) { return (unsigned)t < sizeof dtype_names / sizeof dtype_names[0] ? dtype_names[t] : "?"; }

#define FCPY_READS "flashc reads float32, float16 and bfloat16 data (masks: bool, uint8, int8; indices and lengths: int32, int64)"

/* The numpy name of a DLPack dtype flashc does not read, for the message. */
static void dl_dtype_text(DLDataType t, char *out, size_t size)
{
    const char *kind = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float"
                       : t.code == kDLBfloat ? "bfloat" : t.code == kDLBool ? "bool" : t.code == 5 ? "complex" : NULL;
    if (!kind)
        snprintf(out, size, "DLPack type code %d of %d bits", (int)t.code, (int)t.bits);
    else if (t.lanes != 1)
        snprintf(out, size, "%s%d x %d lanes", kind, (int)t.bits, (int)t.lanes);
    else
        snprintf(out, size, "%s%d", kind, (int)t.bits);
}

/* The numpy name of a buffer-protocol format (struct module codes). */
static const char *format_text(const char *f, Py_ssize_t itemsize)
{
    if (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!')
        f++;
    static const struct { char code; const char *name; } names[] = {
        {'d', "float64"}, {'g', "longdouble"}, {'h', "int16"}, {'H', "uint16"}, {'I', "uint32"},
        {'c', "bytes"}, {'s', "bytes"}, {'O', "object"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (f[0] == names[k].code && f[1] == '\0')
            return names[k].name;
    if ((f[0] == 'L' || f[0] == 'Q') && f[1] == '\0')
        return itemsize == 4 ? "uint32" : "uint64";
    if (f[0] == 'Z')
        return "complex";
    return NULL;
}

static int dl_dtype(DLDataType t, fc_dtype *out)
{
    if (t.lanes != 1)
        return -1;
    switch (t.code) {
    case kDLFloat: *out = t.bits == 32 ? FC_F32 : FC_F16; return t.bits == 32 || t.bits == 16 ? 0 : -1;
    case kDLBfloat: *out = FC_BF16; return t.bits == 16 ? 0 : -1;
    case kDLInt: *out = t.bits == 8 ? FC_I8 : t.bits == 32 ? FC_I32 : FC_I64; return t.bits == 8 || t.bits == 32 || t.bits == 64 ? 0 : -1;
    case kDLUInt: *out = FC_U8; return t.bits == 8 ? 0 : -1;
    case kDLBool: *out = FC_BOOL; return t.bits == 8 ? 0 : -1;
    default: return -1;
    }
}

static int buffer_dtype(const Py_buffer *b, fc_dtype *out)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return -1;
    switch (f[0]) {
    case 'f': *out = FC_F32; break;
    case 'e': *out = FC_F16; break;
    case 'b': *out = FC_I8; break;
    case 'B': *out = FC_U8; break;
    case '?': *out = FC_BOOL; break;
    case 'i': case 'l': case 'q': *out = b->itemsize == 4 ? FC_I32 : FC_I64; break;
    default: return -1;
    }
    return (int64_t)fc_dtype_size(*out) == (int64_t)b->itemsize ? 0 : -1;
}

bool fcpy_cuda_built(void)
{
#ifdef FLASHC_PY_CUDA
    return true;
#else
    return false;
#endif
}

/* Host memory (pinned included), or a CUDA device when this build has the CUDA backend. */
static int dl_place(const DLDevice *dev, const char *name, fcpy_array *out)
{
    const int32_t type = dev->device_type;
    if (type == kDLCPU || type == kDLCUDAHost) {
        out->place = FCPY_HOST;
        return 0;
    }
    if (type == kDLCUDA || type == kDLCUDAManaged) {
        if (!fcpy_cuda_built()) {
            PyErr_Format(PyExc_NotImplementedError,
                         "flashc: %s is on CUDA device %d, and this flashc build has no CUDA backend (it was built "
                         "where nvcc was not found; flashc.build_info() says how it was built): move it to the CPU "
                         "or rebuild where the CUDA toolkit is installed",
                         name, (int)dev->device_id);
            return -1;
        }
        out->place = FCPY_CUDA;
        out->device = dev->device_id;
        return 0;
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "flashc: %s lives on a device flashc has no backend for (DLPack device type %d); flashc runs on the "
                 "CPU and on CUDA devices",
                 name, (int)type);
    return -1;
}

static int from_dlpack(PyObject *capsule, const char *name, fcpy_array *out)
{
    DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (!m)
        return -1;
    const DLTensor *t = &m->dl_tensor;
    if (dl_place(&t->device, name, out) != 0)
        return -1;
    if (dl_dtype(t->dtype, &out->dtype) != 0) {
        char text[64];
        dl_dtype_text(t->dtype, text, sizeof text);
        PyErr_Format(PyExc_ValueError, "flashc: %s is %s; " FCPY_READS, name, text);
        return -1;
    }
    if (t->ndim > FCPY_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "flashc: %s has %d dimensions, at most %d are read", name, (int)t->ndim, FCPY_MAX_DIMS);
        return -1;
    }
    out->ndim = t->ndim;
    out->data = (char *)t->data + t->byte_offset;
    int64_t compact = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        out->shape[i] = t->shape[i];
        out->strides[i] = t->strides ? t->strides[i] : compact;
        compact *= t->shape[i];
    }
    return 0;
}

static int from_buffer(fcpy_holds *h, PyObject *obj, const char *name, bool writable, fcpy_array *out)
{
    Py_buffer *b = &h->buffers[h->nbuffers];
    if (PyObject_GetBuffer(obj, b, PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(writable ? PyExc_ValueError : PyExc_TypeError,
                         writable ? "flashc: %s (%.100s) is not a writable array" :
                                    "flashc: %s must be an array (numpy, torch, or any object with __dlpack__ or the "
                                    "buffer protocol), got %.100s",
                         name, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    h->nbuffers++;
    if (buffer_dtype(b, &out->dtype) != 0) {
        const char *text = format_text(b->format ? b->format : "B", b->itemsize);
        if (text)
            PyErr_Format(PyExc_ValueError, "flashc: %s is %s; " FCPY_READS, name, text);
        else
            PyErr_Format(PyExc_ValueError, "flashc: %s has buffer format '%s', not a dtype flashc reads; " FCPY_READS, name,
                         b->format ? b->format : "B");
        return -1;
    }
    if (b->ndim > FCPY_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "flashc: %s has %d dimensions, at most %d are read", name, b->ndim, FCPY_MAX_DIMS);
        return -1;
    }
    out->ndim = b->ndim;
    out->data = b->buf;
    for (int i = 0; i < b->ndim; i++) {
        out->shape[i] = b->shape[i];
        if (b->strides[i] % b->itemsize != 0) {
            PyErr_Format(PyExc_ValueError,
                         "flashc: %s has a stride of %zd bytes along axis %d, not a whole number of %zd-byte elements; "
                         "flashc strides count elements (make a copy with the elements aligned)",
                         name, b->strides[i], i, b->itemsize);
            return -1;
        }
        out->strides[i] = b->strides[i] / b->itemsize;
    }
    return 0;
}

static int read_array(fcpy_holds *h, PyObject *obj, const char *name, bool writable, fcpy_array *out)
{
    memset(out, 0, sizeof *out);
    if (h->ncapsules >= FCPY_MAX_HOLDS || h->nbuffers >= FCPY_MAX_HOLDS) {
        PyErr_SetString(PyExc_ValueError, "flashc: too many arrays in one call");
        return -1;
    }
    if (PyCapsule_IsValid(obj, "dltensor")) { /* exported by the caller (flashc's Python layer: torch tensors) */
        Py_INCREF(obj);
        h->capsules[h->ncapsules++] = obj;
        return from_dlpack(obj, name, out);
    }
    if (!PyObject_CheckBuffer(obj) && PyObject_HasAttrString(obj, "__dlpack__")) {
        PyObject *capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
        if (!capsule)
            return -1;
        h->capsules[h->ncapsules++] = capsule; /* its destructor calls the producer's deleter */
        return from_dlpack(capsule, name, out);
    }
    return from_buffer(h, obj, name, writable, out);
}

static void place_text(fcpy_place place, int device, char *out, size_t size)
{
    if (place == FCPY_CUDA)
        snprintf(out, size, "on CUDA device %d", device);
    else
        snprintf(out, size, "in host memory");
}

int fcpy_array_get(fcpy_holds *h, PyObject *obj, const char *name, bool writable, fcpy_array *out)
{
    if (read_array(h, obj, name, writable, out) != 0)
        return -1;
    if (!h->first) {
        h->first = name, h->place = out->place, h->device = out->device;
        return 0;
    }
    if (out->place == h->place && (out->place == FCPY_HOST || out->device == h->device))
        return 0;
    char here[40], there[40];
    place_text(out->place, out->device, here, sizeof here);
    place_text(h->place, h->device, there, sizeof there);
    PyErr_Format(PyExc_ValueError, "flashc: %s is %s while %s is %s; the arrays of one call live in one place", name,
                 here, h->first, there);
    return -1;
}

int fcpy_host_array_get(fcpy_holds *h, PyObject *obj, const char *name, fcpy_array *out)
{
    if (read_array(h, obj, name, false, out) != 0)
        return -1;
    if (out->place == FCPY_HOST)
        return 0;
    PyErr_Format(PyExc_ValueError, "flashc: %s must be in host memory: the library reads it while planning", name);
    return -1;
}

void fcpy_holds_release(fcpy_holds *h)
{
    for (int i = 0; i < h->ncapsules; i++)
        Py_DECREF(h->capsules[i]);
    for (int i = 0; i < h->nbuffers; i++)
        PyBuffer_Release(&h->buffers[i]);
    h->ncapsules = h->nbuffers = 0;
    h->first = NULL;
}

static int vector_check(const fcpy_array *a, const char *name, fc_dtype dtype, int64_t need, void **data)
{
    if (a->dtype != dtype || a->ndim != 1 || (a->shape[0] > 1 && a->strides[0] != 1) || a->shape[0] < need) {
        PyErr_Format(PyExc_ValueError, "flashc: %s must be a contiguous one-dimensional %s array of at least %lld entries",
                     name, dtype_names[dtype], (long long)need);
        return -1;
    }
    *data = a->data;
    return 0;
}

int fcpy_vector_get(fcpy_holds *h, PyObject *obj, const char *name, fc_dtype dtype, int64_t need, bool writable,
                    void **data)
{
    fcpy_array a;
    return fcpy_array_get(h, obj, name, writable, &a) != 0 ? -1 : vector_check(&a, name, dtype, need, data);
}

int fcpy_host_vector_get(fcpy_holds *h, PyObject *obj, const char *name, fc_dtype dtype, int64_t need, void **data)
{
    fcpy_array a;
    return fcpy_host_array_get(h, obj, name, &a) != 0 ? -1 : vector_check(&a, name, dtype, need, data);
}
