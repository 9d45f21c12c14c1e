/*
 * flashc-bench: runs named suites of operator cases, prints flashc's rate next to an unfused
 * OpenBLAS baseline measured in the same run, and can write a CSV/JSON result file.
 *
 *   flashc-bench --suite demo
 *   flashc-bench --suite prefill-fp32,causal --repeat 7 --out results.json
 */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "bench.h"
#include "blas_core.h"
#include "data.h"
#include "filter.h"
#include "peak.h"
#include "report.h"
#ifdef FLASHC_BENCH_CUDA
#include "cuda.h"
#endif
#include "timer.h"

clockid_t bench_clock = CLOCK_MONOTONIC;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashc-bench [options]\n"
            "  --suite NAME      suite to run; repeatable or a comma list; 'all' = all but demo and smoke\n"
            "                    (default: demo)\n"
            "  --list            list the suites and their cases (after --filter) and exit\n"
            "  --filter SUBSTR   only the cases whose \"suite case\" text contains SUBSTR (a trailing $: ends with it)\n"
            "  --threads N       threads for flashc and the baseline (default: OpenMP's, %d here)\n"
            "  --repeat N        timed runs per case (default: 5, or the suite's own count)\n"
            "  --warmup N        untimed runs before them (default 1)\n"
            "  --cpu-time        time by the process's CPU time, not the wall clock (a loaded machine,\n"
            "                    1 thread; at more threads it adds the threads up)\n"
            "  --huge-pages      operands of 2 MiB and more on transparent huge pages (Linux madvise):\n"
            "                    no page walk per kv row where rows lie a page apart (BSND, TND)\n"
            "  --isa NAME        force flashc's kernels: scalar, avx2, avx512, avx512bf16, amx, neon or vec16\n"
            "  --backend cuda    the GPU forward suite instead (CUDA events; --filter, --repeat)\n"
            "  --format F        stdout format: table (default), csv or json\n"
            "  --out FILE        also write the results to FILE: CSV if it ends in .csv, else JSON\n"
            "  --no-baseline     skip the unfused OpenBLAS baseline\n"
            "  --baseline-cap MIB  skip the baseline when its score buffers exceed MIB (default 2048)\n"
            "  --blas-best-core  print the OpenBLAS core to ask for on this CPU (OPENBLAS_CORETYPE) and exit\n"
            "  --help\n",
            omp_get_max_threads());
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    const long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* The selected suites, in the order asked, each once. */
typedef struct selection {
    const bench_suite *suites[32];
    size_t count;
} selection;

static bool select_suites(selection *sel, const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        size_t n;
        const bench_suite *all = bench_suites(&n);
        for (size_t i = 0; i < n; i++) {
            const bool wanted = strcmp(name, "all") == 0 ? all[i].in_all : strcmp(name, all[i].name) == 0;
            bool seen = false;
            for (size_t j = 0; j < sel->count; j++)
                seen |= sel->suites[j] == &all[i];
            if (wanted && !seen && sel->count < sizeof sel->suites / sizeof sel->suites[0])
                sel->suites[sel->count++] = &all[i];
        }
        if (strcmp(name, "all") != 0 && !bench_suite_find(name)) {
            fprintf(stderr, "flashc-bench: no suite named '%s' (--list shows them)\n", name);
            return false;
        }
    }
    return true;
}

static void machine(bench_meta *m, int argc, char **argv)
{
    snprintf(m->cpu, sizeof m->cpu, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon[strcspn(colon, "\n")] = 0;
            snprintf(m->cpu, sizeof m->cpu, "%s", colon + 2);
            break;
        }
    }
    if (f)
        fclose(f);
    const time_t now = time(NULL);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M %Z", localtime(&now));
    size_t used = 0;
    for (int i = 0; i < argc && used < sizeof m->command; i++)
        used += (size_t)snprintf(m->command + used, sizeof m->command - used, "%s%s", i ? " " : "", argv[i]);
}

/* Other people's work on a shared machine shows up here; the report records it. */
static double load_average(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Everything the command line sets. */
typedef struct cli {
    bench_config cfg;
    selection sel;
    const char *filter, *isa, *out;
    bench_format fmt;
    bool list;
    bool huge_pages; /* --huge-pages, where the system takes it */
} cli;

/* Returns 0 to go on, or the exit status (0 after --help, 2 on a bad command line). */
static int parse_args(int argc, char **argv, cli *o)
{
    enum { OPT_LIST = 256, OPT_NO_BASELINE, OPT_CAP, OPT_WARMUP, OPT_BEST_CORE, OPT_CPU_TIME, OPT_HUGE_PAGES };
    static const struct option longopts[] = {
        {"suite", required_argument, 0, 's'},   {"list", no_argument, 0, OPT_LIST},
        {"filter", required_argument, 0, 'f'},  {"threads", required_argument, 0, 't'},
        {"repeat", required_argument, 0, 'r'},  {"warmup", required_argument, 0, OPT_WARMUP},
        {"isa", required_argument, 0, 'i'},     {"format", required_argument, 0, 'F'},
        {"out", required_argument, 0, 'o'},     {"no-baseline", no_argument, 0, OPT_NO_BASELINE},
        {"baseline-cap", required_argument, 0, OPT_CAP}, {"help", no_argument, 0, 'h'},
        {"blas-best-core", no_argument, 0, OPT_BEST_CORE}, {"cpu-time", no_argument, 0, OPT_CPU_TIME},
        {"huge-pages", no_argument, 0, OPT_HUGE_PAGES}, {0, 0, 0, 0}};
    int opt, cap_mib, which = -1;
    while ((opt = getopt_long(argc, argv, "s:f:t:r:i:F:o:h", longopts, &which)) != -1) {
        bool ok = true;
        switch (opt) {
        case 's': ok = select_suites(&o->sel, optarg); break;
        case 'f': o->filter = optarg; break;
        case 't': ok = parse_int(optarg, 1, 4096, &o->cfg.threads); break;
        case 'r': ok = parse_int(optarg, 1, BENCH_MAX_REPEAT, &o->cfg.repeat); break;
        case OPT_WARMUP: ok = parse_int(optarg, 0, 1000, &o->cfg.warmup); break;
        case 'i': o->isa = optarg; break;
        case 'F': ok = bench_format_parse(optarg, &o->fmt); break;
        case 'o': o->out = optarg; break;
        case OPT_LIST: o->list = true; break;
        case OPT_CPU_TIME: bench_clock = CLOCK_PROCESS_CPUTIME_ID; break;
        case OPT_HUGE_PAGES:
            if (!(o->huge_pages = bench_alloc_huge_pages()))
                fprintf(stderr, "flashc-bench: --huge-pages: no madvise(MADV_HUGEPAGE) here; 4 KB pages\n");
            break;
        case OPT_NO_BASELINE: o->cfg.baseline = false; break;
        case OPT_CAP:
            ok = parse_int(optarg, 1, 1 << 22, &cap_mib);
            o->cfg.baseline_cap = (double)cap_mib * (1 << 20);
            break;
        case 'h': usage(stdout); return 0;
        case OPT_BEST_CORE: puts(bench_blas_best_core()); return 0;
        default: opt = '?', ok = false; /* getopt has said what is wrong */
        }
        if (!ok) {
            if (opt != 's' && opt != '?') { /* select_suites has said it */
                char name[40] = {'-', (char)opt, 0};
                if (which >= 0)
                    snprintf(name, sizeof name, "--%s", longopts[which].name);
                fprintf(stderr, "flashc-bench: bad value for %s: '%s'\n", name, optarg ? optarg : "");
            }
            usage(stderr);
            return 2;
        }
        which = -1;
    }
    if (optind < argc) {
        fprintf(stderr, "flashc-bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (o->sel.count == 0)
        select_suites(&o->sel, o->list ? "demo,all,smoke" : "demo");
    return -1;
}

/* The cases of the selected suites that pass the filter, described once (the description is
 * what --filter matches).  Returns NULL when out of memory. */
static bench_result *collect_cases(const cli *o, size_t *count)
{
    size_t total = 0, n = 0;
    for (size_t s = 0; s < o->sel.count; s++)
        total += o->sel.suites[s]->count;
    bench_result *res = calloc(total ? total : 1, sizeof *res);
    for (size_t s = 0; res && s < o->sel.count; s++)
        for (size_t i = 0; i < o->sel.suites[s]->count; i++) {
            bench_result *r = &res[n]; /* overwritten by the next case unless kept */
            r->suite = o->sel.suites[s]->name;
            r->c = &o->sel.suites[s]->cases[i];
            r->unit = bench_op_get(r->c->op)->unit;
            bench_case_describe(r->c, r->name, sizeof r->name);
            char text[256];
            snprintf(text, sizeof text, "%s %s", r->suite, r->name);
            if (!o->filter || bench_filter_matches(text, o->filter))
                n++;
        }
    *count = n;
    return res;
}

static void list_cases(const bench_result *res, size_t n)
{
    const char *last = NULL;
    for (size_t i = 0; i < n; i++) {
        if (res[i].suite != last)
            printf("%s%s: %s\n", last ? "\n" : "", res[i].suite, bench_suite_find(res[i].suite)->about);
        last = res[i].suite;
        printf("  %s\n", res[i].name);
    }
}

/* Runs every case with progress on stderr; returns the number that failed or whose output
 * disagrees with the baseline's. */
static int run_cases(const bench_config *cfg, bench_result *res, size_t n)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        bench_progress_start(i, n, &res[i]);
        res[i].failed = !bench_op_get(res[i].c->op)->measure(res[i].c, cfg, &res[i]);
        failures += res[i].failed || res[i].mismatch;
        bench_progress_done(&res[i]);
    }
    return failures;
}

static bool write_file(const char *path, const bench_meta *meta, const bench_result *res, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "flashc-bench: cannot write %s\n", path);
        return false;
    }
    bench_report(f, ends_with(path, ".csv") ? BENCH_FORMAT_CSV : BENCH_FORMAT_JSON, meta, res, n);
    const bool ok = fclose(f) == 0;
    fprintf(stderr, ok ? "flashc-bench: results written to %s\n" : "flashc-bench: error writing %s\n", path);
    return ok;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) /* --backend cuda: the GPU suite (bench/cuda.c) */
        if (strcmp(argv[i], "--backend") == 0) {
#ifdef FLASHC_BENCH_CUDA
            if (strcmp(argv[i + 1], "cuda") == 0)
                return bench_cuda_main(argc, argv);
#endif
            fprintf(stderr, "flashc-bench: --backend %s: not built in (the CPU suites run without --backend)\n", argv[i + 1]);
            return 2;
        }
    cli o = {.cfg = {.threads = omp_get_max_threads(), .repeat = 0, .warmup = 1, .baseline = true,
                     .baseline_cap = 2048.0 * (1 << 20)},
             .fmt = BENCH_FORMAT_TABLE};
    const int st = parse_args(argc, argv, &o);
    if (st >= 0)
        return st;
    if (o.isa && !fc_cpu_force_isa(o.isa)) {
        fprintf(stderr, "flashc-bench: --isa %s: not available on this CPU (or unknown)\n", o.isa);
        return 2;
    }
    size_t n;
    bench_result *res = collect_cases(&o, &n);
    if (!res) {
        fprintf(stderr, "flashc-bench: out of memory\n");
        return 1;
    }
    if (o.list || n == 0) {
        if (n == 0)
            fprintf(stderr, "flashc-bench: no case matches\n");
        else
            list_cases(res, n);
        free(res);
        return n == 0 ? 2 : 0;
    }

    bench_meta meta = {.isa = fc_cpu_isa(), .threads = o.cfg.threads, .warmup = o.cfg.warmup,
                       .repeat = o.cfg.repeat, .blas = bench_blas_info(), .baseline_cap = o.cfg.baseline_cap};
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", FLASHC_VERSION_MAJOR, FLASHC_VERSION_MINOR, FLASHC_VERSION_PATCH);
    meta.version = version;
    machine(&meta, argc, argv);
    char blas_warning[400];
    meta.blas_warning = bench_blas_core_warning(o.cfg.baseline ? bench_blas_core() : NULL, blas_warning,
                                                sizeof blas_warning);
    fprintf(stderr, "flashc-bench: %zu cases, isa %s, %d threads\n", n, meta.isa, o.cfg.threads);
    if (o.cfg.baseline && !bench_unfused_available())
        fprintf(stderr, "flashc-bench: built without OpenBLAS: no baseline, no ratios\n");
    if (meta.blas_warning[0])
        fprintf(stderr, "flashc-bench: %s\n", meta.blas_warning);

    meta.load_start = load_average();
    meta.cpu_time = bench_clock == CLOCK_PROCESS_CPUTIME_ID;
    meta.huge_pages = o.huge_pages;
    /* the peak before and after the cases: the higher one (the load may have changed meanwhile) */
    bench_peak before, after;
    if (bench_fma_peak(meta.isa, o.cfg.threads, &before)) {
        fprintf(stderr, "flashc-bench: register-only FMA peak %.1f GFLOP/s (%d lanes)\n", before.gflops, before.lanes);
        meta.peak = before;
    }
    int failures = run_cases(&o.cfg, res, n);
    if (meta.peak.gflops > 0 && bench_fma_peak(meta.isa, o.cfg.threads, &after) && after.gflops > meta.peak.gflops)
        meta.peak = after;
    meta.load_end = load_average();
    bench_report(stdout, o.fmt, &meta, res, n);
    if (o.out && !write_file(o.out, &meta, res, n))
        failures++;
    free(res);
    return failures ? 1 : 0;
}
