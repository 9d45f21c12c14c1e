/*
 * Where the operands of a bf16 tile product lie (amx.h, dpbf16.h), in elements from the base:
 *
 *     A(m, k) = A[(m/16)·group + (m%16)·ld + (k/32)·step + k%32]                       bf16 rows
 *     B(k, n) = B[(k/32)·step + (k%32/2)·ld + (n/32)·block + (n%32/16)·half + 2·(n%16) + k%2]  pairs
 *     C(m, n) = C[(m/16)·group + (m%16)·ld + (n/32)·block + (n%32/16)·half + n%16]      fp32
 *
 * Row-major operands (fc_amx_rows, fc_amx_pairs) are the special case; the fused forward keeps
 * its per-block S and P tile by tile (fc_amx_tiled_*): every tile one contiguous kilobyte, read
 * and written by the tile unit as whole lines without the set conflicts of long row strides.
 */
#ifndef FC_KERNELS_AMX_LAYOUT_H
#define FC_KERNELS_AMX_LAYOUT_H

#include <stddef.h>

typedef struct fc_amx_layout {
    size_t ld;    /* elements between the rows of a tile (B: between its pair rows) */
    size_t step;  /* A, B: elements from one 32-deep K step to the next */
    size_t group; /* A, C: elements from rows 0..15 to rows 16..31 */
    size_t half;  /* B, C: elements from columns 0..15 to 16..31 */
    size_t block; /* B, C: elements from one 32 columns to the next */
    size_t period; /* A, B: K steps after which the operand repeats from its first (0: never) */
} fc_amx_layout;

/* Elements from the operand's first K step to its step s. */
static inline size_t fc_amx_kstep(fc_amx_layout l, int s) { return (l.period ? (size_t)s % l.period : (size_t)s) * l.step; }

/* The operand l repeating along K every `steps` 32-deep steps: parts stored once, met by the
 * other operand's several (the fp16 forward's hi/lo parts, amx_rows.h). */
static inline fc_amx_layout fc_amx_repeat(fc_amx_layout l, size_t steps)
{
    l.period = steps;
    return l;
}

/* A row-major A or C with rows ld elements apart. */
static inline fc_amx_layout fc_amx_rows(size_t ld) { return (fc_amx_layout){ld, 32, 16 * ld, 16, 32, 0}; }

/* B in the pair-interleaved form, B(k, n) = B[(k/2)·ld + 2n + k%2]. */
static inline fc_amx_layout fc_amx_pairs(size_t ld) { return (fc_amx_layout){ld, 16 * ld, 0, 32, 64, 0}; }

/* B (K × n, pair form) in panels of 32 columns, each all K deep: B(k, n) = B[(n/32)·32·K + (k/2)·64
 * + 2·(n%32) + k%2]; a product over part of the K axis starts at B + (k0/2)·64 with the same layout. */
static inline fc_amx_layout fc_amx_panels(size_t K) { return (fc_amx_layout){64, 1024, 0, 32, 32 * K, 0}; }

/* An A of at most 32 rows, tile by tile: 16 × 32 bf16 tiles, rows 16..31 after rows 0..15, one
 * pair of them per K step (A(m, k) at 32·k for m = 0, k a multiple of 32). */
static inline fc_amx_layout fc_amx_tiled_a(void) { return (fc_amx_layout){32, 1024, 512, 0, 0, 0}; }

/* A C of at most 32 rows and n columns (a multiple of 32), tile by tile: 16 × 16 fp32 tiles along
 * the columns, rows 16..31 after all of rows 0..15's (C(m, n) at 16·n for m = 0, n a multiple of 16). */
static inline fc_amx_layout fc_amx_tiled_c(size_t n) { return (fc_amx_layout){16, 0, 16 * n, 256, 512, 0}; }

#endif /* FC_KERNELS_AMX_LAYOUT_H */
