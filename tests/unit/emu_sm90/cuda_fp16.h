/* The CTA emulator's stand-in for the toolkit header: __half is cta_emu.h's (the core's
 * conversions); what CUTLASS's host headers also name (half, half2, __half_raw) around it. */
#ifndef FLASHC_EMU_CUDA_FP16_H
#define FLASHC_EMU_CUDA_FP16_H
#include "raw16.h"
typedef __half half;
typedef __half2 half2;
typedef cta_emu_raw16<__half> __half_raw;
inline __half __float2half(float f) { return __half(f); }
#endif
