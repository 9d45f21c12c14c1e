/*
 * Dropout keep bits (semantics §2.7, §8.5; flashc.h fc_dropout): bit e is bit (e mod 8) of byte
 * ⌊e/8⌋, least significant first, 1 = keep.  e enumerates (b, n1, i, j) as per-batch
 * [N1, S1_b, S2_b] blocks in batch order, which for equal lengths is the flat [B, N1, S1, S2] index.
 */
#ifndef FLASHC_TESTS_REFERENCE_DROPOUT_H
#define FLASHC_TESTS_REFERENCE_DROPOUT_H

#include <stdbool.h>
#include <stdint.h>

bool ref_keep_bit(const uint8_t *bits, int64_t e);

/* e of (b, n1, i, j); S1/S2 are the per-batch lengths (B entries). */
int64_t ref_drop_index(int N1, const int *S1, const int *S2, int b, int n1, int i, int j);

/* Total bits E = N1·Σ S1_b·S2_b, and the bytes the mask needs, ⌈E/8⌉. */
int64_t ref_drop_bits(int B, int N1, const int *S1, const int *S2);
int64_t ref_drop_bytes(int B, int N1, const int *S1, const int *S2);

#endif
