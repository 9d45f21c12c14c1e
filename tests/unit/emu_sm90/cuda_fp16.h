/* The CTA emulator's stand-in for the toolkit header: __half is cta_emu.h's (the core's
 * conversions); what CUTLASS's host headers also name (half, half2, __half_raw) around it. */
#ifndef FLASHC_EMU_CUDA_FP16_H
#define FLASHC_EMU_CUDA_FP16_H
typedef __half half;
typedef __half2 half2;
struct __half_raw {
    unsigned short x;
    __half_raw() = default;
    __half_raw(__half h) : x(h.x) {}
    operator __half() const
    {
        __half h;
        h.x = x;
        return h;
    }
};
inline __half __float2half(float f) { return __half(f); }
#endif
