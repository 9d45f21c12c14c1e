/* Arrays from Python objects without copies: a DLPack capsule, DLPack (__dlpack__), the buffer
 * protocol, in that order.
 * Every array taken during one call stays alive in an fcpy_holds until fcpy_holds_release, which
 * also records where the call's operands live: all in host memory, or all on one CUDA device. */
#ifndef FLASHC_PY_ARRAYS_H
#define FLASHC_PY_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include <flashc.h>

#define FCPY_MAX_DIMS 8
#define FCPY_MAX_HOLDS 48

/* Where an array lives: host memory (the CPU backend), or CUDA device (or managed) memory. */
typedef enum fcpy_place { FCPY_HOST = 0, FCPY_CUDA = 1 } fcpy_place;

typedef struct fcpy_array {
    char *data;
    fc_dtype dtype;
    fcpy_place place;
    int device; /* CUDA device ordinal (FCPY_CUDA) */
    int ndim;
    int64_t shape[FCPY_MAX_DIMS];
    int64_t strides[FCPY_MAX_DIMS]; /* in elements */
} fcpy_array;

typedef struct fcpy_holds {
    PyObject *capsules[FCPY_MAX_HOLDS];
    int ncapsules;
    Py_buffer buffers[FCPY_MAX_HOLDS];
    int nbuffers;
    /* the operands' place, fixed by the first one (named in messages) */
    const char *first;
    fcpy_place place;
    int device;
} fcpy_holds;

/* Fills *out from obj (name is the argument named in errors), an operand of the call: it must live
 * where the call's other operands do.  Returns 0, or -1 with a Python exception set: TypeError for
 * an object that is no array, ValueError for a dtype or layout flashc cannot read in place or an
 * operand on another device than the others, NotImplementedError for memory on a device this build
 * has no backend for. */
int fcpy_array_get(fcpy_holds *holds, PyObject *obj, const char *name, bool writable, fcpy_array *out);
/* The same for host metadata the library reads while planning (lengths, prefixes): host memory
 * whatever the operands' place. */
int fcpy_host_array_get(fcpy_holds *holds, PyObject *obj, const char *name, fcpy_array *out);
void fcpy_holds_release(fcpy_holds *holds);
/* "float32", "bfloat16", ... (numpy's names). */
const char *fcpy_dtype_name(fc_dtype dtype);

/* Elements of a contiguous one-dimensional array of the given dtype with at least `need` entries. */
int fcpy_vector_get(fcpy_holds *holds, PyObject *obj, const char *name, fc_dtype dtype, int64_t need, bool writable,
                    void **data);
/* A host vector of metadata (fcpy_host_array_get). */
int fcpy_host_vector_get(fcpy_holds *holds, PyObject *obj, const char *name, fc_dtype dtype, int64_t need, void **data);

/* Whether this build has the CUDA backend (device arrays are accepted). */
bool fcpy_cuda_built(void);

#endif
