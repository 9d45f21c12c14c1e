/*
 * fp16 / bf16 conversions for the tests, written from the IEEE formats with frexp/ldexp/rint (no
 * bit tricks shared with the library's src/core/half.h).  Encoding rounds once, to nearest even,
 * straight from the double value; overflow gives ±inf, NaN a quiet NaN.
 */
#ifndef FLASHC_TESTS_HALFCONV_H
#define FLASHC_TESTS_HALFCONV_H

#include <stddef.h>
#include <stdint.h>

/* Element types the tests store (the faces map their own dtype enums onto these). */
typedef enum tc_dtype { TC_F32, TC_F16, TC_BF16 } tc_dtype;

uint16_t tc_f16_encode(double x);
double tc_f16_decode(uint16_t h);
uint16_t tc_bf16_encode(double x);
double tc_bf16_decode(uint16_t h);

size_t tc_dtype_size(tc_dtype t);
const char *tc_dtype_name(tc_dtype t);
/* x rounded to the nearest value of type t (ties to even). */
double tc_round(tc_dtype t, double x);
/* Store / load element k of a buffer of type t. */
void tc_store(tc_dtype t, void *base, int64_t k, double x);
double tc_load(tc_dtype t, const void *base, int64_t k);

#endif
