/* The CTA emulator's stand-in for the toolkit header: __nv_bfloat16 is cta_emu.h's (the core's
 * conversions), with the raw type CUTLASS's host headers name. */
#ifndef FLASHC_EMU_CUDA_BF16_H
#define FLASHC_EMU_CUDA_BF16_H
struct __nv_bfloat16_raw {
    unsigned short x;
    __nv_bfloat16_raw() = default;
    __nv_bfloat16_raw(__nv_bfloat16 h) : x(h.x) {}
    operator __nv_bfloat16() const
    {
        __nv_bfloat16 h;
        h.x = x;
        return h;
    }
};
#endif
