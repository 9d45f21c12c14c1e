#include "fz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Views reaching further than this are not given real storage (they must be refused anyway). */
#define FZ_MAX_BYTES ((int64_t)1 << 23)

void fz_init(fz *f, const uint8_t *data, size_t size)
{
    f->p = data, f->n = size, f->at = 0;
    f->rng = 0x9e3779b97f4a7c15ull ^ size;
    for (size_t k = 0; k < size && k < 16; k++)
        f->rng = (f->rng ^ data[k]) * 0x100000001b3ull;
}

uint8_t fz_u8(fz *f) { return f->at < f->n ? f->p[f->at++] : 0; }

int64_t fz_range(fz *f, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    const uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    uint64_t x = fz_u8(f);
    if (span > 256)
        x = x << 8 | fz_u8(f);
    return (int64_t)((uint64_t)lo + x % span);
}

bool fz_chance(fz *f, int percent) { return fz_u8(f) % 100 >= 100 - percent; }

int64_t fz_int(fz *f, int64_t plain)
{
    static const int64_t edge[] = {0, 1, -1, 2, 3, 7, 8, 16, 64, 127, 128, 255, 2048, 65535, INT32_MAX,
                                   (int64_t)INT32_MAX + 1, INT32_MIN, (int64_t)1 << 32, (int64_t)1 << 62,
                                   INT64_MAX - 1, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    const uint8_t m = fz_u8(f);
    if (m < 200)
        return plain;
    if (m < 215)
        return (int64_t)((uint64_t)plain + (uint64_t)(m % 5) - 2); /* wraps at the limits */
    if (m < 245)
        return edge[m % (sizeof edge / sizeof edge[0])];
    uint64_t x = 0;
    for (int k = 0; k < 8; k++)
        x = x << 8 | fz_u8(f);
    return (int64_t)x;
}

double fz_real(fz *f, double plain)
{
    static const double edge[] = {0.0, -1.0, 1e-300, 1e300, -0.0, 2.0, 0.5, 1.0};
    const uint8_t m = fz_u8(f);
    if (m < 220)
        return plain;
    if (m < 230)
        return NAN;
    if (m < 235)
        return m % 2 ? INFINITY : -INFINITY;
    return edge[m % 8];
}

char *fz_pick_str(fz *f, const char *const *names, int n, char buf[16])
{
    const uint8_t m = fz_u8(f);
    if (m < 250) {
        strncpy(buf, names[m % n], 15);
    } else {
        for (int k = 0; k < 15; k++)
            buf[k] = (char)fz_u8(f);
    }
    buf[15] = 0;
    return buf;
}

static uint64_t next(fz *f)
{
    f->rng ^= f->rng << 13, f->rng ^= f->rng >> 7, f->rng ^= f->rng << 17;
    return f->rng;
}

float fz_value(fz *f) { return (float)(next(f) >> 40) / (float)(1 << 23) - 1.0f; }

/* ---- the CANN runtime ------------------------------------------------------------------------- */

void fz_cann_init(void)
{
    static bool done;
    if (!done) {
        aclInit(NULL);
        aclrtSetDevice(0);
        done = true;
    }
}

fz_spec fz_sp(aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    fz_spec s = {.dtype = dt, .rank = rank, .dims = {d0, d1, d2, d3}};
    return s;
}

int64_t fz_ints_at(void *ctx, int64_t e)
{
    const fz_ints *x = ctx;
    return x->n ? x->v[e % x->n] : 0;
}

static bool is_float(aclDataType dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_DOUBLE; }

static uint16_t to_f16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if (((u >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00u | ((u & 0x7fffff) ? 0x200u : 0));
    if (e <= 0)
        return (uint16_t)sign;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | (uint32_t)e << 10 | (u & 0x7fffff) >> 13);
}

static void store(void *base, aclDataType dt, int64_t at, double v, int64_t iv)
{
    char *p = base;
    switch ((int)dt) {
    case ACL_FLOAT: { const float x = (float)v; memcpy(p + at * 4, &x, 4); break; }
    case ACL_DOUBLE: memcpy(p + at * 8, &v, 8); break;
    case ACL_FLOAT16: { const uint16_t h = to_f16((float)v); memcpy(p + at * 2, &h, 2); break; }
    case ACL_BF16: {
        const float x = (float)v;
        uint32_t u;
        memcpy(&u, &x, 4);
        const uint16_t h = (uint16_t)(u >> 16);
        memcpy(p + at * 2, &h, 2);
        break;
    }
    case ACL_INT64: case ACL_UINT64: memcpy(p + at * 8, &iv, 8); break;
    case ACL_INT32: case ACL_UINT32: { const int32_t x = (int32_t)iv; memcpy(p + at * 4, &x, 4); break; }
    case ACL_INT16: case ACL_UINT16: { const int16_t x = (int16_t)iv; memcpy(p + at * 2, &x, 2); break; }
    default: p[at] = (char)iv; break;
    }
}

static void *remember_dev(fz_cann *c, size_t bytes)
{
    void *p = NULL;
    if (c->ndev >= FZ_MAX_OBJ || aclrtMalloc(&p, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return NULL;
    c->dev[c->ndev++] = p;
    return p;
}

static void *remember_host(fz_cann *c, size_t bytes)
{
    if (c->nhost >= FZ_MAX_OBJ)
        return NULL;
    void *p = malloc(bytes ? bytes : 1);
    c->host[c->nhost++] = p;
    return p;
}

/* Fills every element of the view (row-major logical order) through its strides. */
static void fill(fz *f, const fz_spec *s, aclDataType dt, int rank, const int64_t *dims, const int64_t *strides,
                 int64_t offset, void *data, bool nan_ok)
{
    int64_t numel = 1;
    for (int k = 0; k < rank; k++)
        numel *= dims[k];
    const bool perturb = fz_chance(f, 10), poison = nan_ok && fz_chance(f, 5);
    int64_t idx[8] = {0};
    for (int64_t e = 0; e < numel; e++) {
        int64_t at = offset;
        for (int k = 0; k < rank; k++)
            at += idx[k] * strides[k];
        double v = fz_value(f);
        if (poison && (next(f) & 31) == 0)
            v = (next(f) & 1) ? NAN : INFINITY;
        int64_t iv = s->ints ? s->ints(s->ctx, e) : 0;
        if (perturb && (next(f) & 7) == 0)
            iv = fz_int(f, iv);
        if (!is_float(dt) && !s->ints && (dt == ACL_BOOL || dt == ACL_UINT8 || dt == ACL_INT8))
            iv = (int64_t)(next(f) & (dt == ACL_INT8 ? 0xff : 1)) - (dt == ACL_INT8 ? 128 : 0);
        store(data, dt, at, v, iv);
        for (int k = rank - 1; k >= 0 && ++idx[k] == dims[k]; k--)
            idx[k] = 0;
    }
}

static aclTensor *make(fz *f, fz_cann *c, const fz_spec *s, bool mutate)
{
    if (c->ntensor >= FZ_MAX_OBJ)
        return NULL;
    int rank = s->rank;
    int64_t dims[8];
    memcpy(dims, s->dims, sizeof dims);
    aclDataType dt = s->dtype;
    if (mutate && fz_chance(f, 6)) { /* the shape */
        const int k = (int)fz_range(f, 0, rank > 0 ? rank - 1 : 0);
        switch (fz_range(f, 0, 5)) {
        case 0: dims[k]++; break;
        case 1: dims[k] = dims[k] > 0 ? dims[k] - 1 : 0; break;
        case 2: dims[k] = fz_int(f, dims[k]); break;
        case 3: rank = rank > 0 ? rank - 1 : 0; break;
        case 4: if (rank < 8) dims[rank++] = 1; break;
        default: dims[k] = 0; break;
        }
        for (int j = 0; j < rank; j++)
            if (dims[j] < 0 || dims[j] > 100000)
                dims[j] = dims[j] < 0 ? 0 : 100000;
    }
    if (mutate && fz_chance(f, 3)) {
        static const aclDataType any[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT8, ACL_INT32, ACL_INT64,
                                          ACL_BOOL, ACL_UINT8, ACL_DOUBLE, ACL_INT16, (aclDataType)77};
        dt = any[fz_range(f, 0, sizeof any / sizeof any[0] - 1)];
    }
    if (mutate && fz_chance(f, 2))
        return NULL;
    const int64_t es = aclDataTypeSize(dt) ? (int64_t)aclDataTypeSize(dt) : 1;

    /* strides and offset */
    int64_t strides[8], offset = 0, run = 1;
    const int mode = mutate && fz_chance(f, 30) ? (int)fz_range(f, 1, 6) : 0;
    for (int k = rank - 1; k >= 0; k--) {
        strides[k] = mode == 1 ? 2 * run : run;
        run *= (mode == 1 ? 2 : 1) * (dims[k] > 0 ? dims[k] : 1);
    }
    if (mode == 1)
        offset = 1;
    if (mode == 2) { /* column-major */
        run = 1;
        for (int k = 0; k < rank; k++)
            strides[k] = run, run *= dims[k] > 0 ? dims[k] : 1;
    }
    for (int k = 0; mode == 3 && k < rank; k++) /* size-1 dims may have any stride */
        if (dims[k] == 1)
            strides[k] = fz_chance(f, 50) ? INT64_MAX : fz_int(f, (int64_t)1 << 40);
    if (mode == 4 && rank > 0) /* broadcast or edge stride on one dim */
        strides[fz_range(f, 0, rank - 1)] = fz_chance(f, 50) ? 0 : fz_int(f, 3);
    if (mode == 5 && rank > 0) /* two dims swapped */
    {
        const int a = (int)fz_range(f, 0, rank - 1), b = (int)fz_range(f, 0, rank - 1);
        const int64_t t = strides[a];
        strides[a] = strides[b], strides[b] = t;
    }
    if (mode == 6)
        offset = fz_chance(f, 30) ? fz_int(f, 1) : fz_range(f, 1, 40);
    for (int k = 0; k < rank; k++)
        if (strides[k] < 0)
            strides[k] = strides[k] == INT64_MIN ? INT64_MAX : -strides[k];
    if (offset < 0)
        offset = 0;

    /* the extent, in checked arithmetic */
    int64_t hi = offset, numel = 1;
    bool over = false;
    for (int k = 0; k < rank; k++) {
        int64_t step;
        numel = dims[k] == 0 ? 0 : numel;
        if (dims[k] > 0 && (__builtin_mul_overflow(dims[k] - 1, strides[k], &step) ||
                            __builtin_add_overflow(hi, step, &hi)))
            over = true;
    }
    int64_t bytes = 0;
    if (!over && (__builtin_add_overflow(hi, 1, &bytes) || __builtin_mul_overflow(bytes, es, &bytes) ||
                  bytes > FZ_MAX_BYTES))
        over = true;
    for (int k = 0; k < rank && numel; k++)
        numel *= dims[k];

    /* where the data lives */
    void *data = NULL;
    const int place = mutate && fz_chance(f, 10) ? (int)fz_range(f, 1, 5) : 0;
    bool fillable = !over && numel > 0;
    if (over) {
        data = remember_dev(c, 64); /* must be refused: the view leaves any real storage */
    } else if (place == 1 && bytes > es) { /* one element short */
        data = remember_dev(c, (size_t)(bytes - es));
        fillable = false;
    } else if (place == 2) { /* untracked host memory, exactly to size (ASan guards it) */
        data = remember_host(c, (size_t)bytes);
    } else if (place == 3) {
        data = NULL;
        fillable = false;
    } else if (place == 4) { /* the data address before a tracked allocation, the view inside it */
        char *in = remember_dev(c, (size_t)bytes);
        const int64_t back = fz_range(f, 1, 8);
        data = in ? (void *)((uintptr_t)in - (uintptr_t)(back * es)) : NULL;
        offset += back;
        if (in && fillable && numel <= ((int64_t)1 << 16))
            fill(f, s, dt, rank, dims, strides, offset - back, in, !s->output);
        fillable = false;
    } else {
        data = remember_dev(c, (size_t)bytes);
    }
    if (fillable && data && numel > ((int64_t)1 << 16)) /* large (compressed masks): zeros, cheaply */
        memset(data, 0, (size_t)bytes);
    else if (fillable && data)
        fill(f, s, dt, rank, dims, strides, offset, data, !s->output);

    int64_t storage[8];
    int srank = 0;
    if (mutate && fz_chance(f, 5)) {
        srank = 1;
        storage[0] = over ? 1 : fz_chance(f, 50) ? bytes / es : bytes / es - 1;
        if (storage[0] < 0)
            storage[0] = 0;
    }
    const aclFormat fmt = mutate && fz_chance(f, 2) ? (aclFormat)fz_range(f, -1, 40) : ACL_FORMAT_ND;
    aclTensor *t = aclCreateTensor(dims, (uint64_t)rank, dt, strides, offset, fmt, srank ? storage : NULL,
                                   (uint64_t)srank, data);
    if (t)
        c->tensor[c->ntensor++] = t;
    return t;
}


aclTensor *fz_tensor(fz *f, fz_cann *c, const fz_spec *s) { return make(f, c, s, true); }
aclTensor *fz_tensor_plain(fz *f, fz_cann *c, const fz_spec *s) { return make(f, c, s, false); }

aclIntArray *fz_int_array(fz *f, fz_cann *c, const int64_t *values, int n)
{
    if (c->nints >= 8)
        return NULL;
    int64_t v[64] = {0};
    if (n > 64)
        n = 64;
    for (int k = 0; k < n; k++)
        v[k] = fz_int(f, values[k]);
    if (fz_chance(f, 3))
        n = (int)fz_range(f, 0, n + 1 > 64 ? 64 : n + 1);
    aclIntArray *a = aclCreateIntArray(v, (uint64_t)n);
    if (a)
        c->ints[c->nints++] = a;
    return a;
}

aclTensorList *fz_tensor_list(fz_cann *c, aclTensor *const *t, int n)
{
    if (c->nlist >= 8)
        return NULL;
    aclTensorList *l = aclCreateTensorList((const aclTensor *const *)t, (uint64_t)n);
    if (!l)
        return NULL;
    c->list[c->nlist++] = l;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < c->ntensor; j++)
            if (c->tensor[j] == t[k])
                c->listed[j] = true;
    return l;
}

/* Runs a published executor's second phase with a workspace of exactly the size asked for. */
static void run_second_phase(fz *f, aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream), uint64_t ws,
                             aclOpExecutor *ex)
{
    if (ws > ((uint64_t)1 << 26)) { /* too large to be worth an execution */
        aclDestroyAclOpExecutor(ex);
        return;
    }
    void *w = NULL;
    if (ws && aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(ex);
        return;
    }
    uint64_t size = ws;
    if (fz_chance(f, 2))
        size = ws ? ws - 1 : 0;
    const bool twice = fz_chance(f, 4) && aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS;
    run(w, size, ex, NULL);
    if (twice) {
        run(w, size, ex, NULL);
        aclDestroyAclOpExecutor(ex);
    }
    aclrtFree(w);
}

/* Sometimes frees one device allocation between the phases. */
static void free_between(fz *f, fz_cann *c)
{
    if (c->ndev == 0 || !fz_chance(f, 2))
        return;
    const int k = (int)fz_range(f, 0, c->ndev - 1);
    aclrtFree(c->dev[k]);
    c->dev[k] = NULL;
}

static void cann_release(fz_cann *c)
{
    for (int k = 0; k < c->nlist; k++)
        aclDestroyTensorList(c->list[k]);
    for (int k = 0; k < c->ntensor; k++)
        if (!c->listed[k])
            aclDestroyTensor(c->tensor[k]);
    for (int k = 0; k < c->nints; k++)
        aclDestroyIntArray(c->ints[k]);
    for (int k = 0; k < c->ndev; k++)
        if (c->dev[k])
            aclrtFree(c->dev[k]);
    for (int k = 0; k < c->nhost; k++)
        free(c->host[k]);
    memset(c, 0, sizeof *c);
}

int fz_finish(fz *f, fz_cann *c, const fz_call *call)
{
    if (call->st == ACLNN_SUCCESS) {
        free_between(f, c);
        run_second_phase(f, call->run, call->ws, call->ex);
    }
    cann_release(c);
    return 0;
}
