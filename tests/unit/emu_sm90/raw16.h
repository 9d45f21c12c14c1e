/* The toolkit's __half_raw / __nv_bfloat16_raw for the emulator's stand-in headers (CUTLASS's host
 * headers name them): the 16 bits of T, converting both ways. */
#ifndef FLASHC_EMU_RAW16_H
#define FLASHC_EMU_RAW16_H
template <class T> struct cta_emu_raw16 {
    unsigned short x;
    cta_emu_raw16() = default;
    cta_emu_raw16(T h) : x(h.x) {}
    operator T() const
    {
        T h;
        h.x = x;
        return h;
    }
};
#endif
