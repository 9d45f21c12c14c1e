/*
 * The sm_80 tensor-core vocabulary the kernels use: cp.async (global → shared, zero-filling),
 * ldmatrix (shared → mma fragments), mma.sync m16n8k16 with fp32 accumulators (m16n8k32 on signed
 * bytes with s32 ones), and for fp32
 * operands mma.sync m16n8k8 on tf32 with cvt.rna.tf32.f32 (tf32.cuh builds 3×TF32 products of them).
 */
#ifndef FC_CUDA_PTX_CUH
#define FC_CUDA_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "flashc.h"

namespace fc_cuda {

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global → shared; bytes < 16 reads that many and zero-fills the rest (0 = all zero). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }
/* Waits until at most N of this thread's committed groups are still in flight (a pipeline of N + 1 stages). */
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* max that propagates NaN (max.NaN: one instruction where a > b || a != a ? a : b takes three). */
__device__ __forceinline__ float max_nan(float a, float b)
{
    float r;
    asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

/* movmatrix .trans: the 8×8 16-bit matrix whose fragment lane l holds (row l/4, columns 2(l%4),
 * 2(l%4) + 1), transposed in registers: lane l receives (rows 2(l%4), 2(l%4) + 1 of column l/4). */
__device__ __forceinline__ uint32_t movm_t(uint32_t x)
{
    uint32_t r;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(r) : "r"(x));
    return r;
}

/* The 16-bit element types: their mma spelling and fp32 pair packing. */
template <typename T> struct Elem;
template <> struct Elem<__half> {
    static constexpr fc_dtype dtype = FC_F16;
    static __device__ __forceinline__ uint32_t pack(float a, float b)
    {
        __half2 h = __floats2half2_rn(a, b);
        return *reinterpret_cast<uint32_t *>(&h);
    }
    static __device__ __forceinline__ float load(const void *p) { return __half2float(*(const __half *)p); }
};
template <> struct Elem<__nv_bfloat16> {
    static constexpr fc_dtype dtype = FC_BF16;
    static __device__ __forceinline__ uint32_t pack(float a, float b)
    {
        __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        return *reinterpret_cast<uint32_t *>(&h);
    }
    static __device__ __forceinline__ float load(const void *p) { return __bfloat162float(*(const __nv_bfloat16 *)p); }
};

/* fp32 operands (tf32.cuh): a pair of fp32 is 8 bytes. */
template <> struct Elem<float> {
    static constexpr fc_dtype dtype = FC_F32;
    static __device__ __forceinline__ float load(const void *p) { return *(const float *)p; }
};

/* x rounded to tf32 (10 fraction bits, nearest, ties away from zero), as a 32-bit container whose
 * low 13 bits are zero. */
__device__ __forceinline__ uint32_t tf32_rna(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

/* d += a·b for one m16n8k8 tf32 tile: lane l holds A[l/4 (+8)][l%4 (+4)] (a0: row l/4, a1: + 8 rows,
 * a2: + 4 columns, a3: both), B[l%4 (+4)][l/4] (b0, b1) and D as m16n8k16's. */
__device__ __forceinline__ void mma1688_tf32(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d += a·b for one m16n8k16 tile (a row-major 16×16, b column-major 16×8). */
template <typename T> __device__ __forceinline__ void mma16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void mma16816<__half>(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d += a·b for one m16n8k32 tile of signed bytes, exact in s32 (a row-major 16×32, b column-major
 * 32×8): lane l holds A[l/4 (+8)][4(l%4) (+16) + i] in byte i of a0 (a1: rows + 8, a2: columns + 16,
 * a3: both), B[4(l%4) (+16) + i][l/4] in byte i of b0 (b1: rows + 16) and D as m16n8k16's. */
__device__ __forceinline__ void mma16832_s8(int d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The same with unsigned bytes in b (.s32.s8.u8.s32): B[k][n] in [0, 255]. */
__device__ __forceinline__ void mma16832_s8u8(int d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* prmt.b32 (default mode): byte k of the result is byte (sel >> 4k) & 7 of the pair {b, a} (a: bytes
 * 0–3), its sign bit spread over the byte when bit 3 of that nibble is set. */
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel)
{
    uint32_t t;
    asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(t) : "r"(a), "r"(b), "r"(sel));
    return t;
}

/* 2^x by the special-function unit (ex2.approx.ftz: relative error about 2^-22, results below
 * 2^-126 flush to zero — far inside every tolerance; NaN stays NaN, −inf gives 0). */
__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Loads any float dtype of the problem as fp32 (pse, fp32 outputs read back never). */
__device__ __forceinline__ float load_any(const char *p, fc_dtype dt)
{
    switch (dt) {
    case FC_F16: return __half2float(*(const __half *)p);
    case FC_BF16: return __bfloat162float(*(const __nv_bfloat16 *)p);
    default: return *(const float *)p;
    }
}

/* Stores x as any float dtype of the problem (gradients: fp16, bf16 or fp32). */
__device__ __forceinline__ void store_any(char *p, fc_dtype dt, float x)
{
    switch (dt) {
    case FC_F16: *(__half *)p = __float2half_rn(x); break;
    case FC_BF16: *(__nv_bfloat16 *)p = __float2bfloat16_rn(x); break;
    default: *(float *)p = x;
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_PTX_CUH */
