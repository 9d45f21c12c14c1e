/* Result formats.  Rates use the min time; the median is printed to show the noise. */
#include "report.h"

#include <string.h>

bool bench_format_parse(const char *name, bench_format *out)
{
    static const char *names[] = {"table", "csv", "json"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (bench_format)i;
            return true;
        }
    return false;
}

static double rate(const bench_result *r, double seconds) { return seconds > 0 ? r->work / seconds * 1e-9 : 0; }
static double base_rate(const bench_result *r)
{
    const double work = r->base_work > 0 ? r->base_work : r->work;
    return r->base_min > 0 ? work / r->base_min * 1e-9 : 0;
}

/* The flashc rate as a fraction of the run's FMA peak (FLOP rates only; 0: none). */
static double of_peak(const bench_meta *m, const bench_result *r)
{
    return m->peak.gflops > 0 && !r->failed && strcmp(r->unit, "GFLOP/s") == 0 && r->flashc_min > 0
               ? rate(r, r->flashc_min) / m->peak.gflops
               : 0;
}

static double ratio(const bench_result *r)
{
    /* a ratio of rates: of times when both did the same work */
    return r->has_baseline && r->flashc_min > 0 && base_rate(r) > 0 ? rate(r, r->flashc_min) / base_rate(r) : 0;
}

void bench_progress_start(size_t i, size_t n, const bench_result *r)
{
    fprintf(stderr, "[%zu/%zu] %s %s ...\n", i + 1, n, r->suite, r->name);
}

void bench_progress_done(const bench_result *r)
{
    if (r->failed) {
        fprintf(stderr, "        FAILED: %s\n", r->note);
        return;
    }
    fprintf(stderr, "        flashc %.1f %s", rate(r, r->flashc_min), r->unit);
    if (r->has_baseline)
        fprintf(stderr, ", baseline %.1f, ratio %.2f", base_rate(r), ratio(r));
    if (r->note[0])
        fprintf(stderr, " (%s)", r->note);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------------------------------------- */

void bench_work_column(const char *unit, char *buf, size_t size)
{
    const char *name = strcmp(unit, "rate") ? unit : "G-work";
    snprintf(buf, size, "%.*s", (int)strcspn(name, "/"), name);
}

/* "min (median)" in ms with three significant-ish digits for tiny and large times alike. */
static void ms_pair(char *buf, size_t size, double min_s, double median_s)
{
    const double a = min_s * 1e3, b = median_s * 1e3;
    const int digits = a >= 100 ? 1 : a >= 1 ? 2 : 3;
    snprintf(buf, size, "%.*f (%.*f)", digits, a, digits, b);
}

/* What each kind of row in the table is compared with: only the kinds present are named (a ring
 * run's rows compare against one flashc process, not OpenBLAS). */
static void baselines(FILE *f, const bench_meta *m, const bench_result *r, size_t n)
{
    bool dense = false, decode = false, sparse = false, ring = false;
    for (size_t i = 0; i < n; i++) {
        const bench_op_kind op = r[i].c->op;
        dense |= op == BENCH_OP_FORWARD || op == BENCH_OP_BACKWARD;
        decode |= op == BENCH_OP_DECODE;
        sparse |= op == BENCH_OP_SPARSE_FWD || op == BENCH_OP_SPARSE_BWD;
        ring |= op == BENCH_OP_RING;
    }
    if (dense) {
        fprintf(f, "baseline: unfused sgemm + softmax + sgemm, fp32, %s\n", m->blas);
        if (m->blas_warning && m->blas_warning[0])
            fprintf(f, "%s\n", m->blas_warning);
    }
    if (decode)
        fprintf(f, "baseline of decode: a plain read of the same bytes\n");
    if (sparse)
        fprintf(f, "baseline of sparse: flashc's dense forward / backward on the same shape\n");
    if (ring)
        fprintf(f, "baseline of ring: the whole problem in one flashc process with all the ranks' threads "
                   "(ratio = the ring's parallel efficiency)\n");
}

static void table(FILE *f, const bench_meta *m, const bench_result *r, size_t n)
{
    int wsuite = 5, wcase = 4;
    for (size_t i = 0; i < n; i++) {
        const int a = (int)strlen(r[i].suite), b = (int)strlen(r[i].name);
        wsuite = a > wsuite ? a : wsuite;
        wcase = b > wcase ? b : wcase;
    }
    fprintf(f, "flashc %s bench, %s, isa %s, %d threads, %s\n", m->version, m->date, m->isa, m->threads, m->cpu);
    baselines(f, m, r, n);
    fprintf(f, "load average (1 min) before / after: %.2f / %.2f on a machine others share\n", m->load_start,
            m->load_end);
    if (m->huge_pages)
        fprintf(f, "operands of 2 MiB and more on transparent huge pages (--huge-pages)\n");
    if (m->peak.gflops > 0)
        fprintf(f, "register-only FMA peak (fp32, %d lanes, %d threads) of this run: %.1f GFLOP/s; peak = flashc rate / it\n",
                m->peak.lanes, m->threads, m->peak.gflops);
    fprintf(f, "rates: FLOPs over visible positions (4*Sq*Skv*D per head) / min %s of the timed runs;\n"
               "ms: min (median); ratio = flashc rate / baseline rate (> 1: flashc is faster)\n\n",
            m->cpu_time ? "CPU time (--cpu-time)" : "time");
    /* Column names follow the unit ("GFLOP/s" now, "GB/s" for decode later); mixed units: "rate". */
    const char *unit = n ? r[0].unit : "GFLOP/s";
    for (size_t i = 0; i < n; i++)
        unit = strcmp(unit, r[i].unit) == 0 ? unit : "rate";
    char work[16];
    bench_work_column(unit, work, sizeof work);
    fprintf(f, "%-*s  %-*s  %8s  %19s  %8s  %5s  %19s  %8s  %6s  %8s\n", wsuite, "suite", wcase, "case", work,
            "flashc ms", unit, "peak", "baseline ms", unit, "ratio", "max|err|");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        fprintf(f, "%-*s  %-*s  %8.2f  ", wsuite, x->suite, wcase, x->name, x->work * 1e-9);
        if (x->failed) {
            fprintf(f, "FAILED: %s\n", x->note);
            continue;
        }
        char t[2][40];
        ms_pair(t[0], sizeof t[0], x->flashc_min, x->flashc_median);
        fprintf(f, "%19s  %8.1f  ", t[0], rate(x, x->flashc_min));
        if (of_peak(m, x) > 0)
            fprintf(f, "%5.2f  ", of_peak(m, x));
        else
            fprintf(f, "%5s  ", "-");
        if (x->has_baseline) {
            ms_pair(t[1], sizeof t[1], x->base_min, x->base_median);
            fprintf(f, "%19s  %8.1f  %6.2f  %8.1e%s%s\n", t[1], base_rate(x), ratio(x), x->max_abs_err,
                    x->note[0] ? "  " : "", x->note);
        } else {
            fprintf(f, "%19s  %8s  %6s  %8s  %s\n", "-", "-", "-", "-", x->note);
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */

static const char *dtype_name(fc_dtype t) { return t == FC_F16 ? "f16" : t == FC_BF16 ? "bf16" : "f32"; }

static void lens_text(const bench_case *c, char *buf, size_t size, const char *sep)
{
    buf[0] = 0;
    const int64_t nb = c->lens[0] ? bench_case_batches(c) : 0;
    for (int64_t b = 0, used = 0; b < nb && (size_t)used < size; b++)
        used += snprintf(buf + used, size - (size_t)used, "%s%lld", b ? sep : "", (long long)c->lens[b]);
}

static void csv(FILE *f, const bench_meta *m, const bench_result *r, size_t n)
{
    fprintf(f, "suite,case,op,dtype,batch,q_heads,kv_heads,q_len,kv_len,head_dim,causal,varlen_lens,work,unit,runs,"
               "flashc_min_s,flashc_median_s,flashc_rate,of_fma_peak,baseline_min_s,baseline_median_s,baseline_rate,ratio,"
               "max_abs_err,note\n");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        const bench_case *c = x->c;
        char lens[200];
        lens_text(c, lens, sizeof lens, ";");
        fprintf(f, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%s,%.17g,%s,%d,%.6g,%.6g,%.6g,", x->suite, x->name,
                bench_op_get(c->op)->name, dtype_name(c->dtype), (long long)bench_case_batches(c),
                (long long)c->q_heads, (long long)c->kv_heads, (long long)(c->lens[0] ? 0 : c->q_len),
                (long long)(c->lens[0] ? 0 : c->kv_len), (long long)c->head_dim, c->causal, lens, x->work, x->unit,
                x->runs, x->flashc_min, x->flashc_median, rate(x, x->flashc_min));
        if (of_peak(m, x) > 0)
            fprintf(f, "%.4f", of_peak(m, x));
        fputc(',', f);
        if (x->has_baseline)
            fprintf(f, "%.6g,%.6g,%.6g,%.4f,%.3g,", x->base_min, x->base_median, base_rate(x), ratio(x),
                    x->max_abs_err);
        else
            fprintf(f, ",,,,,");
        fprintf(f, "\"%s\"\n", x->note); /* notes never hold a double quote */
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity: a broken output shows as null. */
static void json_number(FILE *f, double x)
{
    if (x == x && x - x == 0)
        fprintf(f, "%.3g", x);
    else
        fprintf(f, "null");
}

static void json(FILE *f, const bench_meta *m, const bench_result *r, size_t n)
{
    fprintf(f, "{\n  \"meta\": {\"version\": ");
    json_string(f, m->version);
    fprintf(f, ", \"date\": ");
    json_string(f, m->date);
    fprintf(f, ", \"cpu\": ");
    json_string(f, m->cpu);
    fprintf(f, ", \"isa\": ");
    json_string(f, m->isa);
    fprintf(f, ", \"threads\": %d, \"warmup\": %d, \"repeat\": %d,\n    \"baseline\": ", m->threads, m->warmup,
            m->repeat);
    json_string(f, m->blas);
    if (m->blas_warning && m->blas_warning[0]) {
        fprintf(f, ", \"baseline_warning\": ");
        json_string(f, m->blas_warning);
    }
    fprintf(f, ", \"baseline_cap_bytes\": %.0f, \"load_start\": %.2f, \"load_end\": %.2f, \"clock\": \"%s\", ",
            m->baseline_cap, m->load_start, m->load_end, m->cpu_time ? "cpu" : "wall");
    fprintf(f, "\"huge_pages\": %s, ", m->huge_pages ? "true" : "false");
    if (m->peak.gflops > 0)
        fprintf(f, "\"fma_peak\": {\"gflops\": %.6g, \"lanes\": %d}, ", m->peak.gflops, m->peak.lanes);
    fprintf(f, "\"command\": ");
    json_string(f, m->command);
    fprintf(f, ",\n    \"flops\": \"4*Sq*Skv*D per head over visible positions\", \"rate\": \"work / min time\"},\n"
               "  \"results\": [");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        const bench_case *c = x->c;
        char lens[200];
        lens_text(c, lens, sizeof lens, ", ");
        fprintf(f, "%s\n    {\"suite\": ", i ? "," : "");
        json_string(f, x->suite);
        fprintf(f, ", \"case\": ");
        json_string(f, x->name);
        fprintf(f, ", \"op\": \"%s\", \"dtype\": \"%s\", \"batch\": %lld, \"q_heads\": %lld, \"kv_heads\": %lld, ",
                bench_op_get(c->op)->name, dtype_name(c->dtype), (long long)bench_case_batches(c),
                (long long)c->q_heads, (long long)c->kv_heads);
        if (c->lens[0])
            fprintf(f, "\"varlen_lens\": [%s], ", lens);
        else
            fprintf(f, "\"q_len\": %lld, \"kv_len\": %lld, ", (long long)c->q_len, (long long)c->kv_len);
        fprintf(f, "\"head_dim\": %lld, \"causal\": %s,\n     \"work\": %.17g, \"unit\": \"%s\", \"ok\": %s",
                (long long)c->head_dim, c->causal ? "true" : "false", x->work, x->unit, x->failed ? "false" : "true");
        if (!x->failed)
            fprintf(f, ", \"runs\": %d, \"flashc\": {\"min_s\": %.6g, \"median_s\": %.6g, \"rate\": %.6g}", x->runs,
                    x->flashc_min, x->flashc_median, rate(x, x->flashc_min));
        if (of_peak(m, x) > 0)
            fprintf(f, ", \"of_fma_peak\": %.4f", of_peak(m, x));
        if (x->has_baseline)
            fprintf(f, ",\n     \"baseline\": {\"min_s\": %.6g, \"median_s\": %.6g, \"rate\": %.6g}, \"ratio\": %.4f, "
                       "\"max_abs_err\": ",
                    x->base_min, x->base_median, base_rate(x), ratio(x));
        if (x->has_baseline)
            json_number(f, x->max_abs_err);
        if (x->note[0]) {
            fprintf(f, ", \"note\": ");
            json_string(f, x->note);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ]\n}\n");
}

void bench_report(FILE *f, bench_format fmt, const bench_meta *m, const bench_result *r, size_t n)
{
    if (fmt == BENCH_FORMAT_CSV)
        csv(f, m, r, n);
    else if (fmt == BENCH_FORMAT_JSON)
        json(f, m, r, n);
    else
        table(f, m, r, n);
}
