/* The CTA emulator's stand-in for the toolkit header: __nv_bfloat16 is cta_emu.h's (the core's
 * conversions), with the raw type CUTLASS's host headers name. */
#ifndef FLASHC_EMU_CUDA_BF16_H
#define FLASHC_EMU_CUDA_BF16_H
#include "raw16.h"
typedef cta_emu_raw16<__nv_bfloat16> __nv_bfloat16_raw;
#endif
