/*
 * Decode helpers for the oracle (semantics §4.3, §4.5, §4.6; flashc.h fc_kv_storage, fc_affine),
 * written from the text:
 *   - page attention: logical token t of batch b lives in block table[b·table_stride + ⌊t/bs⌋],
 *     slot t mod bs; gathering a paged cache gives the contiguous cache the identity §9 h compares
 *     with;
 *   - int8 key/value dequantisation: x → (x + offset)·scale (§4.5);
 *   - int8 output quantisation: v = out·scale + offset, h = fp16(v) (nearest even, overflow ±inf),
 *     r = round half to even (h), y = clamp(r, −128, 127), NaN → 0 (§4.6, §8.11).
 */
#ifndef FLASHC_TESTS_REFERENCE_KVCACHE_H
#define FLASHC_TESTS_REFERENCE_KVCACHE_H

#include <stdint.h>

/* Gathers a paged cache into the contiguous logical layout dst[B][N][S2cap][E].  Element
 * (block, slot, n, e) of the cache is cache[block·st_block + slot·st_slot + n·st_head + e·st_dim].
 * Tokens t < S2[b] are gathered; the rest of dst is left untouched. */
void ref_gather_pages(const double *cache, int64_t st_block, int64_t st_slot, int64_t st_head, int64_t st_dim,
                      const int32_t *table, int64_t table_stride, int64_t block_size, int B, int N, int E,
                      const int *S2, int S2cap, double *dst);

/* The block and slot of token t of batch b. */
void ref_page_of(const int32_t *table, int64_t table_stride, int64_t block_size, int b, int64_t t, int64_t *block,
                 int64_t *slot);

/* §4.5: the value an int8 key/value element stands for. */
double ref_dequant(int8_t x, double scale, double offset);

/* §4.6: the stored int8 of an output value (fp32 affine → fp16 → round half even → saturate). */
int8_t ref_quant_i8(double out, double scale, double offset);

#endif
