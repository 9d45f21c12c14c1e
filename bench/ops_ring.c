/*
 * Ring attention (flashc_mpi) under mpirun.  Every rank holds its shard of one sequence; the case
 * times, in turns: the ring forward (slowest rank), the whole problem in one process (rank 0) with
 * all the ranks' threads, and the ring's key/value exchange alone.  Reported: the ring's rate
 * against the one-process rate (their ratio is the parallel efficiency), time per ring step, and
 * how much of the exchange the compute hid.  Ranks other than 0 print nothing (stdout and stderr).
 * The ring runs with mpirun's binding (by default each rank on its own core: what a user runs); the
 * one-process baseline widens rank 0 to every online core for its run (and its OpenMP threads).
 */
#define _GNU_SOURCE /* sched_{get,set}affinity: the baseline runs on every core whatever mpirun bound */
#include <stdio.h>

#include "bench.h"

#ifndef FLASHC_BENCH_RING
bool bench_ring_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    snprintf(r->note, sizeof r->note, "flashc-bench was built without MPI (flashc_mpi)");
    return false;
}
#else
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flashc_mpi.h"
#include "timer.h"

static void ring_finalize(void) { MPI_Finalize(); }

static void ring_mpi_start(int *rank, int *ranks)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        MPI_Init(NULL, NULL);
        atexit(ring_finalize);
        MPI_Comm_rank(MPI_COMM_WORLD, rank);
        if (*rank != 0 && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)))
            exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
}

/* Collectives that sleep while they wait (OpenMPI's blocking ones spin): a rank that is done must
 * not take a core from one still working. */
static void quiet_wait(MPI_Request *req)
{
    for (int done = 0; MPI_Test(req, &done, MPI_STATUS_IGNORE), !done;)
        nanosleep(&(struct timespec){0, 200000}, NULL);
}

static void quiet_barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    quiet_wait(&req);
}

static double reduce_over_ranks(double v, MPI_Op op)
{
    double m = v;
    MPI_Request req;
    MPI_Iallreduce(&v, &m, 1, MPI_DOUBLE, op, MPI_COMM_WORLD, &req);
    quiet_wait(&req);
    return m;
}

static double max_over_ranks(double v) { return reduce_over_ranks(v, MPI_MAX); }

/* CPU time of this process (all its threads): load from other processes does not inflate it. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs the plan on every online core, then gives this thread its own binding back; returns the
 * cores it had (0 when unknown). */
static int run_on_all_cores(fc_plan *plan, void *ws, size_t ws_bytes)
{
    cpu_set_t mine, all;
    const bool known = sched_getaffinity(0, sizeof mine, &mine) == 0;
    CPU_ZERO(&all);
    for (long k = 0, n = sysconf(_SC_NPROCESSORS_ONLN); k < n && k < CPU_SETSIZE; k++)
        CPU_SET((int)k, &all);
    const bool widened = known && sched_setaffinity(0, sizeof all, &all) == 0;
    fc_plan_run(plan, NULL, ws, ws_bytes);
    if (widened)
        sched_setaffinity(0, sizeof mine, &mine);
    return known ? CPU_COUNT(widened ? &all : &mine) : 0;
}

static void *random_data(fc_dtype dt, int64_t n, unsigned seed)
{
    const size_t es = fc_dtype_size(dt);
    char *p = malloc((size_t)n * es);
    uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (int64_t k = 0; k < n; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const float f = (float)((double)(x >> 11) / 9007199254740992.0 * 2 - 1);
        if (dt == FC_BF16) {
            const uint16_t h = fc_f32_to_bf16(f);
            memcpy(p + k * es, &h, 2);
        } else if (dt == FC_F16) {
            const uint16_t h = fc_f32_to_f16(f);
            memcpy(p + k * es, &h, 2);
        } else {
            memcpy(p + k * es, &f, 4);
        }
    }
    return p;
}

/* This rank's rows of a gathered [N][S][D] tensor, back to back. */
static void *take_rows(const void *g, fc_dtype dt, int64_t N, int64_t S, int64_t D, const int64_t st[2],
                       const int64_t ln[2])
{
    const size_t es = fc_dtype_size(dt), row = (size_t)D * es;
    const int64_t L = ln[0] + ln[1];
    char *p = malloc((size_t)(N * L > 0 ? N * L : 1) * row);
    for (int64_t n = 0, at = 0; n < N; n++)
        for (int k = 0; k < 2; k++, at += ln[k - 1])
            memcpy(p + (size_t)at * row, (const char *)g + (size_t)(n * S + st[k]) * row, (size_t)ln[k] * row);
    return p;
}

typedef struct ring_bench {
    fc_attention_desc local;
    fc_ring_options opt;
    fc_ring_timing timing;
    void *kv_send, *kv_recv;
    size_t kv_bytes;
} ring_bench;

/* The ring's exchange alone: P − 1 steps of sending this rank's shard to the right. */
static double exchange_alone(ring_bench *b, int rank, int ranks)
{
    quiet_barrier();
    const double t0 = bench_now();
    for (int t = 0; t + 1 < ranks; t++) {
        MPI_Request req[2];
        MPI_Irecv(b->kv_recv, (int)b->kv_bytes, MPI_BYTE, (rank + ranks - 1) % ranks, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(b->kv_send, (int)b->kv_bytes, MPI_BYTE, (rank + 1) % ranks, 0, MPI_COMM_WORLD, &req[1]);
        for (int done = 0; MPI_Testall(2, req, &done, MPI_STATUSES_IGNORE), !done;)
            nanosleep(&(struct timespec){0, 20000}, NULL);
    }
    return max_over_ranks(bench_now() - t0);
}

bool bench_ring_measure(const bench_case *c, const bench_config *cfg, bench_result *r)
{
    int rank = 0, ranks = 1;
    ring_mpi_start(&rank, &ranks);
    const int threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    const int64_t N = c->q_heads, S = c->q_len, D = c->head_dim;
    const fc_dtype dt = c->dtype;
    const fc_ring_sharding sh = c->zigzag ? FC_RING_ZIGZAG : FC_RING_CONTIGUOUS;
    void *q = random_data(dt, N * S * D, 1), *k = random_data(dt, N * S * D, 2), *v = random_data(dt, N * S * D, 3);
    int64_t st[2], ln[2];
    const int64_t L = fc_ring_shard(sh, S, rank, ranks, st, ln);
    ring_bench b = {0};
    void *lq = take_rows(q, dt, N, S, D, st, ln), *lk = take_rows(k, dt, N, S, D, st, ln),
         *lv = take_rows(v, dt, N, S, D, st, ln), *lout = calloc((size_t)(N * L * D + 1), fc_dtype_size(dt));
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = N, d.head_dim = D;
    if (c->causal)
        d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    b.local = d;
    b.local.q_len = b.local.kv_len = L;
    b.local.vis.q_start = b.local.vis.kv_start = sh == FC_RING_ZIGZAG ? 0 : st[0];
    b.local.q = fc_tensor_bnsd(lq, dt, N, L, D);
    b.local.k = fc_tensor_bnsd(lk, dt, N, L, D);
    b.local.v = fc_tensor_bnsd(lv, dt, N, L, D);
    b.local.out = fc_tensor_bnsd(lout, dt, N, L, D);
    b.opt = fc_ring_options_init();
    b.opt.sharding = sh, b.opt.threads = threads, b.opt.timing = &b.timing;
    b.kv_bytes = (size_t)(2 * N * L * D) * fc_dtype_size(dt);
    int64_t most = 0;
    for (int p = 0; p < ranks; p++) {
        int64_t s2[2], l2[2];
        const int64_t n = fc_ring_shard(sh, S, p, ranks, s2, l2);
        most = n > most ? n : most;
    }
    b.kv_send = calloc((size_t)(2 * N * most * D + 1), fc_dtype_size(dt));
    b.kv_recv = calloc((size_t)(2 * N * most * D + 1), fc_dtype_size(dt));

    /* the whole problem in one process, all the ranks' threads (rank 0) */
    void *out = calloc((size_t)(N * S * D), fc_dtype_size(dt));
    d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(q, dt, N, S, D), d.k = fc_tensor_bnsd(k, dt, N, S, D), d.v = fc_tensor_bnsd(v, dt, N, S, D);
    d.out = fc_tensor_bnsd(out, dt, N, S, D);
    const fc_options one = {.backend = FC_BACKEND_CPU, .threads = threads * ranks};
    fc_plan *plan = NULL;
    void *ws = NULL;
    size_t ws_bytes = 0;
    bool ok = fc_plan_create(&d, &one, &plan) == FC_OK && fc_plan_workspace_size(plan, &ws_bytes) == FC_OK &&
              fc_plan_flops(plan, &r->work) == FC_OK && (ws = malloc(ws_bytes + 1)) != NULL;
    if (!ok)
        snprintf(r->note, sizeof r->note, "flashc: %s", fc_last_error());

    const int repeat = cfg->repeat > 0 ? cfg->repeat : c->repeat > 0 ? c->repeat : 3;
    double t_ring[BENCH_MAX_REPEAT], t_one[BENCH_MAX_REPEAT];
    double best_wait = 0, best_compute = 0, comm_min = 1e30, cpu_ring = 1e30, cpu_one = 1e30;
    int cpus = 0;
    for (int it = -cfg->warmup; ok && it < repeat; it++) {
        quiet_barrier();
        const double t0 = bench_now(), c0 = cpu_now();
        const fc_status s = fc_ring_attention(&b.local, &b.opt, MPI_COMM_WORLD);
        const double tr = max_over_ranks(bench_now() - t0), cr = reduce_over_ranks(cpu_now() - c0, MPI_SUM);
        if (s != FC_OK) {
            snprintf(r->note, sizeof r->note, "ring: %s", fc_ring_last_error());
            ok = false;
            break;
        }
        quiet_barrier();
        const double t1 = bench_now(), c1 = cpu_now();
        if (rank == 0)
            cpus = run_on_all_cores(plan, ws, ws_bytes);
        const double to = bench_now() - t1, co = cpu_now() - c1;
        const double tc = exchange_alone(&b, rank, ranks);
        if (it < 0)
            continue;
        t_ring[it] = tr, t_one[it] = to;
        cpu_ring = cr < cpu_ring ? cr : cpu_ring, cpu_one = co < cpu_one ? co : cpu_one;
        if (it == 0 || tr <= t_ring[0]) { /* the fastest ring run's own account of its time */
            best_wait = max_over_ranks(b.timing.wait);
            best_compute = max_over_ranks(b.timing.compute);
        }
        comm_min = tc < comm_min ? tc : comm_min;
    }
    if (ok) {
        qsort(t_ring, (size_t)repeat, sizeof(double), bench_cmp_double);
        qsort(t_one, (size_t)repeat, sizeof(double), bench_cmp_double);
        r->runs = repeat;
        r->flashc_min = t_ring[0], r->flashc_median = t_ring[repeat / 2];
        r->has_baseline = true;
        r->base_min = t_one[0], r->base_median = t_one[repeat / 2];
        /* rank 0's rows against the one-process output */
        double err = 0;
        const size_t es = fc_dtype_size(dt);
        for (int64_t n = 0; rank == 0 && n < N; n++)
            for (int64_t i = 0; i < L; i++)
                for (int64_t e = 0; e < D; e++) {
                    const int64_t gi = i < ln[0] ? st[0] + i : st[1] + i - ln[0];
                    const char *a = (const char *)lout + (size_t)((n * L + i) * D + e) * es,
                               *g = (const char *)out + (size_t)((n * S + gi) * D + e) * es;
                    uint16_t ha, hg;
                    float fa, fg;
                    memcpy(&ha, a, 2), memcpy(&hg, g, 2), memcpy(&fa, a, 4), memcpy(&fg, g, 4);
                    const double x = dt == FC_BF16 ? fc_bf16_to_f32(ha) : dt == FC_F16 ? fc_f16_to_f32(ha) : fa;
                    const double y = dt == FC_BF16 ? fc_bf16_to_f32(hg) : dt == FC_F16 ? fc_f16_to_f32(hg) : fg;
                    err = fabs(x - y) > err ? fabs(x - y) : err;
                }
        r->max_abs_err = err;
        const double hidden = comm_min > 0 ? 1 - fmin(1, best_wait / comm_min) : 1;
        snprintf(r->note, sizeof r->note,
                 "%d ranks x %d thr vs 1 x %d%s: efficiency %.0f%%, step %.0f ms, exchange %.0f ms, %.0f%% hidden "
                 "(wait %.0f ms, compute %.0f ms); CPU time %.0f ms all ranks vs %.0f ms: %.0f%%",
                 ranks, threads, threads * ranks, cpus && cpus < threads * ranks ? " (baseline on fewer cores)" : "",
                 100 * t_one[0] / t_ring[0], 1e3 * t_ring[0] / ranks, 1e3 * comm_min, 100 * hidden, 1e3 * best_wait,
                 1e3 * best_compute, 1e3 * cpu_ring, 1e3 * cpu_one, 100 * cpu_one / cpu_ring);
    }
    fc_plan_destroy(plan);
    free(ws), free(out), free(q), free(k), free(v), free(lq), free(lk), free(lv), free(lout);
    free(b.kv_send), free(b.kv_recv);
    return ok;
}
#endif
