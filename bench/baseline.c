/* The unfused OpenBLAS reference (see baseline.h). */
#include "baseline.h"

#include <math.h>
#include <stdio.h>

#ifdef FLASHC_BENCH_OPENBLAS
#include <cblas.h>
#include <omp.h>

bool bench_unfused_available(void) { return true; }

const char *bench_blas_core(void) { return openblas_get_corename(); }

const char *bench_blas_info(void)
{
    static char info[200];
    snprintf(info, sizeof info, "%s (%s core), 1 thread per (batch, head)", openblas_get_config(),
             openblas_get_corename());
    return info;
}

/* The softmax a user would write with libm's expf.  This file is built with -ffast-math so that
 * GCC may call glibc's vector expf; the clones pick AVX2 where the CPU has it, so the baseline is
 * not handicapped by a scalar exp.  Hidden columns are written as zeros rather than computed
 * as exp(-inf), which also keeps -ffinite-math-only honest. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
static void softmax_row(float *s, int64_t visible, int64_t n)
{
    float mx = s[0];
    for (int64_t j = 1; j < visible; j++)
        mx = s[j] > mx ? s[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; j++) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < visible; j++)
        s[j] *= inv;
    for (int64_t j = visible; j < n; j++)
        s[j] = 0.0f;
}

static int64_t max_len(const int64_t *lens, int64_t n)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        m = lens[i] > m ? lens[i] : m;
    return m;
}

size_t bench_unfused_scratch_bytes(const bench_unfused *p, int threads)
{
    return (size_t)threads * (size_t)max_len(p->q_lens, p->batch) * (size_t)max_len(p->kv_lens, p->batch) *
           sizeof(float);
}

static void one_head(const bench_unfused *p, int64_t b, int64_t n, float *s)
{
    const int64_t sq = p->q_lens[b], skv = p->kv_lens[b], d = p->head_dim;
    if (sq == 0)
        return;
    const int64_t kvn = n / (p->q_heads / p->kv_heads);
    const float *q = p->q + p->q_base[b] + n * p->q_sh;
    const float *k = p->k + p->kv_base[b] + kvn * p->kv_sh;
    const float *v = p->v + p->kv_base[b] + kvn * p->kv_sh;
    float *o = p->out + p->q_base[b] + n * p->q_sh;
    if (skv == 0) { /* nothing visible: zeros, like flashc */
        for (int64_t i = 0; i < sq; i++)
            for (int64_t e = 0; e < d; e++)
                o[i * p->q_ss + e] = 0.0f;
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)sq, (int)skv, (int)d, p->scale, q, (int)p->q_ss, k,
                (int)p->kv_ss, 0.0f, s, (int)skv);
    for (int64_t i = 0; i < sq; i++) {
        const int64_t visible = p->causal ? (i + 1 < skv ? i + 1 : skv) : skv;
        softmax_row(s + i * skv, visible, skv);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)sq, (int)d, (int)skv, 1.0f, s, (int)skv, v,
                (int)p->kv_ss, 0.0f, o, (int)p->q_ss);
}

bool bench_unfused_run(const bench_unfused *p, int threads, float *scratch)
{
    openblas_set_num_threads(1);
    const size_t per_thread = bench_unfused_scratch_bytes(p, 1) / sizeof(float);
    const int64_t items = p->batch * p->q_heads;
#pragma omp parallel num_threads(threads)
    {
        float *s = scratch + (size_t)omp_get_thread_num() * per_thread;
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++)
            one_head(p, it / p->q_heads, it % p->q_heads, s);
    }
    return true;
}

#else /* no OpenBLAS: the bench still runs, without the reference */

bool bench_unfused_available(void) { return false; }
const char *bench_blas_info(void) { return "none (OpenBLAS was not found at build time)"; }
const char *bench_blas_core(void) { return NULL; }
size_t bench_unfused_scratch_bytes(const bench_unfused *p, int threads)
{
    (void)p, (void)threads;
    return 0;
}

bool bench_unfused_run(const bench_unfused *p, int threads, float *scratch)
{
    (void)p, (void)threads, (void)scratch;
    return false;
}

#endif
