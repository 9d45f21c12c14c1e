/*
 * int8 caches on the fp16 tensor cores (decode_mma_kernel.cuh): Q's k slots in the order a thread's
 * key bytes arrive, and bytes as exact fp16 values by byte permutes.
 */
#ifndef FC_CUDA_DECODE_MMA_INT8_CUH
#define FC_CUDA_DECODE_MMA_INT8_CUH

#include "ptx.cuh"

namespace fc_cuda {

/* The feature of k slot s of the Q tile: int8 keys read 16 bytes per thread, so k step u of a
 * 64-feature group takes bytes 4u..4u+3 of each thread's 16 (see the file comment). */
template <bool I8> __device__ __forceinline__ int mma_feature(int s)
{
    if (!I8)
        return s;
    const int grp = s / 64, u = (s / 16) % 4, w = s % 16, half = w < 8 ? 0 : 2, t = w % 8;
    return 64 * grp + 16 * (t / 2) + 4 * u + half + t % 2;
}

/* fp16 pairs (1152 + x) of the bytes x ^ 0x80 selected by sel (bytes 0 and 2), minus 1152: the
 * int8 values exactly, with a permute, a logic op and one half2 subtraction. */
__device__ __forceinline__ uint32_t i8_pair(uint32_t a, uint32_t b, uint32_t sel)
{
    uint32_t t = prmt(a, b, sel);
    t = (t & 0x00FF00FFu) | 0x64006400u;
    __half2 h = *reinterpret_cast<__half2 *>(&t);
    h = __hsub2(h, __halves2half2(__ushort_as_half(0x6480), __ushort_as_half(0x6480)));
    return *reinterpret_cast<uint32_t *>(&h);
}

/* The four int8 values of w as two fp16 pairs (bytes 0, 1 and 2, 3), exactly: each byte flipped to
 * x + 128 and placed under the exponent byte 0x64 (fp16 1024 + x + 128) by one permute, then 1152
 * subtracted. */
__device__ __forceinline__ void i8_quad(uint32_t w, uint32_t &lo, uint32_t &hi)
{
    w ^= 0x80808080u;
    const __half2 off = __halves2half2(__ushort_as_half(0x6480), __ushort_as_half(0x6480));
    uint32_t t0 = prmt(w, 0x64646464u, 0x4140u), t1 = prmt(w, 0x64646464u, 0x4342u);
    __half2 h0 = __hsub2(*reinterpret_cast<__half2 *>(&t0), off), h1 = __hsub2(*reinterpret_cast<__half2 *>(&t1), off);
    lo = *reinterpret_cast<uint32_t *>(&h0), hi = *reinterpret_cast<uint32_t *>(&h1);
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_MMA_INT8_CUH */
