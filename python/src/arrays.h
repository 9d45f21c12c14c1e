/* Arrays from Python objects without copies: DLPack (__dlpack__) first, the buffer protocol second.
 * Every array taken during one call stays alive in an fcpy_holds until fcpy_holds_release. */
#ifndef FLASHC_PY_ARRAYS_H
#define FLASHC_PY_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include <flashc.h>

#define FCPY_MAX_DIMS 8
#define FCPY_MAX_HOLDS 48

typedef struct fcpy_array {
    char *data;
    fc_dtype dtype;
    int ndim;
    int64_t shape[FCPY_MAX_DIMS];
    int64_t strides[FCPY_MAX_DIMS]; /* in elements */
} fcpy_array;

typedef struct fcpy_holds {
    PyObject *capsules[FCPY_MAX_HOLDS];
    int ncapsules;
    Py_buffer buffers[FCPY_MAX_HOLDS];
    int nbuffers;
} fcpy_holds;

/* Fills *out from obj (name is the argument named in errors).  Returns 0, or -1 with a Python
 * exception set: TypeError for an object that is no array, ValueError for a dtype or layout flashc
 * cannot read in place, NotImplementedError for memory on a device this build has no backend for. */
int fcpy_array_get(fcpy_holds *holds, PyObject *obj, const char *name, bool writable, fcpy_array *out);
void fcpy_holds_release(fcpy_holds *holds);
/* "float32", "bfloat16", ... (numpy's names). */
const char *fcpy_dtype_name(fc_dtype dtype);

/* Elements of a contiguous one-dimensional array of the given dtype with at least `need` entries. */
int fcpy_vector_get(fcpy_holds *holds, PyObject *obj, const char *name, fc_dtype dtype, int64_t need, bool writable,
                    void **data);

#endif
