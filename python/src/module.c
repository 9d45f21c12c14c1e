/* flashc._flashc: the CPython extension over the native API.  The Python layer (flashc/_describe.py)
 * describes a problem as a dict; this module binds the arrays in place (host memory, or one CUDA
 * device), runs a plan with the GIL released (plans.c) and turns a failed status into an exception
 * carrying the library's message. */
#include <string.h>

#include "plans.h"

static PyObject *call(PyObject *args, bool backward)
{
    PyObject *dict, *grads = NULL;
    int threads = 0;
    const int parsed = backward ? PyArg_ParseTuple(args, "O!O!|i:backward", &PyDict_Type, &dict, &PyDict_Type, &grads, &threads)
                                : PyArg_ParseTuple(args, "O!|i:forward", &PyDict_Type, &dict, &threads);
    if (!parsed)
        return NULL;
    fcpy_call c;
    memset(&c, 0, sizeof c);
    fcpy_launch launch;
    const int rc = fcpy_desc_from_dict(&c, dict) != 0 || (backward && fcpy_grads_from_dict(&c, grads) != 0) ||
                           fcpy_launch_from_dict(&launch, dict, threads) != 0
                       ? -1
                       : fcpy_run(&c, backward, &launch);
    fcpy_call_release(&c);
    if (rc != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_forward(PyObject *self, PyObject *args) { return call(args, false); }
static PyObject *py_backward(PyObject *self, PyObject *args) { return call(args, true); }

/* The kernel path, or the error every plan would give (a FLASHC_ISA naming a path this build lacks
 * or this CPU cannot run): planning the smallest problem says which. */
static PyObject *py_cpu_isa(PyObject *self, PyObject *unused)
{
    float x[1] = {0};
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = d.q_heads = d.kv_heads = d.head_dim = d.q_len = d.kv_len = 1;
    d.q = d.k = d.v = d.out = fc_tensor_bnsd(x, FC_F32, 1, 1, 1);
    const fc_options opts = {.backend = FC_BACKEND_CPU};
    fc_plan *plan = NULL;
    const fc_status st = fc_plan_create(&d, &opts, &plan);
    fc_plan_destroy(plan);
    if (st != FC_OK)
        return fcpy_status_error(st, fc_last_error());
    return PyUnicode_FromString(fc_cpu_isa());
}

/* (shape, dtype name) of anything fcpy_array_get reads: what the Python layer needs of objects it
 * knows only through __dlpack__ or the buffer protocol. */
static PyObject *py_array_info(PyObject *self, PyObject *args)
{
    PyObject *obj;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os:array_info", &obj, &name))
        return NULL;
    fcpy_holds holds;
    memset(&holds, 0, sizeof holds);
    fcpy_array a;
    PyObject *r = NULL;
    if (fcpy_array_get(&holds, obj, name, false, &a) == 0) {
        PyObject *shape = PyTuple_New(a.ndim);
        for (int i = 0; shape && i < a.ndim; i++)
            PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(a.shape[i]));
        if (shape)
            r = Py_BuildValue("(Ns)", shape, fcpy_dtype_name(a.dtype));
    }
    fcpy_holds_release(&holds);
    return r;
}

/* What this build has: the CUDA backend or not, its runtime (linked statically) and the devices it
 * sees here. */
static PyObject *py_build_info(PyObject *self, PyObject *unused)
{
    const char *why = "";
    const int devices = fcpy_cuda_device_count(&why);
    const int rt = fcpy_cuda_runtime_version();
    return Py_BuildValue("{s:O,s:O,s:i,s:i,s:s}", "cuda", fcpy_cuda_built() ? Py_True : Py_False, "cuda_runtime_static",
                         fcpy_cuda_built() ? Py_True : Py_False, "cuda_runtime_version", rt, "cuda_devices", devices,
                         "cuda_unavailable", devices > 0 ? "" : why);
}

static PyObject *py_plan_cache(PyObject *self, PyObject *args)
{
    int slots;
    if (!PyArg_ParseTuple(args, "i:plan_cache", &slots))
        return NULL;
    return PyLong_FromLong(fcpy_plan_cache_size(slots));
}

static PyObject *py_plan_cache_counts(PyObject *self, PyObject *unused)
{
    uint64_t hits, misses;
    fcpy_plan_cache_counts(&hits, &misses);
    return Py_BuildValue("(KK)", (unsigned long long)hits, (unsigned long long)misses);
}

static PyMethodDef methods[] = {
    {"forward", py_forward, METH_VARARGS, "forward(desc: dict, threads: int = 0) -> None: run an attention forward."},
    {"backward", py_backward, METH_VARARGS, "backward(desc: dict, grads: dict, threads: int = 0) -> None: run its backward."},
    {"cpu_isa", py_cpu_isa, METH_NOARGS, "cpu_isa() -> str: the CPU kernel path in use (RuntimeError when FLASHC_ISA names none)."},
    {"build_info", py_build_info, METH_NOARGS, "build_info() -> dict: the CUDA backend, its runtime and the devices it sees."},
    {"plan_cache", py_plan_cache, METH_VARARGS, "plan_cache(slots: int) -> int: how many plans are kept (0: none); returns the previous count."},
    {"plan_cache_counts", py_plan_cache_counts, METH_NOARGS, "plan_cache_counts() -> (hits, misses): calls that found a kept plan, calls that planned."},
    {"array_info", py_array_info, METH_VARARGS, "array_info(obj, name) -> (shape, dtype): an array read through __dlpack__ or the buffer protocol."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_flashc", "The flashc native API, bound in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__flashc(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "native_version", "0.1.0") != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
