/*
 * One small vector vocabulary, four instruction sets.  The kernel sources are compiled once per
 * ISA (scalar, AVX2+FMA+F16C, AVX-512, Arm AdvSIMD; avx512bf16 and amx add bf16 products to
 * AVX-512, neonbf16 to AdvSIMD) and written only against these names, so every path runs the same
 * algorithm; the scalar path (FC_W = 1) is the portable reference of it.
 *
 * FC_ISA_FN(name) gives the exported, ISA-suffixed name of a kernel entry point.
 */
#ifndef FC_KERNELS_SIMD_H
#define FC_KERNELS_SIMD_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/half.h"

#define FC_CAT_(a, b) a##_##b
#define FC_CAT(a, b) FC_CAT_(a, b)
#define FC_PASTE_(a, b) a##b
#define FC_PASTE(a, b) FC_PASTE_(a, b)
#define FC_STR_(a) #a
#define FC_STR(a) FC_STR_(a)

#if defined(FC_SIMD_VEC16)
#define FC_ISA vec16
#elif defined(FC_SIMD_NEON) && defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#define FC_ISA neonbf16 /* the AdvSIMD vocabulary below, plus BFDOT bf16 products (gemm_bfdot.h) */
#define FC_BFDOT 1
#elif defined(FC_SIMD_NEON) && defined(__aarch64__)
#define FC_ISA neon /* AdvSIMD, which every aarch64 CPU has (the scalar set is built without FC_SIMD_NEON) */
#elif (defined(__AMX_TILE__) || defined(__AMXTILE__)) && (defined(__AMX_BF16__) || defined(__AMXBF16__)) && \
    defined(__AVX512BF16__)
#define FC_ISA amx /* the AVX-512 vocabulary below, plus bf16 tile products (amx.h) */
#define FC_AMX 1
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
    defined(__AVX512BF16__)
#define FC_ISA avx512bf16 /* the AVX-512 vocabulary below, plus bf16 dot products (dpbf16.h) */
#define FC_DPBF16 1
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#define FC_ISA avx512
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define FC_ISA avx2
#else
#define FC_ISA scalar
#endif
#define FC_ISA_FN(name) FC_CAT(name, FC_ISA)
#ifndef FC_AMX
#define FC_AMX 0
#endif
#ifndef FC_DPBF16
#define FC_DPBF16 0
#endif
#ifndef FC_BFDOT
#define FC_BFDOT 0
#endif
/* The sets whose bf16/fp16 attention products run in bf16 (amx.h's GEMM: tiles, vdpbf16ps or
 * BFDOT), and those of them with the fused row pipeline (amx_rows.h, AVX-512 code). */
#define FC_BF16_PRODUCTS (FC_AMX || FC_DPBF16 || FC_BFDOT)
#define FC_BF16_FUSED (FC_AMX || FC_DPBF16)

/* Sanitizer builds leave inlining to the compiler: forcing every unrolled register tile of the
 * micro-GEMM into its callers makes functions so large that clang's ASan + UBSan compile of one
 * vector kernel file takes minutes instead of seconds (its block-frequency and branch-probability
 * analyses grow faster than the function). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define FC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(FC_SANITIZED)
#define FC_INLINE static inline
#else
#define FC_INLINE static inline __attribute__((always_inline))
#endif

/* 2^n for the portable sets, total on every float: C makes converting an out-of-range float to an
 * integer undefined, so n is clamped to the exponents 2^n can have first (below −127 gives 0,
 * above 128 +inf; NaN any finite power: whatever it multiplies is NaN already). */
static inline float fc_pow2i_scalar(float n)
{
    const int32_t e = n >= -127.0f ? (n <= 128.0f ? (int32_t)n : 128) : -127;
    return fc_bits_f32((uint32_t)(e + 127) << 23);
}

/* ---------------------------------------------------------------------------------------------- */
#if defined(FC_SIMD_VEC16)
/* 16 lanes in portable GCC/Clang vector extensions: the AVX-512 geometry (lane count, register
 * tile, masks and tails) on any machine, so tests exercise the wide-vector logic everywhere. */
#define FC_W 16
typedef float fvec __attribute__((vector_size(64)));
typedef int32_t fmask __attribute__((vector_size(64)));
#define FC_LANES(expr) do { for (int l_ = 0; l_ < 16; l_++) { expr; } } while (0)

FC_INLINE fvec v_zero(void) { return (fvec){0}; }
FC_INLINE fvec v_set1(float x) { return (fvec){0} + x; }
FC_INLINE fvec v_load(const float *p) { fvec v; memcpy(&v, p, sizeof v); return v; }
FC_INLINE void v_store(float *p, fvec v) { memcpy(p, &v, sizeof v); }
FC_INLINE fvec v_load_n(const float *p, int n) { fvec v = v_zero(); FC_LANES(if (l_ < n) v[l_] = p[l_]); return v; }
FC_INLINE void v_store_n(float *p, fvec v, int n) { FC_LANES(if (l_ < n) p[l_] = v[l_]); }
FC_INLINE fvec v_bcast(const float *p) { return v_set1(*p); }
FC_INLINE fvec v_add(fvec a, fvec b) { return a + b; }
FC_INLINE fvec v_sub(fvec a, fvec b) { return a - b; }
FC_INLINE fvec v_mul(fvec a, fvec b) { return a * b; }
FC_INLINE fvec v_fma(fvec a, fvec b, fvec c) { return a * b + c; }
FC_INLINE fvec v_div(fvec a, fvec b) { return a / b; }
FC_INLINE fvec v_sqrt(fvec a) { FC_LANES(a[l_] = sqrtf(a[l_])); return a; }
FC_INLINE fvec v_abs(fvec a) { FC_LANES(a[l_] = fabsf(a[l_])); return a; }
FC_INLINE fvec v_max(fvec a, fvec b) { FC_LANES(a[l_] = a[l_] > b[l_] ? a[l_] : b[l_]); return a; }
FC_INLINE fvec v_min(fvec a, fvec b) { FC_LANES(a[l_] = a[l_] < b[l_] ? a[l_] : b[l_]); return a; }
FC_INLINE fvec v_round(fvec a) { FC_LANES(a[l_] = nearbyintf(a[l_])); return a; }
FC_INLINE fmask v_lt(fvec a, fvec b) { return a < b; }
FC_INLINE fmask v_le(fvec a, fvec b) { return a <= b; }
FC_INLINE fmask v_eq(fvec a, fvec b) { return a == b; }
FC_INLINE fmask m_and(fmask a, fmask b) { return a & b; }
FC_INLINE fmask m_or(fmask a, fmask b) { return a | b; }
FC_INLINE fvec v_select(fmask m, fvec yes, fvec no) { FC_LANES(no[l_] = m[l_] ? yes[l_] : no[l_]); return no; }
FC_INLINE bool m_any(fmask m) { bool any = false; FC_LANES(any |= m[l_] != 0); return any; }
FC_INLINE bool m_all(fmask m) { bool all = true; FC_LANES(all &= m[l_] != 0); return all; }
FC_INLINE fvec v_pow2i(fvec n) { FC_LANES(n[l_] = fc_pow2i_scalar(n[l_])); return n; }
FC_INLINE float v_hmax(fvec v) { float m = v[0]; FC_LANES(m = v[l_] > m ? v[l_] : m); return m; }
FC_INLINE float v_hsum(fvec v) { float s = 0.0f; FC_LANES(s += v[l_]); return s; }
FC_INLINE fvec v_load_f16(const uint16_t *p) { fvec v; FC_LANES(v[l_] = fc_f16_to_f32_inline(p[l_])); return v; }
FC_INLINE fvec v_load_bf16(const uint16_t *p) { fvec v; FC_LANES(v[l_] = fc_bf16_to_f32_inline(p[l_])); return v; }
FC_INLINE void v_store_bf16(uint16_t *p, fvec v) { FC_LANES(p[l_] = fc_f32_to_bf16_inline(v[l_])); }
FC_INLINE fvec v_load_i8(const int8_t *p) { fvec v; FC_LANES(v[l_] = (float)p[l_]); return v; }

/* ---------------------------------------------------------------------------------------------- */
#elif defined(FC_SIMD_NEON) && defined(__aarch64__)
/* Arm AdvSIMD (NEON): 4 lanes in 32 registers.  max, min and select keep x86's operand rule (the
 * second operand when either is NaN, as the scalar path's a > b ? a : b), which FMAX (NaN wins)
 * and FMAXNM (the number wins) both break: a compare and a bit select. */
#include <arm_neon.h>
#define FC_W 4
typedef float32x4_t fvec;
typedef uint32x4_t fmask;

FC_INLINE fvec v_zero(void) { return vdupq_n_f32(0.0f); }
FC_INLINE fvec v_set1(float x) { return vdupq_n_f32(x); }
FC_INLINE fvec v_load(const float *p) { return vld1q_f32(p); }
FC_INLINE void v_store(float *p, fvec v) { vst1q_f32(p, v); }
FC_INLINE fvec v_load_n(const float *p, int n)
{
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    memcpy(t, p, (size_t)(n > 0 ? n : 0) * sizeof(float));
    return vld1q_f32(t);
}
FC_INLINE void v_store_n(float *p, fvec v, int n)
{
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, (size_t)(n > 0 ? n : 0) * sizeof(float));
}
FC_INLINE fvec v_bcast(const float *p) { return vld1q_dup_f32(p); }
FC_INLINE fvec v_add(fvec a, fvec b) { return vaddq_f32(a, b); }
FC_INLINE fvec v_sub(fvec a, fvec b) { return vsubq_f32(a, b); }
FC_INLINE fvec v_mul(fvec a, fvec b) { return vmulq_f32(a, b); }
FC_INLINE fvec v_fma(fvec a, fvec b, fvec c) { return vfmaq_f32(c, a, b); }
FC_INLINE fvec v_max(fvec a, fvec b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
FC_INLINE fvec v_min(fvec a, fvec b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
FC_INLINE fvec v_div(fvec a, fvec b) { return vdivq_f32(a, b); }
FC_INLINE fvec v_sqrt(fvec a) { return vsqrtq_f32(a); }
FC_INLINE fvec v_abs(fvec a) { return vabsq_f32(a); }
FC_INLINE fvec v_round(fvec a) { return vrndnq_f32(a); } /* to nearest, ties to even */
FC_INLINE fmask v_lt(fvec a, fvec b) { return vcltq_f32(a, b); }
FC_INLINE fmask v_le(fvec a, fvec b) { return vcleq_f32(a, b); }
FC_INLINE fmask v_eq(fvec a, fvec b) { return vceqq_f32(a, b); }
FC_INLINE fmask m_and(fmask a, fmask b) { return vandq_u32(a, b); }
FC_INLINE fmask m_or(fmask a, fmask b) { return vorrq_u32(a, b); }
FC_INLINE fvec v_select(fmask m, fvec yes, fvec no) { return vbslq_f32(m, yes, no); }
FC_INLINE bool m_any(fmask m) { return vmaxvq_u32(m) != 0; }
FC_INLINE bool m_all(fmask m) { return vminvq_u32(m) != 0; }
FC_INLINE fvec v_pow2i(fvec n) /* NaN converts to 0: any finite power (the result is NaN anyway) */
{
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
}
FC_INLINE float v_hmax(fvec v)
{
    const fvec h = v_max(v, vextq_f32(v, v, 2));
    return vgetq_lane_f32(v_max(h, vextq_f32(h, h, 1)), 0);
}
FC_INLINE float v_hsum(fvec v) { return vaddvq_f32(v); } /* (v0 + v1) + (v2 + v3) */
FC_INLINE fvec v_load_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
FC_INLINE fvec v_load_bf16(const uint16_t *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
/* bf16 rows (fc_load_row) as a plain loop: GCC widens it 8 elements a load (SHLL, SHLL2), where
 * v_load_bf16 loads 4: 0.6 instructions an element against 1 */
#define FC_WIDEN_BF16_BY_ELEMENT 1
FC_INLINE fvec v_load_i8(const int8_t *p)
{
    int32_t w; /* four bytes, not the eight a D register would read past the row */
    memcpy(&w, p, sizeof w);
    const int16x8_t h = vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w)));
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(h)));
}
/* fc_f32_to_bf16_inline's rounding on integers, bit for bit */
FC_INLINE void v_store_bf16(uint16_t *p, fvec v)
{
    const uint32x4_t u = vreinterpretq_u32_f32(v), hi = vshrq_n_u32(u, 16);
    const uint32x4_t r = vshrq_n_u32(vaddq_u32(u, vaddq_u32(vandq_u32(hi, vdupq_n_u32(1)), vdupq_n_u32(0x7fff))), 16);
    const uint32x4_t nan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
    vst1_u16(p, vmovn_u32(vbslq_u32(nan, vorrq_u32(hi, vdupq_n_u32(0x40)), r)));
}

/* ---------------------------------------------------------------------------------------------- */
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>
#define FC_W 16
typedef __m512 fvec;
typedef __mmask16 fmask;

FC_INLINE fvec v_zero(void) { return _mm512_setzero_ps(); }
FC_INLINE fvec v_set1(float x) { return _mm512_set1_ps(x); }
FC_INLINE fvec v_load(const float *p) { return _mm512_loadu_ps(p); }
FC_INLINE void v_store(float *p, fvec v) { _mm512_storeu_ps(p, v); }
FC_INLINE fvec v_load_n(const float *p, int n) { return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p); }
FC_INLINE void v_store_n(float *p, fvec v, int n) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v); }
FC_INLINE fvec v_bcast(const float *p) { return _mm512_set1_ps(*p); }
FC_INLINE fvec v_add(fvec a, fvec b) { return _mm512_add_ps(a, b); }
FC_INLINE fvec v_sub(fvec a, fvec b) { return _mm512_sub_ps(a, b); }
FC_INLINE fvec v_mul(fvec a, fvec b) { return _mm512_mul_ps(a, b); }
FC_INLINE fvec v_fma(fvec a, fvec b, fvec c) { return _mm512_fmadd_ps(a, b, c); }
FC_INLINE fvec v_max(fvec a, fvec b) { return _mm512_max_ps(a, b); }
FC_INLINE fvec v_min(fvec a, fvec b) { return _mm512_min_ps(a, b); }
FC_INLINE fvec v_div(fvec a, fvec b) { return _mm512_div_ps(a, b); }
FC_INLINE fvec v_sqrt(fvec a) { return _mm512_sqrt_ps(a); }
FC_INLINE fvec v_abs(fvec a) { return _mm512_abs_ps(a); }
FC_INLINE fvec v_round(fvec a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
FC_INLINE fmask v_lt(fvec a, fvec b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
FC_INLINE fmask v_le(fvec a, fvec b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
FC_INLINE fmask v_eq(fvec a, fvec b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
FC_INLINE fmask m_and(fmask a, fmask b) { return (fmask)(a & b); }
FC_INLINE fmask m_or(fmask a, fmask b) { return (fmask)(a | b); }
FC_INLINE fvec v_select(fmask m, fvec yes, fvec no) { return _mm512_mask_blend_ps(m, no, yes); }
FC_INLINE bool m_any(fmask m) { return m != 0; }
FC_INLINE bool m_all(fmask m) { return m == 0xFFFF; }
FC_INLINE fvec v_pow2i(fvec n) /* 2^n for integral n in [-126, 127] */
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
/* y·2^n (integral n), ±inf past the fp32 range, 0 where `zero`: vscalefps (v_exp) */
#define FC_HAVE_SCALE 1
FC_INLINE fvec v_scale_or_zero(fmask zero, fvec y, fvec n) { return _mm512_maskz_scalef_ps((fmask)~zero, y, n); }
FC_INLINE float v_hmax(fvec v) { return _mm512_reduce_max_ps(v); }
FC_INLINE float v_hsum(fvec v) { return _mm512_reduce_add_ps(v); }
FC_INLINE fvec v_load_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
FC_INLINE fvec v_load_i8(const int8_t *p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p))); }
FC_INLINE fvec v_load_bf16(const uint16_t *p)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
/* fc_f32_to_bf16_inline's rounding on integers, bit for bit (vcvtneps2bf16 flushes subnormals) */
FC_INLINE void v_store_bf16(uint16_t *p, fvec v)
{
    const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    const __m512i odd = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i w = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(w));
}

/* ---------------------------------------------------------------------------------------------- */
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define FC_W 8
typedef __m256 fvec;
typedef __m256 fmask;

FC_INLINE __m256i fc_lane_mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
FC_INLINE fvec v_zero(void) { return _mm256_setzero_ps(); }
FC_INLINE fvec v_set1(float x) { return _mm256_set1_ps(x); }
FC_INLINE fvec v_load(const float *p) { return _mm256_loadu_ps(p); }
FC_INLINE void v_store(float *p, fvec v) { _mm256_storeu_ps(p, v); }
FC_INLINE fvec v_load_n(const float *p, int n) { return _mm256_maskload_ps(p, fc_lane_mask(n)); }
FC_INLINE void v_store_n(float *p, fvec v, int n) { _mm256_maskstore_ps(p, fc_lane_mask(n), v); }
FC_INLINE fvec v_bcast(const float *p) { return _mm256_broadcast_ss(p); }
FC_INLINE fvec v_add(fvec a, fvec b) { return _mm256_add_ps(a, b); }
FC_INLINE fvec v_sub(fvec a, fvec b) { return _mm256_sub_ps(a, b); }
FC_INLINE fvec v_mul(fvec a, fvec b) { return _mm256_mul_ps(a, b); }
FC_INLINE fvec v_fma(fvec a, fvec b, fvec c) { return _mm256_fmadd_ps(a, b, c); }
FC_INLINE fvec v_max(fvec a, fvec b) { return _mm256_max_ps(a, b); }
FC_INLINE fvec v_min(fvec a, fvec b) { return _mm256_min_ps(a, b); }
FC_INLINE fvec v_div(fvec a, fvec b) { return _mm256_div_ps(a, b); }
FC_INLINE fvec v_sqrt(fvec a) { return _mm256_sqrt_ps(a); }
FC_INLINE fvec v_abs(fvec a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
FC_INLINE fvec v_round(fvec a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
FC_INLINE fmask v_lt(fvec a, fvec b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
FC_INLINE fmask v_le(fvec a, fvec b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
FC_INLINE fmask v_eq(fvec a, fvec b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
FC_INLINE fmask m_and(fmask a, fmask b) { return _mm256_and_ps(a, b); }
FC_INLINE fmask m_or(fmask a, fmask b) { return _mm256_or_ps(a, b); }
FC_INLINE fvec v_select(fmask m, fvec yes, fvec no) { return _mm256_blendv_ps(no, yes, m); }
FC_INLINE bool m_any(fmask m) { return _mm256_movemask_ps(m) != 0; }
FC_INLINE bool m_all(fmask m) { return _mm256_movemask_ps(m) == 0xFF; }
FC_INLINE fvec v_pow2i(fvec n)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
/* v_exp2's rounding by the shifter (FC_HAVE_SHIFTER): 2^n from the bits of t = y + FC_EXP2_SHIFTER,
 * and x where m is clear (the and-not that v_select of a zero would become only after a sign test) */
#define FC_HAVE_SHIFTER 1
/* the fp32 forward's softmax keeps its maximum in the units of the scores (forward.c fc_fwd_raw):
 * one multiply and one store per score fewer, a measured part of this set's time */
#define FC_RAW_MAX 1
FC_INLINE fvec v_pow2_shifted(fvec t) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)); }
FC_INLINE fvec v_zero_where(fmask m, fvec x) { return _mm256_andnot_ps(m, x); }
FC_INLINE float v_hmax(fvec v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}
FC_INLINE float v_hsum(fvec v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
FC_INLINE fvec v_load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
FC_INLINE fvec v_load_i8(const int8_t *p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
FC_INLINE fvec v_load_bf16(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
/* fc_f32_to_bf16_inline's rounding on integers, bit for bit */
FC_INLINE void v_store_bf16(uint16_t *p, fvec v)
{
    const __m256i u = _mm256_castps_si256(v), hi = _mm256_srli_epi32(u, 16);
    const __m256i odd = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    /* NaN: |u| > 0x7f800000 as signed integers (|u| < 2^31) */
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    const __m256i w = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storeu_si128((__m128i *)p, packed);
}

/* ---------------------------------------------------------------------------------------------- */
#else /* portable scalar path */
#define FC_W 1
typedef float fvec;
typedef int fmask;

FC_INLINE fvec v_zero(void) { return 0.0f; }
FC_INLINE fvec v_set1(float x) { return x; }
FC_INLINE fvec v_load(const float *p) { return *p; }
FC_INLINE void v_store(float *p, fvec v) { *p = v; }
FC_INLINE fvec v_load_n(const float *p, int n) { return n > 0 ? *p : 0.0f; }
FC_INLINE void v_store_n(float *p, fvec v, int n) { if (n > 0) *p = v; }
FC_INLINE fvec v_bcast(const float *p) { return *p; }
FC_INLINE fvec v_add(fvec a, fvec b) { return a + b; }
FC_INLINE fvec v_sub(fvec a, fvec b) { return a - b; }
FC_INLINE fvec v_mul(fvec a, fvec b) { return a * b; }
FC_INLINE fvec v_fma(fvec a, fvec b, fvec c) { return a * b + c; } /* no FMA unit assumed */
FC_INLINE fvec v_max(fvec a, fvec b) { return a > b ? a : b; }
FC_INLINE fvec v_min(fvec a, fvec b) { return a < b ? a : b; }
FC_INLINE fvec v_div(fvec a, fvec b) { return a / b; }
FC_INLINE fvec v_sqrt(fvec a) { return sqrtf(a); }
FC_INLINE fvec v_abs(fvec a) { return fabsf(a); }
FC_INLINE fvec v_round(fvec a) { return nearbyintf(a); }
FC_INLINE fmask v_lt(fvec a, fvec b) { return a < b; }
FC_INLINE fmask v_le(fvec a, fvec b) { return a <= b; }
FC_INLINE fmask v_eq(fvec a, fvec b) { return a == b; }
FC_INLINE fmask m_and(fmask a, fmask b) { return a & b; }
FC_INLINE fmask m_or(fmask a, fmask b) { return a | b; }
FC_INLINE fvec v_select(fmask m, fvec yes, fvec no) { return m ? yes : no; }
FC_INLINE bool m_any(fmask m) { return m != 0; }
FC_INLINE bool m_all(fmask m) { return m != 0; }
FC_INLINE fvec v_pow2i(fvec n) { return fc_pow2i_scalar(n); }
FC_INLINE float v_hmax(fvec v) { return v; }
FC_INLINE float v_hsum(fvec v) { return v; }
FC_INLINE fvec v_load_f16(const uint16_t *p) { return fc_f16_to_f32_inline(*p); }
FC_INLINE fvec v_load_bf16(const uint16_t *p) { return fc_bf16_to_f32_inline(*p); }
FC_INLINE void v_store_bf16(uint16_t *p, fvec v) { *p = fc_f32_to_bf16_inline(v); }
FC_INLINE fvec v_load_i8(const int8_t *p) { return (float)*p; }
#endif

/* ---------------------------------------------------------------------------------------------- */
#ifndef FC_HAVE_SCALE
#define FC_HAVE_SCALE 0 /* (the AVX-512 vocabulary has v_scale_or_zero) */
#endif
#ifndef FC_HAVE_SHIFTER
#define FC_HAVE_SHIFTER 0 /* (the AVX2 vocabulary has v_pow2_shifted and v_zero_where) */
#endif
#ifndef FC_RAW_MAX
#define FC_RAW_MAX 0 /* (the AVX2 set's choice) */
#endif

/* exp(x): Cody–Waite reduction and the Cephes degree-6 polynomial, relative error below 2 ulp up to
 * x = 88 (x in (88, 88.72] gives exp(88); AVX-512 scales with vscalefps, which needs no clamp
 * and no overflow blend and is exact there too); exactly 0 for x < −87.33 (so exp(−inf) = 0 and masked
 * scores vanish without a separate blend), +inf beyond the fp32 range, NaN for NaN (semantics
 * §0.3: the clamps put the constant first because max/min return their second operand when
 * either is NaN, on every path of this file). */
FC_INLINE fvec v_exp(fvec x)
{
    const fvec lo = v_set1(-87.3365447f);
    const fmask underflow = v_lt(x, lo);
#if FC_HAVE_SCALE /* the scaling overflows to inf by itself; +inf only must not make r NaN (NaN stays) */
    x = v_min(v_set1(128.0f), x);
#else
    const fmask overflow = v_lt(v_set1(88.7228394f), x);
    x = v_min(v_set1(88.0f), v_max(lo, x));
#endif
    const fvec n = v_round(v_mul(x, v_set1(1.44269504088896341f)));
    fvec r = v_fma(n, v_set1(-0.693359375f), x);
    r = v_fma(n, v_set1(2.12194440e-4f), r);
    fvec y = v_set1(1.9875691500e-4f);
    y = v_fma(y, r, v_set1(1.3981999507e-3f));
    y = v_fma(y, r, v_set1(8.3334519073e-3f));
    y = v_fma(y, r, v_set1(4.1665795894e-2f));
    y = v_fma(y, r, v_set1(1.6666665459e-1f));
    y = v_fma(y, r, v_set1(5.0000001201e-1f));
    y = v_fma(y, v_mul(r, r), v_add(r, v_set1(1.0f)));
#if FC_HAVE_SCALE
    return v_scale_or_zero(underflow, y, n);
#else
    return v_select(underflow, v_zero(), v_select(overflow, v_set1(INFINITY), v_mul(y, v_pow2i(n))));
#endif
}

#define FC_LOG2E 1.44269504088896341f
#define FC_LOG2E_D 1.4426950408889634 /* (in double, for a product rounded once) */

#define FC_EXP2_SHIFTER 12583039.0f /* 1.5·2^23 + 127 */
/* v_exp2's p(f), 2^f for f in [−½, ½] */
FC_INLINE fvec fc_exp2_poly(fvec f)
{
    fvec p = v_fma(v_set1(1.3264727313e-3f), f, v_set1(9.6715129912e-3f));
    p = v_fma(p, f, v_set1(5.5507335812e-2f));
    p = v_fma(p, f, v_set1(2.4022242427e-1f));
    p = v_fma(p, f, v_set1(6.9314700365e-1f));
    return v_fma(p, f, v_set1(1.0f));
}

/* 2^y for y ≤ 128 and NaN (what softmax steps feed it: (x − m)·log2 e): 2ⁿ·p(f), n = round(y),
 * f = y − n (exact), p a degree-5 fit of 2^f on [−½, ½] with p(0) = 1 (relative error 2e-7 as
 * evaluated in fp32, 3 ulp); exactly 0 below −126 (−inf included), +inf from y = 128 on (+inf
 * included; in [127.5, 128) +inf or the value, as the set scales), NaN for NaN.  Its reduction is exact and needs no clamp at the bottom: seven vector
 * operations fewer than v_exp (four where vscalefps scales). */
FC_INLINE fvec v_exp2(fvec y)
{
    y = v_min(v_set1(128.0f), y); /* (a NaN y stays: min returns its second operand) */
    const fmask zero = v_lt(y, v_set1(-126.0f));
#if FC_HAVE_SHIFTER
    /* from y = −126 to 128, t = y + 1.5·2^23 + 127 lies where fp32 steps by 1: the addition rounds y to
     * the nearest integer n, ties to even as v_round (in the default rounding mode), and leaves
     * n + 127 in t's low bits, 2^n's exponent field; two adds replace a round, a conversion and an
     * integer add (same n, f and 2^n, so the same results) */
    const fvec t = v_add(y, v_set1(FC_EXP2_SHIFTER)), n = v_sub(t, v_set1(FC_EXP2_SHIFTER)), f = v_sub(y, n);
#else
    const fvec n = v_round(y), f = v_sub(y, n);
#endif
    const fvec p = fc_exp2_poly(f);
#if FC_HAVE_SCALE
    return v_scale_or_zero(zero, p, n);
#elif FC_HAVE_SHIFTER
    return v_zero_where(zero, v_mul(p, v_pow2_shifted(t)));
#else
    return v_select(zero, v_zero(), v_mul(p, v_pow2i(n)));
#endif
}

/* 2^y for y ≤ 0 (−inf included) and NaN, as v_exp2 but for two ends: exactly 0 below −126.5 (from
 * −126.5 to −126 a subnormal where v_exp2 gives 0), and no clamp for y > 0.  What a softmax step
 * feeds it with its own running maximum (fc_softmax_step_raw): two vector operations fewer than
 * v_exp2 where the shifter rounds. */
FC_INLINE fvec v_exp2_nonpositive(fvec y)
{
#if FC_HAVE_SHIFTER
    /* (a NaN y stays: max returns its second operand); from y = −127 on t's exponent bits n + 127 are
     * 0, so 2^n is +0 and so is the result: no zero test */
    y = v_max(v_set1(-127.0f), y);
    const fvec t = v_add(y, v_set1(FC_EXP2_SHIFTER)), n = v_sub(t, v_set1(FC_EXP2_SHIFTER)), f = v_sub(y, n);
    const fvec p = fc_exp2_poly(f);
    return v_mul(p, v_pow2_shifted(t));
#else
    return v_exp2(y);
#endif
}

/* v_exp for one value, so scalar code agrees with vector code. */
static inline float fc_exp1(float x)
{
    float out[FC_W];
    v_store(out, v_exp(v_set1(x)));
    return out[0];
}

/* Σ a[e]·b[e] in fp32, vector lanes first (a fixed order for a given ISA). */
static inline float fc_dot(const float *a, const float *b, int n)
{
    fvec acc = v_zero();
    int e = 0;
    for (; e + FC_W <= n; e += FC_W)
        acc = v_fma(v_load(a + e), v_load(b + e), acc);
    float s = v_hsum(acc);
    for (; e < n; e++)
        s += a[e] * b[e];
    return s;
}

/* Whether the n rows a[j·ld + e], e < width, are all finite: x·0 is NaN exactly for ±inf and NaN,
 * so one fused multiply-add per vector tells (the non-finite paths run only when this is false). */
static inline bool fc_all_finite(const float *a, int n, ptrdiff_t ld, int width)
{
    fvec acc = v_zero();
    float s = 0.0f;
    for (int j = 0; j < n; j++) {
        const float *row = a + (ptrdiff_t)j * ld;
        int e = 0;
        for (; e + FC_W <= width; e += FC_W)
            acc = v_fma(v_load(row + e), v_zero(), acc);
        for (; e < width; e++)
            s += row[e] * 0.0f;
    }
    return v_hsum(acc) + s == 0.0f;
}

/* dst[c][r] = src[r][c] for r < rows, c < cols (row strides lds, ldd).  8×8 register transposes
 * where AVX is available, 4×4 on NEON, a plain loop elsewhere and for the edges. */
static inline void fc_transpose(const float *src, ptrdiff_t lds, float *dst, ptrdiff_t ldd, int rows, int cols)
{
    int r0 = 0;
#if defined(__AVX2__)
    for (; r0 + 8 <= rows; r0 += 8) {
        int c0 = 0;
        for (; c0 + 8 <= cols; c0 += 8) {
            const float *s = src + r0 * lds + c0;
            __m256 a0 = _mm256_loadu_ps(s), a1 = _mm256_loadu_ps(s + lds), a2 = _mm256_loadu_ps(s + 2 * lds),
                   a3 = _mm256_loadu_ps(s + 3 * lds), a4 = _mm256_loadu_ps(s + 4 * lds), a5 = _mm256_loadu_ps(s + 5 * lds),
                   a6 = _mm256_loadu_ps(s + 6 * lds), a7 = _mm256_loadu_ps(s + 7 * lds);
            __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1), t2 = _mm256_unpacklo_ps(a2, a3),
                   t3 = _mm256_unpackhi_ps(a2, a3), t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5),
                   t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
            a0 = _mm256_shuffle_ps(t0, t2, 0x44), a1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            a2 = _mm256_shuffle_ps(t1, t3, 0x44), a3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            a4 = _mm256_shuffle_ps(t4, t6, 0x44), a5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            a6 = _mm256_shuffle_ps(t5, t7, 0x44), a7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *d = dst + c0 * ldd + r0;
            _mm256_storeu_ps(d, _mm256_permute2f128_ps(a0, a4, 0x20));
            _mm256_storeu_ps(d + ldd, _mm256_permute2f128_ps(a1, a5, 0x20));
            _mm256_storeu_ps(d + 2 * ldd, _mm256_permute2f128_ps(a2, a6, 0x20));
            _mm256_storeu_ps(d + 3 * ldd, _mm256_permute2f128_ps(a3, a7, 0x20));
            _mm256_storeu_ps(d + 4 * ldd, _mm256_permute2f128_ps(a0, a4, 0x31));
            _mm256_storeu_ps(d + 5 * ldd, _mm256_permute2f128_ps(a1, a5, 0x31));
            _mm256_storeu_ps(d + 6 * ldd, _mm256_permute2f128_ps(a2, a6, 0x31));
            _mm256_storeu_ps(d + 7 * ldd, _mm256_permute2f128_ps(a3, a7, 0x31));
        }
        for (; c0 < cols; c0++)
            for (int r = r0; r < r0 + 8; r++)
                dst[c0 * ldd + r] = src[r * lds + c0];
    }
#elif FC_W == 4 /* NEON: 4×4 blocks, two rounds of lane transposes (32-bit, then 64-bit) */
    for (; r0 + 4 <= rows; r0 += 4) {
        int c0 = 0;
        for (; c0 + 4 <= cols; c0 += 4) {
            const float *s = src + r0 * lds + c0;
            const float32x4_t a0 = vld1q_f32(s), a1 = vld1q_f32(s + lds), a2 = vld1q_f32(s + 2 * lds),
                              a3 = vld1q_f32(s + 3 * lds);
            const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(a0, a1)), t1 = vreinterpretq_f64_f32(vtrn2q_f32(a0, a1)),
                              t2 = vreinterpretq_f64_f32(vtrn1q_f32(a2, a3)), t3 = vreinterpretq_f64_f32(vtrn2q_f32(a2, a3));
            float *d = dst + c0 * ldd + r0;
            vst1q_f32(d, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));
            vst1q_f32(d + ldd, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));
            vst1q_f32(d + 2 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));
            vst1q_f32(d + 3 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));
        }
        for (; c0 < cols; c0++)
            for (int r = r0; r < r0 + 4; r++)
                dst[c0 * ldd + r] = src[r * lds + c0];
    }
#endif
    for (; r0 < rows; r0++)
        for (int c = 0; c < cols; c++)
            dst[c * ldd + r0] = src[r0 * lds + c];
}

#endif /* FC_KERNELS_SIMD_H */
