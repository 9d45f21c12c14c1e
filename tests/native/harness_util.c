/* Sentinels, library-versus-library comparisons and the per-ISA test driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness_internal.h"

#define SENT_F32 0x7FC0DEADu
#define SENT_16 0x7FB5u

void *nt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

bool nt_is_sentinel(fc_dtype dt, const void *buf, int64_t k)
{
    if (dt == FC_I8) /* every byte is a valid int8 output: callers treat this as "maybe unwritten" */
        return ((const uint8_t *)buf)[k] == NT_SENT_I8;
    if (dt == FC_F32) {
        uint32_t u;
        memcpy(&u, (const char *)buf + 4 * k, 4);
        return u == SENT_F32;
    }
    uint16_t h;
    memcpy(&h, (const char *)buf + 2 * k, 2);
    return h == SENT_16;
}

void nt_fill_sentinel(fc_dtype dt, void *buf, int64_t n)
{
    if (dt == FC_I8) {
        memset(buf, NT_SENT_I8, (size_t)n);
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        if (dt == FC_F32)
            memcpy((char *)buf + 4 * k, &(uint32_t){SENT_F32}, 4);
        else
            memcpy((char *)buf + 2 * k, &(uint16_t){SENT_16}, 2);
    }
}


int64_t nt_compare_results(const char *what, const nt_result *a, const nt_result *b, const nt_case *c, bool stats)
{
    char label[160];
    const int64_t rows = (int64_t)c->B * c->N1 * a->S1cap;
    if (!TC_CHECK(a->S1cap == b->S1cap && a->Dv == b->Dv, "%s: results of different shapes", what))
        return 1;
    snprintf(label, sizeof label, "%s: out", what);
    int64_t bad = tc_compare(label, a->out, b->out, rows * a->Dv, c->out_dt == FC_I8 ? NT_I8_TOL : tc_tol_out(nt_tc(c->out_dt)), 1);
    if (stats) {
        snprintf(label, sizeof label, "%s: softmax max", what);
        bad += tc_compare(label, a->smax, b->smax, rows, tc_tol_max(), 1);
        snprintf(label, sizeof label, "%s: softmax sum", what);
        bad += tc_compare(label, a->ssum, b->ssum, rows, tc_tol_sum(), 1);
    }
    return bad;
}

void nt_same_data(const char *what, const nt_case *a, const nt_case *b, bool stats)
{
    nt_data d = nt_prepare(b);
    nt_result ra, rb;
    nt_execute(a, &d, &ra);
    nt_execute(b, &d, &rb);
    nt_compare_results(what, &rb, &ra, a, stats);
    nt_result_free(&ra), nt_result_free(&rb);
    nt_data_free(&d);
}

bool nt_bitwise_equal(const nt_result *a, const nt_result *b)
{
    if (a->out_bytes != b->out_bytes || memcmp(a->out_raw, b->out_raw, a->out_bytes) != 0)
        return false;
    if (a->stats_count != b->stats_count)
        return false;
    if (a->stats_count && (memcmp(a->stats_raw_max, b->stats_raw_max, a->stats_count * 4) != 0 ||
                           memcmp(a->stats_raw_sum, b->stats_raw_sum, a->stats_count * 4) != 0))
        return false;
    return true;
}

void nt_run_elsewhere(const nt_case *c, nt_runner_fn runner, int runs)
{
    nt_data d = nt_prepare(c);
    nt_run_elsewhere_on(c, &d, runner, runs);
    nt_data_free(&d);
}

void nt_run_elsewhere_on(const nt_case *c, const nt_data *d, nt_runner_fn runner, int runs)
{
    nt_result cpu, r[2];
    nt_runner = NULL;
    nt_execute(c, d, &cpu);
    nt_runner = runner;
    int64_t failed = 0;
    for (int k = 0; k < runs; k++)
        failed += nt_execute(c, d, &r[k]);
    nt_runner = NULL;
    if (failed == 0 && cpu.failures == 0) {
        TC_CHECK(runs < 2 || nt_bitwise_equal(&r[0], &r[1]), "two runs elsewhere are bitwise equal");
        if (nt_compare_results("elsewhere against the CPU backend", &r[0], &cpu, c, c->stats))
            nt_describe(c);
    }
    nt_result_free(&cpu);
    for (int k = 0; k < runs; k++)
        nt_result_free(&r[k]);
}

nt_case nt_sparse_fixture(uint64_t seed, int bs, bool causal, fc_dtype idt)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 24, c.Dv = 16;
    c.Sq = 9, c.Skv = 5 * bs + 3;
    c.layout = NT_BSND;
    c.stats = true, c.stats_order = FC_STATS_KV_GROUP;
    c.sparse = (nt_sparse_spec){.on = true, .dtype = idt, .count = 6, .block_size = bs, .causal = causal,
                                .end_p = 0.12, .dup_p = 0.15, .late_p = 0.15};
    return c;
}

int nt_other_threads(void)
{
    const char *env = getenv("FLASHC_TEST_THREADS");
    const long n = env ? strtol(env, NULL, 10) : 2;
    return n >= 2 && n <= 1024 ? (int)n : 2;
}

void nt_check_threads(nt_case *c, const nt_data *d)
{
    nt_result r1, r2;
    c->threads = 1;
    nt_execute(c, d, &r1);
    c->threads = nt_other_threads();
    nt_execute(c, d, &r2);
    TC_CHECK(nt_bitwise_equal(&r1, &r2), "outputs or statistics differ between 1 and %d threads", c->threads);
    nt_result_free(&r1), nt_result_free(&r2);
}

void nt_run_threads(nt_case *c)
{
    nt_data d = nt_prepare(c);
    nt_check_threads(c, &d);
    nt_data_free(&d);
}

int nt_main(int argc, char **argv, const char *name, void (*body)(void))
{
    const char *isa = argc > 1 ? argv[1] : NULL;
    if (isa && !fc_cpu_force_isa(isa)) {
        printf("%s: the %s kernels are not available on this CPU; skipped\n", name, isa);
        return TC_SKIP;
    }
    char full[128];
    snprintf(full, sizeof full, "%s[%s]", name, fc_cpu_isa());
    body();
    return tc_summary(full);
}
