/* The CTA emulator's stand-in for the toolkit header: int2, int4, uint4 and float2 are cta_emu.h's,
 * the rest CUTLASS's host headers name (alignment traits) are plain aggregates here. */
#ifndef FLASHC_EMU_VECTOR_TYPES_H
#define FLASHC_EMU_VECTOR_TYPES_H
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) longlong2 { long long x, y; };
struct alignas(16) ulonglong2 { unsigned long long x, y; };
struct alignas(16) double2 { double x, y; };
struct alignas(16) long4_16a { long x, y, z, w; };
struct alignas(16) ulong4_16a { unsigned long x, y, z, w; };
struct alignas(16) longlong4_16a { long long x, y, z, w; };
struct alignas(16) ulonglong4_16a { unsigned long long x, y, z, w; };
struct alignas(16) double4_16a { double x, y, z, w; };
struct alignas(32) long4_32a { long x, y, z, w; };
struct alignas(32) ulong4_32a { unsigned long x, y, z, w; };
struct alignas(32) longlong4_32a { long long x, y, z, w; };
struct alignas(32) ulonglong4_32a { unsigned long long x, y, z, w; };
struct alignas(32) double4_32a { double x, y, z, w; };
typedef long4_16a long4;
typedef ulong4_16a ulong4;
typedef longlong4_16a longlong4;
typedef ulonglong4_16a ulonglong4;
typedef double4_16a double4;
struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
};
#endif
