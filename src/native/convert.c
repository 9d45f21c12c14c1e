/* The public fp16 / bf16 conversions: the library's own (core/half.h), exported. */
#include "flashc.h"

#include "../core/half.h"

float fc_f16_to_f32(uint16_t h) { return fc_f16_to_f32_inline(h); }
uint16_t fc_f32_to_f16(float f) { return fc_f32_to_f16_inline(f); }
float fc_bf16_to_f32(uint16_t h) { return fc_bf16_to_f32_inline(h); }
uint16_t fc_f32_to_bf16(float f) { return fc_f32_to_bf16_inline(f); }
