/* libFuzzer harness: infiniop flash attention — descriptors (3-D / 4-D, any strides incl. negative,
 * key-padding masks of every integer dtype), workspace, data addresses (tracked, untracked host,
 * misplaced), both destroy spellings. */
#include <stdlib.h>
#include <string.h>

#include "fz.h"
#include "infiniop.h"
#include "infinirt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("OMP_NUM_THREADS", "1", 0);
    infinirtInit();
    return 0;
}

enum { T_OUT, T_Q, T_K, T_V, T_MASK, T_N };

typedef struct view {
    size_t ndim, shape[4];
    ptrdiff_t strides[4];
    infiniDtype_t dt;
    int64_t lo, hi; /* bytes around element 0 */
} view;

static size_t dsize(infiniDtype_t dt)
{
    switch ((int)dt) {
    case INFINI_DTYPE_F32: case INFINI_DTYPE_I32: case INFINI_DTYPE_U32: return 4;
    case INFINI_DTYPE_F16: case INFINI_DTYPE_BF16: case INFINI_DTYPE_I16: case INFINI_DTYPE_U16: return 2;
    case INFINI_DTYPE_I64: case INFINI_DTYPE_U64: case INFINI_DTYPE_F64: return 8;
    default: return 1;
    }
}

/* Row-major strides, then maybe a mutation (negative dim, gaps, broadcast, edge value). */
static bool make_view(fz *f, view *v, bool mutate)
{
    ptrdiff_t run = 1;
    for (size_t k = v->ndim; k-- > 0;) {
        v->strides[k] = run;
        run *= (ptrdiff_t)(v->shape[k] ? v->shape[k] : 1);
    }
    if (mutate && fz_chance(f, 25)) {
        const size_t k = (size_t)fz_range(f, 0, (int64_t)v->ndim - 1);
        switch (fz_range(f, 0, 3)) {
        case 0: v->strides[k] = -v->strides[k]; break;
        case 1: v->strides[k] *= 2; break;
        case 2: v->strides[k] = 0; break;
        default: v->strides[k] = (ptrdiff_t)fz_int(f, v->strides[k]); break;
        }
    }
    if (mutate && fz_chance(f, 5))
        v->shape[fz_range(f, 0, (int64_t)v->ndim - 1)] = (size_t)fz_int(f, 2);
    int64_t lo = 0, hi = 0;
    const int64_t es = (int64_t)dsize(v->dt);
    for (size_t k = 0; k < v->ndim; k++) {
        int64_t step;
        if (v->shape[k] == 0 || v->shape[k] > (size_t)INT64_MAX)
            return false;
        if (__builtin_mul_overflow((int64_t)v->shape[k] - 1, (int64_t)v->strides[k], &step))
            return false;
        if ((step < 0 && __builtin_add_overflow(lo, step, &lo)) || (step > 0 && __builtin_add_overflow(hi, step, &hi)))
            return false;
    }
    int64_t span; /* the bytes the view spans: over 8 MiB (or not representable) is not allocated */
    if (__builtin_mul_overflow(lo, es, &v->lo) || __builtin_add_overflow(hi, 1, &hi) ||
        __builtin_mul_overflow(hi, es, &v->hi) || __builtin_sub_overflow(v->hi, v->lo, &span) || span > ((int64_t)1 << 23))
        return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f;
    fz_init(&f, data, size);
    static const infiniDtype_t fdt[] = {INFINI_DTYPE_F16, INFINI_DTYPE_F32, INFINI_DTYPE_BF16};
    static const infiniDtype_t mdt[] = {INFINI_DTYPE_BOOL, INFINI_DTYPE_BYTE, INFINI_DTYPE_I8, INFINI_DTYPE_I32,
                                        INFINI_DTYPE_I64, INFINI_DTYPE_U64, INFINI_DTYPE_F32};
    const size_t r = fz_chance(&f, 30) ? 3 : 4;
    const size_t B = r == 3 ? 1 : (size_t)fz_range(&f, 1, 3), Nkv = (size_t)fz_range(&f, 1, 2);
    const size_t Nq = Nkv * (size_t)fz_range(&f, 1, 3), Sq = (size_t)fz_range(&f, 1, 17), Skv = (size_t)fz_range(&f, 1, 19);
    const size_t D = (size_t)fz_range(&f, 1, 40), Dv = fz_chance(&f, 80) ? D : (size_t)fz_range(&f, 1, 40);
    const infiniDtype_t dt = fdt[fz_range(&f, 0, 2)];
    view v[T_N];
    memset(v, 0, sizeof v);
    const size_t rows[4] = {Sq, Sq, Skv, Skv}, heads[4] = {Nq, Nq, Nkv, Nkv}, width[4] = {Dv, D, D, Dv};
    for (int x = T_OUT; x <= T_V; x++) {
        v[x].ndim = r, v[x].dt = fz_chance(&f, 3) ? (infiniDtype_t)fz_range(&f, 0, 20) : dt;
        const size_t s4[4] = {B, heads[x], rows[x], width[x]};
        memcpy(v[x].shape, s4 + (4 - r), r * sizeof(size_t));
    }
    const bool has_mask = fz_chance(&f, 30);
    if (has_mask) {
        v[T_MASK].ndim = r == 4 && fz_chance(&f, 50) ? 2 : 1;
        v[T_MASK].shape[0] = v[T_MASK].ndim == 2 ? B : Skv, v[T_MASK].shape[1] = Skv;
        v[T_MASK].dt = mdt[fz_range(&f, 0, 6)];
    }
    infiniopHandle_t handle = NULL;
    infiniopCreateHandle(&handle);
    infiniopTensorDescriptor_t td[T_N] = {0};
    bool ok = true;
    for (int x = 0; x < T_N; x++) {
        if (!v[x].ndim)
            continue;
        const bool contiguous = fz_chance(&f, 3); /* strides NULL: the descriptor makes them */
        ok = make_view(&f, &v[x], !contiguous) && ok;
        infiniopCreateTensorDescriptor(&td[x], v[x].ndim, v[x].shape, contiguous ? NULL : v[x].strides, v[x].dt);
    }
    infiniopFlashAttentionDescriptor_t desc = NULL;
    infiniopCreateFlashAttentionDescriptor(fz_chance(&f, 2) ? NULL : handle, &desc, td[T_OUT], td[T_Q], td[T_K], td[T_V],
                                           td[T_MASK]);
    size_t ws = 0;
    if (desc && infiniopGetFlashAttentionWorkspaceSize(desc, &ws) == INFINI_STATUS_SUCCESS && ok && ws < ((size_t)1 << 28)) {
        void *buf[T_N] = {0}, *ptr[T_N] = {0};
        bool tracked[T_N] = {0};
        for (int x = 0; x < T_N; x++) {
            if (!v[x].ndim)
                continue;
            const int place = fz_chance(&f, 10) ? (int)fz_range(&f, 1, 3) : 0;
            const size_t bytes = (size_t)(v[x].hi - v[x].lo) - (place == 1 ? 1 : 0);
            tracked[x] = place != 2;
            if (tracked[x])
                infinirtMalloc(&buf[x], bytes ? bytes : 1);
            else
                buf[x] = malloc(bytes ? bytes : 1);
            if (!buf[x])
                continue;
            memset(buf[x], (int)fz_range(&f, 0, 1) * 0x3c, bytes); /* 0 or 0x3c3c (fp16 ~1.06) */
            ptr[x] = (char *)buf[x] - v[x].lo;                     /* element 0 */
            /* shifted towards the end, still inside the allocation: the view then leaves it (an
             * address outside every allocation is untracked memory, trusted by the rules) */
            const size_t shift = dsize(v[x].dt) * (size_t)fz_range(&f, 1, 4);
            if (place == 3 && (uintptr_t)ptr[x] + shift < (uintptr_t)buf[x] + bytes)
                ptr[x] = (char *)ptr[x] + shift;
        }
        void *w = NULL;
        if (ws)
            infinirtMalloc(&w, ws);
        const size_t wsize = fz_chance(&f, 3) ? ws - (ws > 0) : ws;
        infiniopFlashAttention(desc, w, wsize, ptr[T_OUT], ptr[T_Q], ptr[T_K], ptr[T_V], ptr[T_MASK], NULL);
        if (w)
            infinirtFree(w);
        for (int x = 0; x < T_N; x++)
            if (buf[x] && tracked[x])
                infinirtFree(buf[x]);
            else
                free(buf[x]);
    }
    if (desc && fz_chance(&f, 50))
        infiniopDestoryFlashAttentionDescriptor(desc); /* the upstream misspelling */
    else if (desc)
        infiniopDestroyFlashAttentionDescriptor(desc);
    for (int x = 0; x < T_N; x++)
        if (td[x])
            infiniopDestroyTensorDescriptor(td[x]);
    infiniopDestroyHandle(handle);
    return 0;
}
