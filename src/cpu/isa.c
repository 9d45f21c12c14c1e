/* Picks the best kernel set this CPU runs; FLASHC_ISA or fc_cpu_pin_isa() (behind fc_cpu_force_isa) can pin one. */
#include <stdlib.h>
#include <string.h>
#if defined(FLASHC_X86)
#include <cpuid.h>
#endif
#if defined(FLASHC_NEON)
#include <sys/auxv.h>
#endif

#include "cpu.h"
#include "../core/error.h"

#if defined(FLASHC_AMX)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static const fc_cpu_kernels *fc_forced;

#if defined(FLASHC_AVX512BF16) || defined(FLASHC_AMX)
/* AVX512-BF16 (vdpbf16ps, vcvtne2ps2bf16): CPUID leaf 7 subleaf 1, EAX bit 5. */
static bool fc_has_avx512bf16(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1);
}
#endif

#if defined(FLASHC_AMX)
/* AMX-TILE, AMX-BF16 and AVX512-BF16 in the CPU, tile state enabled by the OS (XCR0 bits 17, 18),
 * and Linux's permission to use it (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA)), asked once; a
 * refusal leaves the amx kernels unavailable, so dispatch falls back to avx512. */
static bool fc_amx_usable(void)
{
    static int state; /* 0 not asked yet, 1 usable, −1 not */
    if (state == 0) {
        unsigned a, b, c, d;
        bool ok = __get_cpuid_count(1, 0, &a, &b, &c, &d) && (c >> 27 & 1); /* OSXSAVE: xgetbv works */
        ok = ok && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 24 & 1) && (d >> 22 & 1); /* tile, bf16 */
        ok = ok && fc_has_avx512bf16();
        if (ok) {
            unsigned lo, hi;
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            ok = (lo >> 17 & 3) == 3;
        }
        ok = ok && syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
        state = ok ? 1 : -1;
    }
    return state > 0;
}
#endif

#if defined(FLASHC_AVX512BF16)
/* Whether vdpbf16ps issues at the FMA's rate, so that bf16 products (two per lane) run at twice
 * the fp32 FMA's flops: AMD's Zen 4 and Zen 5 (measured on Zen 5: the bf16 forward 1.8× avx512's).
 * Intel's cores issue it once per 2 cycles against two FMAs a cycle (Sapphire Rapids: the bf16
 * forward 0.65× avx512's; Emerald Rapids, a register-only loop: 1.3 G vdpbf16ps a second against
 * 5.5 G FMAs, the forward 0.57× avx512's), so avx512 stays there. */
static bool fc_dpbf16_full_rate(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u /* "Auth" */ && d == 0x69746e65u /* "enti" */ &&
           c == 0x444d4163u /* "cAMD" */;
}
#endif

#if defined(FLASHC_X86)
/* F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c". */
static bool fc_has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

#if defined(FLASHC_NEON)
/* AdvSIMD as Linux reports it (HWCAP_ASIMD, bit 1 of AT_HWCAP): every aarch64 Linux CPU has it,
 * but a kernel that says otherwise is believed. */
static bool fc_has_asimd(void) { return getauxval(AT_HWCAP) >> 1 & 1; }
#endif

#if defined(FLASHC_NEONBF16)
/* BFDOT and BFCVTN (FEAT_BF16) as Linux reports them: HWCAP2_BF16, bit 14 of AT_HWCAP2. */
static bool fc_has_bf16(void) { return getauxval(AT_HWCAP2) >> 14 & 1; }
#endif

static bool fc_isa_available(const fc_cpu_kernels *k)
{
#if defined(FLASHC_VEC16)
    if (k == &fc_cpu_kernels_vec16)
        return true;
#endif
#if defined(FLASHC_AMX)
    if (k == &fc_cpu_kernels_amx)
        return fc_isa_available(&fc_cpu_kernels_avx512) && fc_amx_usable();
#endif
#if defined(FLASHC_AVX512BF16)
    if (k == &fc_cpu_kernels_avx512bf16)
        return fc_isa_available(&fc_cpu_kernels_avx512) && fc_has_avx512bf16();
#endif
#if defined(FLASHC_NEONBF16)
    if (k == &fc_cpu_kernels_neonbf16)
        return fc_isa_available(&fc_cpu_kernels_neon) && fc_has_bf16();
#endif
#if defined(FLASHC_NEON)
    if (k == &fc_cpu_kernels_neon)
        return fc_has_asimd();
#endif
#if defined(FLASHC_X86)
    __builtin_cpu_init();
    if (k == &fc_cpu_kernels_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (k == &fc_cpu_kernels_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && fc_has_f16c();
#endif
    return k == &fc_cpu_kernels_scalar;
}

/* Whether dispatch may pick k by itself: vec16 only ever by name; avx512bf16 where its bf16
 * products pay (fc_dpbf16_full_rate).  It runs every other problem — fp32, fp16 — as avx512 does,
 * bit for bit (tests/native/test_sets_agree.c), so choosing it chooses the better set for each
 * problem dtype. */
static bool fc_isa_default(const fc_cpu_kernels *k)
{
#if defined(FLASHC_VEC16)
    if (k == &fc_cpu_kernels_vec16)
        return false;
#endif
#if defined(FLASHC_AVX512BF16)
    if (k == &fc_cpu_kernels_avx512bf16)
        return fc_dpbf16_full_rate();
#endif
    (void)k;
    return true;
}

static const fc_cpu_kernels *fc_isa_by_name(const char *name)
{
    const fc_cpu_kernels *all[] = {
#if defined(FLASHC_AMX)
        &fc_cpu_kernels_amx,
#endif
#if defined(FLASHC_AVX512BF16)
        &fc_cpu_kernels_avx512bf16,
#endif
#if defined(FLASHC_X86)
        &fc_cpu_kernels_avx512, &fc_cpu_kernels_avx2,
#endif
#if defined(FLASHC_NEONBF16)
        &fc_cpu_kernels_neonbf16,
#endif
#if defined(FLASHC_NEON)
        &fc_cpu_kernels_neon,
#endif
        &fc_cpu_kernels_scalar,
#if defined(FLASHC_VEC16)
        &fc_cpu_kernels_vec16,
#endif
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (name == NULL ? fc_isa_available(all[i]) && fc_isa_default(all[i]) : strcmp(name, all[i]->isa) == 0)
            return fc_isa_available(all[i]) ? all[i] : NULL;
    }
    return NULL;
}

const fc_cpu_kernels *fc_cpu_active(void)
{
    if (fc_forced)
        return fc_forced;
    static const fc_cpu_kernels *chosen;
    if (!chosen) {
        const char *env = getenv("FLASHC_ISA");
        const fc_cpu_kernels *k = env && *env ? fc_isa_by_name(env) : NULL;
        chosen = k ? k : fc_isa_by_name(NULL);
    }
    return chosen;
}

const char *fc_cpu_isa_name(void) { return fc_cpu_active()->isa; }

/* A FLASHC_ISA that names no kernel path this build has and this CPU runs fails every plan with a
 * message, rather than silently running (and timing) another path.  fc_cpu_force_isa() (fc_cpu_pin_isa) wins. */
fc_status fc_cpu_check_env(const char *fn)
{
    const char *env = getenv("FLASHC_ISA");
    if (fc_forced || !env || !*env || fc_isa_by_name(env))
        return FC_OK;
    return fc_fail(FC_ERR_BACKEND,
                   "%s: FLASHC_ISA=%.64s names no kernel path this build has and this CPU runs "
                   "(unset it for the default, %s; README lists the names)",
                   fn, env, fc_isa_by_name(NULL)->isa);
}

bool fc_cpu_pin_isa(const char *name)
{
    if (name == NULL) {
        fc_forced = NULL;
        return true;
    }
    const fc_cpu_kernels *k = fc_isa_by_name(name);
    if (k)
        fc_forced = k;
    return k != NULL;
}
