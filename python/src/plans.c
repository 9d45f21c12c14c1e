/* Plans kept per problem shape, and runs.  See plans.h.
 *
 * Why keep plans: a CUDA plan uploads its per-batch facts and tile order when it is made and frees
 * that device memory when destroyed, and both synchronise the device; a call of a shape planned
 * before is only queued on the caller's stream.  (CPU plans are cheap; keeping them too means the
 * CPU test suite exercises the reuse.)
 *
 * A kept plan is found by its key: the description with every address a run rebinds
 * (fc_attention_io) reduced to "present or not", the contents of the host arrays the library read
 * while planning (lengths, prefixes, per-batch windows), the gradients' description, the options
 * (backend, threads, device, stream) and the environment switches read while planning.  Other
 * addresses (block table, dequantisation scales, sparse indices) stay in the key as they are.  A
 * plan in use is taken out of the cache, so two threads never run one plan at once.
 *
 * A CUDA run finds a bad block-table entry on the GPU and the plan reports it later (its next run,
 * or fc_plan_check_runs).  So that no report is lost with a plan that is not called again: every
 * call first asks the kept plans about runs the device has finished (host-mapped memory: no
 * waiting), and a plan is asked, after waiting for its device, before it is destroyed.  A report
 * found is raised by the call that finds it, or, when that call fails itself or is a resize of the
 * cache, by the next call. */
#include "plans.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef FLASHC_PY_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---- keys ------------------------------------------------------------------------------------- */

typedef struct keybuf {
    unsigned char *data;
    size_t len, cap;
    bool failed;
} keybuf;

static void put(keybuf *k, const void *bytes, size_t n)
{
    if (k->failed)
        return;
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap : 1024;
        while (cap < k->len + n)
            cap *= 2;
        unsigned char *grown = PyMem_Realloc(k->data, cap);
        if (!grown) {
            k->failed = true;
            return;
        }
        k->data = grown, k->cap = cap;
    }
    memcpy(k->data + k->len, bytes, n);
    k->len += n;
}

static void put_i64s(keybuf *k, const int64_t *v, int64_t n)
{
    if (v && n > 0)
        put(k, v, (size_t)n * sizeof *v);
}

/* An environment switch: unset and set-to-"" differ. */
static void put_env(keybuf *k, const char *name)
{
    const char *v = getenv(name);
    const unsigned char set = v != NULL;
    put(k, &set, 1);
    if (v)
        put(k, v, strlen(v) + 1);
}

/* Padding bytes hold whatever the stack held where a part was made (fc_window_band's return value,
 * compound literals): cleared, so that one problem shape gives one key (else a kept plan is missed,
 * and on CUDA every miss plans and frees, which synchronises).  Compilers without the builtin get
 * the window, the part seen to differ, rebuilt field by field. */
static void clear_padding_desc(fc_attention_desc *c)
{
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
    __builtin_clear_padding(c);
    return;
#endif
#endif
    const fc_window w = c->vis.window;
    memset(&c->vis.window, 0, sizeof c->vis.window);
    c->vis.window.enabled = w.enabled, c->vis.window.left = w.left, c->vis.window.right = w.right;
    c->vis.window.align = w.align;
}

static void clear_padding_grads(fc_attention_grads *g)
{
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
    __builtin_clear_padding(g);
#endif
#endif
    (void)g;
}

/* An address the run rebinds: only whether it is there. */
#define PRESENT(field) ((field) = (field) ? (void *)(uintptr_t)1 : NULL)

static void put_desc(keybuf *k, const fc_attention_desc *d)
{
    fc_attention_desc c;
    memcpy(&c, d, sizeof c);
    clear_padding_desc(&c);
    PRESENT(c.q_lens), PRESENT(c.kv_lens), PRESENT(c.kv_starts), PRESENT(c.vis.prefix), PRESENT(c.vis.batch_window);
    PRESENT(c.q.data), PRESENT(c.k.data), PRESENT(c.v.data), PRESENT(c.q_rope.data), PRESENT(c.k_rope.data);
    PRESENT(c.out.data), PRESENT(c.bias.data), PRESENT(c.vis.mask.data), PRESENT(c.alibi.slopes), PRESENT(c.sink);
    PRESENT(c.dropout.keep_bits), PRESENT(c.stats.max), PRESENT(c.stats.sum);
    put(k, &c, sizeof c);
    put_i64s(k, d->q_lens, d->batch);
    put_i64s(k, d->kv_lens, d->batch);
    put_i64s(k, d->kv_starts, d->batch);
    put_i64s(k, d->vis.prefix, d->batch);
    for (int64_t b = 0; d->vis.batch_window && b < d->batch; b++) {
        const fc_window *w = &d->vis.batch_window[b];
        const int64_t fields[4] = {w->enabled, w->left, w->right, w->align};
        put_i64s(k, fields, 4);
    }
}

static void put_grads(keybuf *k, const fc_attention_grads *g)
{
    fc_attention_grads c;
    memcpy(&c, g, sizeof c);
    clear_padding_grads(&c);
    PRESENT(c.d_out.data), PRESENT(c.dq.data), PRESENT(c.dk.data), PRESENT(c.dv.data);
    PRESENT(c.dq_rope.data), PRESENT(c.dk_rope.data), PRESENT(c.dsink);
    put(k, &c, sizeof c);
}

static void plan_key(keybuf *k, const fcpy_call *c, bool backward, const fc_options *opts, int device)
{
    const int64_t head[5] = {backward, opts->backend, opts->threads, device, (int64_t)(uintptr_t)opts->stream};
    put_i64s(k, head, 5);
    put_desc(k, &c->desc);
    if (backward)
        put_grads(k, &c->grads);
    for (const char *const *name = fc_plan_switches(); *name; name++)
        put_env(k, *name);
}

/* ---- devices --------------------------------------------------------------------------------- */

/* The tensors' device made current for the call; *was receives the caller's, which
 * restore_device puts back (the runtime's current device is the thread's, and PyTorch reads it). */
static fc_status select_device(int device, int *was, char *msg, size_t size)
{
#ifdef FLASHC_PY_CUDA
    cudaError_t err = cudaGetDevice(was);
    if (err == cudaSuccess && *was != device)
        err = cudaSetDevice(device);
    if (err == cudaSuccess)
        return FC_OK;
    *was = -1;
    snprintf(msg, size, "flashc: cudaSetDevice(%d): %s", device, cudaGetErrorString(err));
    return FC_ERR_BACKEND;
#else
    (void)was;
    snprintf(msg, size, "flashc: CUDA device %d given to a build without the CUDA backend", device);
    return FC_ERR_BACKEND;
#endif
}

static void restore_device(int was, int device)
{
#ifdef FLASHC_PY_CUDA
    if (was >= 0 && was != device)
        cudaSetDevice(was);
#else
    (void)was, (void)device;
#endif
}

/* ---- the cache (touched with the GIL held) ---------------------------------------------------- */

typedef struct kept {
    fc_plan *plan; /* NULL: a free entry */
    keybuf key;
    uint64_t used;
    int device; /* the CUDA device of its runs; −1: the CPU */
} kept;

static kept *cache;
static int cache_slots = 16, cache_allocated;
static uint64_t cache_clock, cache_hits, cache_misses;

/* Earlier runs' reports: the first one's error message, and how many more were found. */
typedef struct report {
    fc_status st;
    char msg[1024];
    int more;
} report;

static report pending; /* found and not raised yet (touched with the GIL held) */

/* Asks plan about its finished runs (every plan is asked: a report is returned once). */
static void ask(fc_plan *plan, report *r)
{
    const fc_status st = fc_plan_check_runs(plan, false);
    if (st == FC_OK)
        return;
    if (r->st != FC_OK) {
        r->more++;
        return;
    }
    r->st = st;
    snprintf(r->msg, sizeof r->msg, "flashc: an earlier call's run: %s", fc_last_error());
}

static void keep_pending(const report *r)
{
    if (r->st != FC_OK && pending.st == FC_OK)
        pending = *r;
    else if (r->st != FC_OK)
        pending.more += 1 + r->more;
}

/* Raises the pending report (returns -1), or returns 0 when there is none. */
static int raise_pending(void)
{
    if (pending.st == FC_OK)
        return 0;
    char msg[sizeof pending.msg + 64];
    snprintf(msg, sizeof msg, pending.more ? "%s; and %d more such reports" : "%s", pending.msg, pending.more);
    const fc_status st = pending.st;
    memset(&pending, 0, sizeof pending);
    fcpy_status_error(st, msg);
    return -1;
}

/* Destroys plan after waiting for its device and asking it about its runs (the destruction waits
 * for the device all the same; the stream of its runs may be gone), with its device current. */
static void destroy_unlocked(fc_plan *plan, int device, report *r)
{
    if (!plan)
        return;
    Py_BEGIN_ALLOW_THREADS
    int was = -1;
    char ignored[256];
    const bool selected = device >= 0 && select_device(device, &was, ignored, sizeof ignored) == FC_OK;
#ifdef FLASHC_PY_CUDA
    if (selected)
        cudaDeviceSynchronize();
#endif
    ask(plan, r);
    fc_plan_destroy(plan);
    if (selected)
        restore_device(was, device);
    Py_END_ALLOW_THREADS
}

/* The kept plans' reports of finished runs, into the pending one (nothing is waited for). */
static void ask_kept(void)
{
    for (int i = 0; i < cache_allocated; i++)
        if (cache[i].plan)
            ask(cache[i].plan, &pending);
}

/* The kept plan of this key, taken out of the cache (NULL when there is none). */
static fc_plan *checkout(const keybuf *k)
{
    for (int i = 0; i < cache_allocated; i++) {
        kept *e = &cache[i];
        if (e->plan && e->key.len == k->len && memcmp(e->key.data, k->data, k->len) == 0) {
            fc_plan *plan = e->plan;
            e->plan = NULL;
            PyMem_Free(e->key.data);
            memset(&e->key, 0, sizeof e->key);
            cache_hits++;
            return plan;
        }
    }
    cache_misses++;
    return NULL;
}

/* Keeps plan under key (taking the key's memory), evicting the least recently used plan when full. */
static void checkin(keybuf *k, fc_plan *plan, int device, report *r)
{
    if (cache_allocated < cache_slots) {
        kept *grown = PyMem_Realloc(cache, (size_t)cache_slots * sizeof *cache);
        if (grown) {
            memset(grown + cache_allocated, 0, (size_t)(cache_slots - cache_allocated) * sizeof *grown);
            cache = grown, cache_allocated = cache_slots;
        }
    }
    kept *slot = NULL;
    for (int i = 0; i < cache_allocated && i < cache_slots; i++) {
        kept *e = &cache[i];
        if (!e->plan) {
            slot = e;
            break;
        }
        if (!slot || e->used < slot->used)
            slot = e;
    }
    if (!slot) { /* no cache */
        destroy_unlocked(plan, device, r);
        PyMem_Free(k->data);
        return;
    }
    fc_plan *evicted = slot->plan;
    const int evicted_device = slot->device;
    PyMem_Free(slot->key.data);
    *slot = (kept){.plan = plan, .key = *k, .used = ++cache_clock, .device = device};
    memset(k, 0, sizeof *k);
    destroy_unlocked(evicted, evicted_device, r);
}

void fcpy_plan_cache_counts(uint64_t *hits, uint64_t *misses)
{
    *hits = cache_hits, *misses = cache_misses;
}

int fcpy_plan_cache_size(int slots)
{
    const int before = cache_slots;
    cache_slots = slots < 0 ? 0 : slots;
    report r = {FC_OK, "", 0};
    for (int i = 0; i < cache_allocated; i++) { /* a resize starts empty */
        fc_plan *plan = cache[i].plan;
        const int device = cache[i].device;
        PyMem_Free(cache[i].key.data);
        memset(&cache[i], 0, sizeof cache[i]);
        destroy_unlocked(plan, device, &r);
    }
    keep_pending(&r); /* raised by the next call */
    return before;
}

/* ---- running ---------------------------------------------------------------------------------- */

int fcpy_launch_from_dict(fcpy_launch *launch, PyObject *dict, int threads)
{
    memset(launch, 0, sizeof *launch);
    launch->threads = threads;
    PyObject *stream = PyDict_GetItemString(dict, "stream");
    if (stream && stream != Py_None) {
        launch->stream = PyLong_AsVoidPtr(stream);
        if (PyErr_Occurred())
            return -1;
    }
    launch->workspace = PyDict_GetItemString(dict, "workspace");
    return 0;
}

/* The addresses of this call, for a kept (or new) plan. */
static fc_attention_io call_io(const fcpy_call *c)
{
    const fc_attention_desc *d = &c->desc;
    const fc_attention_grads *g = &c->grads;
    return (fc_attention_io){.q = d->q.data, .k = d->k.data, .v = d->v.data, .q_rope = d->q_rope.data,
                             .k_rope = d->k_rope.data, .out = d->out.data, .bias = d->bias.data,
                             .mask = d->vis.mask.data, .slopes = d->alibi.slopes, .sink = d->sink,
                             .keep_bits = d->dropout.keep_bits, .stats_max = d->stats.max, .stats_sum = d->stats.sum,
                             .d_out = g->d_out.data, .dq = g->dq.data, .dk = g->dk.data, .dv = g->dv.data,
                             .dq_rope = g->dq_rope.data, .dk_rope = g->dk_rope.data, .dsink = g->dsink};
}

/* A device workspace from the caller's allocator (called with the GIL held). */
static int device_workspace(fcpy_call *c, const fcpy_launch *launch, size_t bytes, void **out)
{
    if (!launch->workspace || !PyCallable_Check(launch->workspace)) {
        PyErr_SetString(PyExc_ValueError, "flashc internal: a device problem needs a workspace allocator");
        return -1;
    }
    PyObject *ws = PyObject_CallFunction(launch->workspace, "n", (Py_ssize_t)bytes);
    if (!ws)
        return -1;
    /* the call's holds keep it alive until the run is over */
    const int rc = fcpy_vector_get(&c->holds, ws, "workspace", FC_U8, (int64_t)bytes, true, out);
    Py_DECREF(ws);
    return rc;
}

PyObject *fcpy_status_error(fc_status st, const char *msg)
{
    PyObject *type = st == FC_ERR_NO_MEMORY                               ? PyExc_MemoryError
                     : st == FC_ERR_INVALID_ARG || st == FC_ERR_NULL_ARG ? PyExc_ValueError
                                                                          : PyExc_RuntimeError;
    PyErr_Format(type, "%s (%s)", msg[0] ? msg : "flashc failed", fc_status_name(st));
    return NULL;
}

int fcpy_run(fcpy_call *c, bool backward, const fcpy_launch *launch)
{
    const bool cuda = c->holds.place == FCPY_CUDA;
    const int device = cuda ? c->holds.device : -1;
    const fc_options opts = {.backend = cuda ? FC_BACKEND_CUDA : FC_BACKEND_CPU, .threads = launch->threads,
                             .stream = cuda ? launch->stream : NULL};
    keybuf key = {0};
    plan_key(&key, c, backward, &opts, device);
    if (key.failed) {
        PyMem_Free(key.data);
        PyErr_NoMemory();
        return -1;
    }
    ask_kept();
    if (raise_pending()) {
        PyMem_Free(key.data);
        return -1;
    }
    fc_plan *plan = checkout(&key);
    fc_status st = FC_OK;
    char msg[1024] = "";
    size_t ws = 0;
    void *work = NULL;
    bool py_error = false;
    PyThreadState *ts = PyEval_SaveThread();
    int was = -1;
    if (cuda)
        st = select_device(device, &was, msg, sizeof msg);
    if (st == FC_OK && !plan)
        st = backward ? fc_plan_create_backward(&c->desc, &c->grads, &opts, &plan)
                      : fc_plan_create(&c->desc, &opts, &plan);
    if (st == FC_OK)
        st = fc_plan_workspace_size(plan, &ws);
    if (st == FC_OK && ws > 0) {
        if (cuda) {
            PyEval_RestoreThread(ts);
            py_error = device_workspace(c, launch, ws, &work) != 0;
            ts = PyEval_SaveThread();
        } else if (!(work = malloc(ws))) {
            st = FC_ERR_NO_MEMORY;
        }
    }
    if (st == FC_OK && !py_error) {
        const fc_attention_io io = call_io(c);
        st = fc_plan_run(plan, &io, work, ws);
    }
    if (st != FC_OK && !msg[0])
        snprintf(msg, sizeof msg, "%s", st == FC_ERR_NO_MEMORY && !fc_last_error()[0] ? "flashc: out of memory" : fc_last_error());
    if (!cuda)
        free(work);
    restore_device(was, device);
    if (st == FC_OK && !py_error && !backward && c->lse && c->sum_scratch)
        for (int64_t i = 0; i < c->lse_count; i++) /* rows that see nothing keep max = −FLT_MAX */
            c->lse[i] += logf(c->sum_scratch[i]);
    PyEval_RestoreThread(ts);
    report evicted = {FC_OK, "", 0}; /* an evicted plan's, found without the GIL */
    if (plan)
        checkin(&key, plan, device, &evicted);
    else
        PyMem_Free(key.data);
    keep_pending(&evicted);
    if (py_error)
        return -1;
    if (st != FC_OK) {
        fcpy_status_error(st, msg);
        return -1;
    }
    return raise_pending(); /* this call's own outputs are written */
}

/* ---- what the build has ----------------------------------------------------------------------- */

int fcpy_cuda_runtime_version(void)
{
#ifdef FLASHC_PY_CUDA
    return CUDART_VERSION;
#else
    return 0;
#endif
}

int fcpy_cuda_device_count(const char **why)
{
#ifdef FLASHC_PY_CUDA
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        *why = cudaGetErrorString(err);
        return 0;
    }
    if (n == 0)
        *why = "no CUDA device is present";
    return n;
#else
    *why = "this build has no CUDA backend";
    return 0;
#endif
}
