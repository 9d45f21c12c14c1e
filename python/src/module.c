/* flashc._flashc: the CPython extension over the native API.  The Python layer (flashc/_native.py)
 * describes a problem as a dict; this module binds the arrays in place, runs a plan with the GIL
 * released and turns a failed status into an exception carrying the library's message. */
#include <math.h>
#include <string.h>

#include "desc.h"

static PyObject *status_error(fc_status st, const char *msg)
{
    PyObject *type = st == FC_ERR_NO_MEMORY ? PyExc_MemoryError
                     : st == FC_ERR_INVALID_ARG || st == FC_ERR_NULL_ARG ? PyExc_ValueError
                                                                          : PyExc_RuntimeError;
    PyErr_Format(type, "%s (%s)", msg[0] ? msg : "flashc failed", fc_status_name(st));
    return NULL;
}

/* Plan, size the workspace, run, destroy: all without the GIL. */
static PyObject *run(fcpy_call *c, bool backward, int threads)
{
    fc_options opts = {.backend = FC_BACKEND_CPU, .threads = threads};
    fc_status st;
    char msg[1024] = "";
    Py_BEGIN_ALLOW_THREADS
    fc_plan *plan = NULL;
    st = backward ? fc_plan_create_backward(&c->desc, &c->grads, &opts, &plan) : fc_plan_create(&c->desc, &opts, &plan);
    size_t ws = 0;
    void *work = NULL;
    if (st == FC_OK)
        st = fc_plan_workspace_size(plan, &ws);
    if (st == FC_OK && ws > 0 && !(work = malloc(ws)))
        st = FC_ERR_NO_MEMORY;
    if (st == FC_OK)
        st = fc_plan_run(plan, NULL, work, ws);
    if (st != FC_OK)
        snprintf(msg, sizeof msg, "%s", st == FC_ERR_NO_MEMORY && !fc_last_error()[0] ? "flashc: out of memory" : fc_last_error());
    free(work);
    fc_plan_destroy(plan);
    if (st == FC_OK && !backward && c->lse)
        for (int64_t i = 0; i < c->lse_count; i++) /* rows that see nothing keep max = −FLT_MAX */
            c->lse[i] += logf(c->sum_scratch[i]);
    Py_END_ALLOW_THREADS
    if (st != FC_OK)
        return status_error(st, msg);
    Py_RETURN_NONE;
}

static PyObject *py_forward(PyObject *self, PyObject *args)
{
    PyObject *dict;
    int threads = 0;
    if (!PyArg_ParseTuple(args, "O!|i:forward", &PyDict_Type, &dict, &threads))
        return NULL;
    fcpy_call c;
    memset(&c, 0, sizeof c);
    PyObject *r = fcpy_desc_from_dict(&c, dict) == 0 ? run(&c, false, threads) : NULL;
    fcpy_call_release(&c);
    return r;
}

static PyObject *py_backward(PyObject *self, PyObject *args)
{
    PyObject *dict, *grads;
    int threads = 0;
    if (!PyArg_ParseTuple(args, "O!O!|i:backward", &PyDict_Type, &dict, &PyDict_Type, &grads, &threads))
        return NULL;
    fcpy_call c;
    memset(&c, 0, sizeof c);
    PyObject *r = fcpy_desc_from_dict(&c, dict) == 0 && fcpy_grads_from_dict(&c, grads) == 0 ? run(&c, true, threads) : NULL;
    fcpy_call_release(&c);
    return r;
}

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
        return status_error(st, fc_last_error());
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

static PyMethodDef methods[] = {
    {"forward", py_forward, METH_VARARGS, "forward(desc: dict, threads: int = 0) -> None: run an attention forward."},
    {"backward", py_backward, METH_VARARGS, "backward(desc: dict, grads: dict, threads: int = 0) -> None: run its backward."},
    {"cpu_isa", py_cpu_isa, METH_NOARGS, "cpu_isa() -> str: the CPU kernel path in use (RuntimeError when FLASHC_ISA names none)."},
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
