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
#include "report.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashc-bench [options]\n"
            "  --suite NAME      suite to run; repeatable or a comma list; 'all' = every suite but demo\n"
            "                    (default: demo)\n"
            "  --list            list the suites and their cases (after --filter) and exit\n"
            "  --filter SUBSTR   only the cases whose \"suite case\" text contains SUBSTR\n"
            "  --threads N       threads for flashc and the baseline (default: OpenMP's, %d here)\n"
            "  --repeat N        timed runs per case (default: 5, or the suite's own count)\n"
            "  --warmup N        untimed runs before them (default 1)\n"
            "  --isa NAME        force flashc's kernels: scalar, avx2 or avx512\n"
            "  --format F        stdout format: table (default), csv or json\n"
            "  --out FILE        also write the results to FILE: CSV if it ends in .csv, else JSON\n"
            "  --no-baseline     skip the unfused OpenBLAS baseline\n"
            "  --baseline-cap MIB  skip the baseline when its score buffers exceed MIB (default 2048)\n"
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
            const bool wanted = strcmp(name, "all") == 0 ? strcmp(all[i].name, "demo") != 0
                                                         : strcmp(name, all[i].name) == 0;
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

static bool ends_with(const char *s, const char *tail)
{
    const size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

int main(int argc, char **argv)
{
    enum { OPT_LIST = 256, OPT_NO_BASELINE, OPT_CAP, OPT_WARMUP };
    static const struct option longopts[] = {
        {"suite", required_argument, 0, 's'},   {"list", no_argument, 0, OPT_LIST},
        {"filter", required_argument, 0, 'f'},  {"threads", required_argument, 0, 't'},
        {"repeat", required_argument, 0, 'r'},  {"warmup", required_argument, 0, OPT_WARMUP},
        {"isa", required_argument, 0, 'i'},     {"format", required_argument, 0, 'F'},
        {"out", required_argument, 0, 'o'},     {"no-baseline", no_argument, 0, OPT_NO_BASELINE},
        {"baseline-cap", required_argument, 0, OPT_CAP}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    bench_config cfg = {.threads = omp_get_max_threads(), .repeat = 0, .warmup = 1, .baseline = true,
                        .baseline_cap = 2048.0 * (1 << 20)};
    selection sel = {.count = 0};
    const char *filter = NULL, *isa = NULL, *out = NULL;
    bench_format fmt = BENCH_FORMAT_TABLE;
    bool list = false;
    int opt, cap_mib;
    while ((opt = getopt_long(argc, argv, "s:f:t:r:i:F:o:h", longopts, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case 's': ok = select_suites(&sel, optarg); break;
        case 'f': filter = optarg; break;
        case 't': ok = parse_int(optarg, 1, 4096, &cfg.threads); break;
        case 'r': ok = parse_int(optarg, 1, 1000, &cfg.repeat); break;
        case OPT_WARMUP: ok = parse_int(optarg, 0, 1000, &cfg.warmup); break;
        case 'i': isa = optarg; break;
        case 'F': ok = bench_format_parse(optarg, &fmt); break;
        case 'o': out = optarg; break;
        case OPT_LIST: list = true; break;
        case OPT_NO_BASELINE: cfg.baseline = false; break;
        case OPT_CAP:
            ok = parse_int(optarg, 1, 1 << 22, &cap_mib);
            cfg.baseline_cap = (double)cap_mib * (1 << 20);
            break;
        case 'h': usage(stdout); return 0;
        default: opt = '?', ok = false; /* getopt has said what is wrong */
        }
        if (!ok) {
            if (opt != 's' && opt != '?')
                fprintf(stderr, "flashc-bench: bad value for an option%s%s\n", optarg ? ": " : "", optarg ? optarg : "");
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "flashc-bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (sel.count == 0)
        select_suites(&sel, list ? "demo,all" : "demo");
    if (isa && !fc_cpu_force_isa(isa)) {
        fprintf(stderr, "flashc-bench: --isa %s: not available on this CPU (or unknown)\n", isa);
        return 2;
    }

    /* The cases to run, described once (the description is what --filter matches). */
    size_t total = 0;
    for (size_t s = 0; s < sel.count; s++)
        total += sel.suites[s]->count;
    bench_result *res = calloc(total ? total : 1, sizeof *res);
    size_t n = 0;
    for (size_t s = 0; s < sel.count; s++)
        for (size_t i = 0; i < sel.suites[s]->count; i++) {
            bench_result *r = &res[n];
            r->suite = sel.suites[s]->name;
            r->c = &sel.suites[s]->cases[i];
            r->unit = bench_op_get(r->c->op)->unit;
            bench_case_describe(r->c, r->name, sizeof r->name);
            char text[256];
            snprintf(text, sizeof text, "%s %s", r->suite, r->name);
            if (!filter || strstr(text, filter))
                n++;
        }
    if (list) {
        const char *last = NULL;
        for (size_t i = 0; i < n; i++) {
            if (res[i].suite != last)
                printf("%s%s: %s\n", last ? "\n" : "", res[i].suite, bench_suite_find(res[i].suite)->about);
            last = res[i].suite;
            printf("  %s\n", res[i].name);
        }
        free(res);
        return 0;
    }
    if (n == 0) {
        fprintf(stderr, "flashc-bench: no case matches\n");
        free(res);
        return 2;
    }

    bench_meta meta = {.isa = fc_cpu_isa(), .threads = cfg.threads, .warmup = cfg.warmup, .repeat = cfg.repeat,
                       .blas = bench_blas_info(), .baseline_cap = cfg.baseline_cap};
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", FLASHC_VERSION_MAJOR, FLASHC_VERSION_MINOR, FLASHC_VERSION_PATCH);
    meta.version = version;
    machine(&meta, argc, argv);
    fprintf(stderr, "flashc-bench: %zu cases, isa %s, %d threads\n", n, meta.isa, cfg.threads);
    if (cfg.baseline && !bench_unfused_available())
        fprintf(stderr, "flashc-bench: built without OpenBLAS: no baseline, no ratios\n");

    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        bench_progress_start(i, n, &res[i]);
        res[i].failed = !bench_op_get(res[i].c->op)->measure(res[i].c, &cfg, &res[i]);
        failures += res[i].failed;
        bench_progress_done(&res[i]);
    }

    bench_report(stdout, fmt, &meta, res, n);
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            fprintf(stderr, "flashc-bench: cannot write %s\n", out);
            failures++;
        } else {
            bench_report(f, ends_with(out, ".csv") ? BENCH_FORMAT_CSV : BENCH_FORMAT_JSON, &meta, res, n);
            fclose(f);
            fprintf(stderr, "flashc-bench: results written to %s\n", out);
        }
    }
    free(res);
    return failures ? 1 : 0;
}
