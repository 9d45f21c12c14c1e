/*
 * The key-padding mask as bytes.  The core reads explicit masks one byte per element, nonzero =
 * hidden.  BOOL, BYTE, I8 and U8 masks are exactly that and are read in place.  Wider integer
 * masks must not be read as bytes (a 256 in I16 has a zero low byte), so each run narrows them to
 * one byte per key (element != 0) in scratch bytes at the end of the workspace, which
 * GetWorkspaceSize includes: mask rows × Skv bytes.
 */

#include "fa.h"

static bool narrowed(const infini_fa_geom *g) { return g->has_mask && g->esize[FA_MASK] > 1; }

size_t infini_mask_scratch_bytes(const infini_fa_geom *g)
{
    return narrowed(g) ? (size_t)(g->mask_rows * g->Skv) : 0;
}

int64_t infini_mask_batch_stride(const infini_fa_geom *g)
{
    if (!g->has_mask || g->mask_rows == 1)
        return 0;
    return narrowed(g) ? g->Skv : g->mask_stride;
}

/* dst[j] = (src[j] != 0) for n elements of type T. */
#define NARROW(T)                                                                                                      \
    for (int64_t j = 0; j < n; j++)                                                                                    \
        dst[j] = ((const T *)src)[j] != 0;

static void narrow_row(uint8_t *dst, const void *src, int64_t n, int64_t esize)
{
    switch (esize) {
    case 2: NARROW(uint16_t) break;
    case 4: NARROW(uint32_t) break;
    default: NARROW(uint64_t) break;
    }
}

const uint8_t *infini_mask_bytes(const infini_fa_geom *g, const void *mask, uint8_t *scratch)
{
    if (!narrowed(g))
        return mask;
    const int64_t es = g->esize[FA_MASK];
    for (int64_t r = 0; r < g->mask_rows; r++)
        narrow_row(scratch + r * g->Skv, (const char *)mask + r * g->mask_stride * es, g->Skv, es);
    return scratch;
}
