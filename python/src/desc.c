/* dict → native description.  Keys and value shapes are those written by flashc/_native.py. */
#include "desc.h"

#include <string.h>

/* ---- scalars ---------------------------------------------------------------------------------- */

static PyObject *item(PyObject *dict, const char *key) { return PyDict_GetItemString(dict, key); } /* borrowed */

static int get_i64(PyObject *dict, const char *key, int64_t *out)
{
    PyObject *v = item(dict, key);
    if (!v)
        return 0;
    const long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = x;
    return 0;
}

static int get_f64(PyObject *dict, const char *key, double *out)
{
    PyObject *v = item(dict, key);
    if (!v)
        return 0;
    const double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    *out = x;
    return 0;
}

/* A tuple value: "(O" + fmt + ")" items. */
static int unpack(PyObject *v, const char *key, Py_ssize_t n)
{
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != n) {
        PyErr_Format(PyExc_TypeError, "flashc internal: %s must be a %zd-tuple", key, n);
        return -1;
    }
    return 0;
}

static int64_t as_i64(PyObject *v) { return PyLong_AsLongLong(v); }

/* ---- views with extent checks ----------------------------------------------------------------- */

/* Strides of `naxes` logical axes of array a, axis numbers in the tuple `axes` (-1 = absent:
 * stride 0).  An axis of extent 1 broadcasts (stride 0) on inputs; otherwise its extent must reach
 * need[k] (need 0: no requirement). */
static int axes_strides(const fcpy_array *a, PyObject *axes, int naxes, const int64_t *need, bool writable,
                        const char *name, int64_t *stride)
{
    if (!PyTuple_Check(axes) || PyTuple_GET_SIZE(axes) != naxes) {
        PyErr_Format(PyExc_TypeError, "flashc internal: axes of %s", name);
        return -1;
    }
    for (int k = 0; k < naxes; k++) {
        const long ax = PyLong_AsLong(PyTuple_GET_ITEM(axes, k));
        if (ax == -1 && PyErr_Occurred())
            return -1;
        if (ax < 0) {
            stride[k] = 0;
            continue;
        }
        if (ax >= a->ndim) {
            PyErr_Format(PyExc_ValueError, "flashc: %s has %d dimensions, axis %ld is needed", name, a->ndim, ax);
            return -1;
        }
        const int64_t ext = a->shape[ax];
        stride[k] = a->strides[ax];
        if (ext >= need[k])
            continue;
        if (ext == 1 && !writable) {
            stride[k] = 0;
            continue;
        }
        PyErr_Format(PyExc_ValueError, "flashc: %s has extent %lld along axis %ld, the problem needs %lld", name,
                     (long long)ext, ax, (long long)need[k]);
        return -1;
    }
    return 0;
}

static int get_view(fcpy_call *c, PyObject *v, const char *name, int naxes, const int64_t *need, bool writable,
                    fcpy_array *a, int64_t *stride)
{
    if (fcpy_array_get(&c->holds, PyTuple_GET_ITEM(v, 0), name, writable, a) != 0)
        return -1;
    return axes_strides(a, PyTuple_GET_ITEM(v, 1), naxes, need, writable, name, stride);
}

/* value (obj, axes4) → fc_tensor */
static int get_tensor(fcpy_call *c, PyObject *dict, const char *key, const int64_t need[4], bool writable, fc_tensor *t)
{
    PyObject *v = item(dict, key);
    if (!v)
        return 0;
    if (unpack(v, key, 2) != 0)
        return -1;
    fcpy_array a;
    int64_t s[4];
    if (fcpy_array_get(&c->holds, PyTuple_GET_ITEM(v, 0), key, writable, &a) != 0 ||
        axes_strides(&a, PyTuple_GET_ITEM(v, 1), 4, need, writable, key, s) != 0)
        return -1;
    *t = (fc_tensor){.data = a.data, .dtype = a.dtype, .stride_batch = s[0], .stride_head = s[1], .stride_seq = s[2],
                     .stride_dim = s[3]};
    return 0;
}

/* value (scale, offset or None, axes2) → fc_affine over (head, feature) */
static int get_affine(fcpy_call *c, PyObject *dict, const char *key, int64_t heads, int64_t dim, fc_affine *f)
{
    PyObject *v = item(dict, key);
    if (!v)
        return 0;
    if (unpack(v, key, 3) != 0)
        return -1;
    const int64_t need[2] = {heads, dim};
    fcpy_array a;
    int64_t s[2];
    if (fcpy_array_get(&c->holds, PyTuple_GET_ITEM(v, 0), key, false, &a) != 0 ||
        axes_strides(&a, PyTuple_GET_ITEM(v, 2), 2, need, false, key, s) != 0)
        return -1;
    *f = (fc_affine){.scale = a.data, .dtype = a.dtype, .stride_head = s[0], .stride_dim = s[1]};
    PyObject *off = PyTuple_GET_ITEM(v, 1);
    if (off != Py_None) {
        fcpy_array o;
        int64_t so[2];
        if (fcpy_array_get(&c->holds, off, key, false, &o) != 0 ||
            axes_strides(&o, PyTuple_GET_ITEM(v, 2), 2, need, false, key, so) != 0)
            return -1;
        if (o.dtype != a.dtype || so[0] != s[0] || so[1] != s[1]) {
            PyErr_Format(PyExc_ValueError, "flashc: the offset of %s must have the dtype and layout of its scale", key);
            return -1;
        }
        f->offset = o.data;
    }
    return 0;
}

static int get_vector(fcpy_call *c, PyObject *dict, const char *key, fc_dtype dtype, int64_t need, bool writable,
                      void **data)
{
    PyObject *v = item(dict, key);
    return v ? fcpy_vector_get(&c->holds, v, key, dtype, need, writable, data) : 0;
}

/* Per-batch metadata read while planning: host memory whatever the operands' place. */
static int get_host_vector(fcpy_call *c, PyObject *dict, const char *key, int64_t need, const int64_t **data)
{
    PyObject *v = item(dict, key);
    return v ? fcpy_host_vector_get(&c->holds, v, key, FC_I64, need, (void **)data) : 0;
}

static int64_t sum_or(const int64_t *lens, int64_t n, int64_t fallback)
{
    if (!lens)
        return fallback;
    int64_t s = 0;
    for (int64_t b = 0; b < n; b++)
        s += lens[b] > 0 ? lens[b] : 0;
    return s;
}

/* ---- the description -------------------------------------------------------------------------- */

static int get_sizes(PyObject *dict, fc_attention_desc *d)
{
    if (get_i64(dict, "batch", &d->batch) || get_i64(dict, "q_heads", &d->q_heads) ||
        get_i64(dict, "kv_heads", &d->kv_heads) || get_i64(dict, "head_dim", &d->head_dim) ||
        get_i64(dict, "v_head_dim", &d->v_head_dim) || get_i64(dict, "rope_dim", &d->rope_dim) ||
        get_i64(dict, "q_len", &d->q_len) || get_i64(dict, "kv_len", &d->kv_len) ||
        get_i64(dict, "q_start", &d->vis.q_start) || get_i64(dict, "kv_start", &d->vis.kv_start) ||
        get_f64(dict, "scale", &d->scale))
        return -1;
    double softcap = 0;
    if (get_f64(dict, "softcap", &softcap))
        return -1;
    d->softcap = (float)softcap;
    d->packed = item(dict, "packed") && PyObject_IsTrue(item(dict, "packed"));
    if (d->batch < 0 || d->batch > (1 << 24)) {
        PyErr_Format(PyExc_ValueError, "flashc: batch %lld is out of range", (long long)d->batch);
        return -1;
    }
    return 0;
}

static int get_windows(fcpy_call *c, PyObject *dict)
{
    fc_attention_desc *d = &c->desc;
    PyObject *w = item(dict, "window");
    if (w) {
        long long l, r;
        int align;
        if (!PyArg_ParseTuple(w, "LLi", &l, &r, &align))
            return -1;
        d->vis.window = fc_window_band(l, r, (fc_align)align);
    }
    PyObject *bw = item(dict, "batch_window");
    if (!bw)
        return 0;
    if (!PySequence_Check(bw) || PySequence_Size(bw) != d->batch) {
        PyErr_Format(PyExc_ValueError, "flashc: the per-batch windows must be %lld entries", (long long)d->batch);
        return -1;
    }
    c->batch_window = PyMem_Calloc((size_t)d->batch + 1, sizeof *c->batch_window);
    if (!c->batch_window)
        return PyErr_NoMemory(), -1;
    for (int64_t b = 0; b < d->batch; b++) {
        PyObject *e = PySequence_GetItem(bw, b);
        int enabled, align;
        long long l, r;
        const int ok = e && PyArg_ParseTuple(e, "pLLi", &enabled, &l, &r, &align);
        Py_XDECREF(e);
        if (!ok)
            return -1;
        c->batch_window[b] = (fc_window){.enabled = enabled, .left = l, .right = r, .align = (fc_align)align};
    }
    d->vis.batch_window = c->batch_window;
    return 0;
}

static int get_stats(fcpy_call *c, PyObject *dict, int64_t rows_q, bool forward)
{
    fc_attention_desc *d = &c->desc;
    PyObject *v = item(dict, "lse");
    if (!v)
        return 0;
    int order;
    PyObject *arr;
    if (!PyArg_ParseTuple(v, "Oi", &arr, &order))
        return -1;
    const int64_t count = rows_q * d->q_heads;
    if (fcpy_vector_get(&c->holds, arr, "lse", FC_F32, count, forward, (void **)&c->lse) != 0)
        return -1;
    c->lse_count = count;
    float *sum;
    PyObject *given = item(dict, "lse_sum");
    if (given) { /* the caller's sums (device memory: the caller combines max + log(sum) itself) */
        if (fcpy_vector_get(&c->holds, given, "lse_sum", FC_F32, count, forward, (void **)&sum) != 0)
            return -1;
    } else if (c->holds.place != FCPY_HOST) {
        PyErr_SetString(PyExc_ValueError, "flashc internal: a device problem's lse needs its lse_sum");
        return -1;
    } else {
        c->sum_scratch = sum = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
        if (!sum)
            return PyErr_NoMemory(), -1;
        for (int64_t i = 0; !forward && i < count; i++)
            sum[i] = 1.0f; /* p = exp(x − lse) / 1 */
    }
    d->stats = (fc_stats){.max = c->lse, .sum = sum, .order = (fc_stats_order)order, .replicas = 1};
    return 0;
}

/* (keep bits, or None for bits generated from (seed, offset); keep_prob, seed, offset) */
static int get_dropout(fcpy_call *c, PyObject *v)
{
    PyObject *bits;
    double keep;
    unsigned long long seed, offset;
    if (!PyArg_ParseTuple(v, "OdKK", &bits, &keep, &seed, &offset))
        return -1;
    if (bits == Py_None) {
        c->desc.dropout = (fc_dropout){.keep_prob = keep, .generate = true, .seed = seed, .offset = offset};
        return 0;
    }
    fcpy_array a;
    if (fcpy_array_get(&c->holds, bits, "dropout_mask", false, &a) != 0)
        return -1;
    if (a.dtype != FC_U8 || a.ndim != 1 || (a.shape[0] > 1 && a.strides[0] != 1)) {
        PyErr_SetString(PyExc_ValueError, "flashc: dropout_mask must be a contiguous one-dimensional uint8 array of keep bits");
        return -1;
    }
    c->desc.dropout = (fc_dropout){.keep_bits = (const uint8_t *)a.data, .keep_bits_bytes = (size_t)a.shape[0], .keep_prob = keep};
    return 0;
}

static int get_score_modifiers(fcpy_call *c, PyObject *dict, int64_t rows_q, int64_t rows_kv)
{
    fc_attention_desc *d = &c->desc;
    PyObject *v;
    if ((v = item(dict, "bias"))) {
        if (unpack(v, "bias", 6) != 0)
            return -1;
        fcpy_array a;
        int64_t s[4];
        const int64_t rows = as_i64(PyTuple_GET_ITEM(v, 3)), cols = as_i64(PyTuple_GET_ITEM(v, 4));
        const int flags = (int)as_i64(PyTuple_GET_ITEM(v, 5));
        /* the core steps the bias per batch, packed batches included: a batch extent of 1 must
         * broadcast (stride 0), not be read past its end */
        const int64_t need[4] = {d->batch, d->q_heads, rows, cols};
        if (PyErr_Occurred() || get_view(c, v, "bias", 4, need, false, &a, s) != 0)
            return -1;
        d->bias = (fc_bias){.data = a.data, .dtype = a.dtype, .order = (fc_bias_order)as_i64(PyTuple_GET_ITEM(v, 2)),
                            .rows = rows, .cols = cols, .stride_batch = s[0], .stride_head = s[1], .stride_row = s[2],
                            .stride_col = s[3], .bottom_right = flags & 1, .compressed = (flags & 2) != 0};
    }
    if ((v = item(dict, "alibi"))) {
        if (unpack(v, "alibi", 4) != 0)
            return -1;
        fcpy_array a;
        int64_t s[2];
        const int64_t need[2] = {d->batch, d->q_heads};
        if (get_view(c, v, "alibi_slopes", 2, need, false, &a, s) != 0)
            return -1;
        if (a.dtype != FC_F32) {
            PyErr_SetString(PyExc_ValueError, "flashc: alibi_slopes must be float32");
            return -1;
        }
        d->alibi = (fc_alibi){.slopes = (const float *)a.data, .stride_batch = s[0], .stride_head = s[1],
                              .sqrt_distance = PyObject_IsTrue(PyTuple_GET_ITEM(v, 2)) == 1,
                              .bottom_right = as_i64(PyTuple_GET_ITEM(v, 3)) == FC_ALIGN_BOTTOM_RIGHT};
    }
    if ((v = item(dict, "mask"))) {
        if (unpack(v, "mask", 3) != 0)
            return -1;
        fcpy_array a;
        int64_t s[4];
        const bool by_tokens = PyObject_IsTrue(PyTuple_GET_ITEM(v, 2)) == 1;
        const int64_t need[4] = {by_tokens ? 0 : d->batch, d->q_heads, by_tokens ? rows_q : d->q_len,
                                 by_tokens ? rows_kv : d->kv_len};
        if (get_view(c, v, "mask", 4, need, false, &a, s) != 0)
            return -1;
        d->vis.mask = (fc_mask){.data = a.data, .dtype = a.dtype, .stride_batch = s[0], .stride_head = s[1],
                                .stride_row = s[2], .stride_col = s[3], .by_tokens = by_tokens};
    }
    if ((v = item(dict, "sparse"))) {
        if (unpack(v, "sparse", 4) != 0)
            return -1;
        fcpy_array a;
        int64_t s[4];
        const int64_t need[4] = {d->packed ? 0 : d->batch, rows_q, d->kv_heads, 0};
        if (get_view(c, v, "indices", 4, need, false, &a, s) != 0)
            return -1;
        const long ax_e = PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(v, 1), 3));
        d->sparse = (fc_sparse){.indices = a.data, .dtype = a.dtype, .count = ax_e >= 0 ? a.shape[ax_e] : 1,
                                .block_size = as_i64(PyTuple_GET_ITEM(v, 2)), .stride_batch = s[0], .stride_seq = s[1],
                                .stride_head = s[2], .stride_entry = s[3],
                                .causal = PyObject_IsTrue(PyTuple_GET_ITEM(v, 3)) == 1};
    }
    if ((v = item(dict, "dropout")) && get_dropout(c, v) != 0)
        return -1;
    return get_vector(c, dict, "sink", FC_F32, d->q_heads, false, (void **)&d->sink) ||
           get_host_vector(c, dict, "prefix", d->batch, &d->vis.prefix);
}

static int get_kv_storage(fcpy_call *c, PyObject *dict)
{
    fc_attention_desc *d = &c->desc;
    PyObject *v = item(dict, "block_table");
    if (v) {
        PyObject *tab;
        long long bs, nblocks;
        if (!PyArg_ParseTuple(v, "OLL", &tab, &bs, &nblocks))
            return -1;
        fcpy_array a;
        if (fcpy_array_get(&c->holds, tab, "block_table", false, &a) != 0)
            return -1;
        if (a.dtype != FC_I32 || a.ndim != 2 || a.shape[0] < d->batch || (a.shape[1] > 1 && a.strides[1] != 1) ||
            a.strides[0] < 0 || (d->batch > 1 && a.strides[0] < a.shape[1])) {
            PyErr_SetString(PyExc_ValueError, "flashc: block_table must be an int32 [batch, blocks per batch] array with "
                                              "contiguous rows");
            return -1;
        }
        if (bs <= 0 || a.shape[1] > INT64_MAX / bs || a.shape[1] * bs < d->kv_len) {
            PyErr_Format(PyExc_ValueError, "flashc: block_table has %lld blocks per batch of %lld positions, fewer than "
                                           "the cache length %lld", (long long)a.shape[1], bs, (long long)d->kv_len);
            return -1;
        }
        d->kv.block_table = (const int32_t *)a.data;
        d->kv.table_stride = a.shape[0] > 1 ? a.strides[0] : a.shape[1];
        d->kv.block_size = bs;
        d->kv.num_blocks = nblocks;
    }
    return get_affine(c, dict, "k_dequant", d->kv_heads, d->head_dim, &d->kv.k_dequant) ||
           get_affine(c, dict, "v_dequant", d->kv_heads, d->v_head_dim ? d->v_head_dim : d->head_dim, &d->kv.v_dequant) ||
           get_affine(c, dict, "out_quant", d->q_heads, d->v_head_dim ? d->v_head_dim : d->head_dim, &d->out_quant);
}

/* Rows of the query side and the key side that the operand arrays must cover. */
static void operand_rows(const fc_attention_desc *d, int64_t *rows_q, int64_t *rows_kv)
{
    *rows_q = d->packed ? sum_or(d->q_lens, d->batch, 0) : d->q_len;
    *rows_kv = d->packed ? sum_or(d->kv_lens, d->batch, 0) : d->kv_len;
}

int fcpy_desc_from_dict(fcpy_call *c, PyObject *dict)
{
    fc_attention_desc *d = &c->desc;
    *d = fc_attention_desc_init();
    if (!PyDict_Check(dict)) {
        PyErr_SetString(PyExc_TypeError, "flashc internal: the description must be a dict");
        return -1;
    }
    if (get_sizes(dict, d) != 0 || get_host_vector(c, dict, "q_lens", d->batch, &d->q_lens) ||
        get_host_vector(c, dict, "kv_lens", d->batch, &d->kv_lens) ||
        get_host_vector(c, dict, "kv_starts", d->batch, &d->kv_starts))
        return -1;
    int64_t rows_q, rows_kv;
    operand_rows(d, &rows_q, &rows_kv);
    const int64_t B = d->packed ? 0 : d->batch, dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    const bool paged = item(dict, "block_table") != NULL;
    if (get_kv_storage(c, dict) != 0)
        return -1;
    const int64_t kv_b = paged ? d->kv.num_blocks : B, kv_s = paged ? d->kv.block_size : rows_kv;
    const int64_t nq[4] = {B, d->q_heads, rows_q, d->head_dim}, nk[4] = {kv_b, d->kv_heads, kv_s, d->head_dim},
                  nv[4] = {kv_b, d->kv_heads, kv_s, dv}, no[4] = {B, d->q_heads, rows_q, dv},
                  nqr[4] = {B, d->q_heads, rows_q, d->rope_dim}, nkr[4] = {kv_b, d->kv_heads, kv_s, d->rope_dim};
    const bool forward = item(dict, "forward") && PyObject_IsTrue(item(dict, "forward"));
    if (get_tensor(c, dict, "q", nq, false, &d->q) || get_tensor(c, dict, "k", nk, false, &d->k) ||
        get_tensor(c, dict, "v", nv, false, &d->v) || get_tensor(c, dict, "q_rope", nqr, false, &d->q_rope) ||
        get_tensor(c, dict, "k_rope", nkr, false, &d->k_rope) || get_tensor(c, dict, "out", no, forward, &d->out) ||
        get_windows(c, dict) || get_score_modifiers(c, dict, rows_q, rows_kv) ||
        get_stats(c, dict, d->packed ? rows_q : d->batch * d->q_len, forward))
        return -1;
    return 0;
}

int fcpy_grads_from_dict(fcpy_call *c, PyObject *dict)
{
    const fc_attention_desc *d = &c->desc;
    fc_attention_grads *g = &c->grads;
    memset(g, 0, sizeof *g);
    int64_t rows_q, rows_kv;
    operand_rows(d, &rows_q, &rows_kv);
    const int64_t B = d->packed ? 0 : d->batch, dv = d->v_head_dim ? d->v_head_dim : d->head_dim;
    const int64_t nq[4] = {B, d->q_heads, rows_q, d->head_dim}, nk[4] = {B, d->kv_heads, rows_kv, d->head_dim},
                  nv[4] = {B, d->kv_heads, rows_kv, dv}, no[4] = {B, d->q_heads, rows_q, dv},
                  nqr[4] = {B, d->q_heads, rows_q, d->rope_dim}, nkr[4] = {B, d->kv_heads, rows_kv, d->rope_dim};
    return get_tensor(c, dict, "d_out", no, false, &g->d_out) || get_tensor(c, dict, "dq", nq, true, &g->dq) ||
           get_tensor(c, dict, "dk", nk, true, &g->dk) || get_tensor(c, dict, "dv", nv, true, &g->dv) ||
           get_tensor(c, dict, "dq_rope", nqr, true, &g->dq_rope) ||
           get_tensor(c, dict, "dk_rope", nkr, true, &g->dk_rope) ||
           get_vector(c, dict, "dsink", FC_F32, d->q_heads, true, (void **)&g->dsink)
               ? -1 : 0;
}

void fcpy_call_release(fcpy_call *c)
{
    fcpy_holds_release(&c->holds);
    PyMem_Free(c->batch_window);
    PyMem_Free(c->sum_scratch);
    c->batch_window = NULL;
    c->sum_scratch = NULL;
}
