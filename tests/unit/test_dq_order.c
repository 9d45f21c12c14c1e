/*
 * The fused CUDA backward's dQ turn order (src/cuda/dq_order.h, backward_dq.cuh), modelled on the
 * CPU with the very functions the kernel calls:
 *   - turns: for random batches (every visibility form, empty bands, prefixes past the keys, varlen
 *     lengths) the turn the kernel computes for each (kv tile, query tile) it visits — P, then
 *     fc_dq_first_sharer walked in query-tile order, restarted per query head — equals the number
 *     of earlier kv tiles that visit that query tile, counted;
 *   - launch order: after fc_dq_ascending_tiles, and after fc_dq_spread_tiles on top of it (the
 *     FLASHC_CUDA_BWD_ORDER=spread order: the same pairs, sorted by tile), every unit waits only on
 *     units with smaller indices;
 *   - schedules: the kernel's protocol (claim a unit from the ticket; per step wait for the turn,
 *     add the partial, release turn + 1) run by a random number of CTAs, a random number of them
 *     resident at a time, started in random order and stepped in random interleavings: it never
 *     deadlocks, and every query tile's fp32 sum is bitwise the kv-ordered sum of its partials.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "cuda/dq_order.h"

enum { MAXB = 4 };

/* A random batch: lengths, a band (possibly empty or unbounded), a prefix (possibly past the keys). */
static fc_batch random_batch(tc_rng *r)
{
    fc_batch bt;
    memset(&bt, 0, sizeof bt);
    bt.sq = tc_rng_int(r, 0, 5) == 0 ? 0 : tc_rng_int(r, 1, 400);
    bt.skv = tc_rng_int(r, 1, 400);
    bt.q_rows = bt.sq + (tc_rng_bool(r, 0.3) ? tc_rng_int(r, 0, 70) : 0);
    bt.kv_rows = bt.skv + (tc_rng_bool(r, 0.3) ? tc_rng_int(r, 0, 70) : 0);
    const int64_t lim = bt.sq + bt.skv + 1;
    switch (tc_rng_int(r, 0, 4)) {
    case 0: bt.vis_lo = -lim, bt.vis_hi = lim; break;                                          /* full */
    case 1: bt.vis_lo = -lim, bt.vis_hi = bt.skv - bt.sq + tc_rng_int(r, -3, 3); break;       /* causal-like */
    case 2: bt.vis_lo = -tc_rng_int(r, 0, 120), bt.vis_hi = tc_rng_int(r, 0, 120); break;    /* band */
    case 3: bt.vis_lo = tc_rng_int(r, -200, 200), bt.vis_hi = bt.vis_lo - tc_rng_int(r, 0, 70); break; /* empty band */
    default: bt.vis_lo = tc_rng_int(r, -300, 300), bt.vis_hi = bt.vis_lo + tc_rng_int(r, 0, 300); break;
    }
    bt.prefix = tc_rng_bool(r, 0.4) ? tc_rng_int(r, 0, bt.skv + 80) : 0;
    bt.col_lo = tc_rng_bool(r, 0.2) ? tc_rng_int(r, 0, bt.skv) : 0;
    return bt;
}

static int64_t n_kv_tiles(const fc_batch *bt, int bn) { return (bt->kv_rows + bn - 1) / bn; }

static bool visits(const fc_batch *bt, int64_t t, int64_t qt, int bn, int bm)
{
    int64_t qa, qz;
    fc_dq_visits(bt, t, bn, bm, &qa, &qz);
    return qa <= qt && qt < qz;
}

/* The turn by definition: earlier kv tiles that visit qt. */
static int64_t counted_turn(const fc_batch *bt, int64_t t, int64_t qt, int bn, int bm)
{
    int64_t n = 0;
    for (int64_t u = 0; u < t; u++)
        n += visits(bt, u, qt, bn, bm);
    return n;
}

/* The kernel's turns for kv tile t over `heads` passes of its query tiles (dkv_unit's walk). */
static void kernel_turns(const fc_batch *bt, int64_t t, int bn, int bm, int heads, int64_t *out)
{
    int64_t qa, qz;
    fc_dq_visits(bt, t, bn, bm, &qa, &qz);
    const int64_t n_qt = qz - qa, P = fc_dq_prefix_tiles(bt, bn);
    const int64_t A0 = n_qt > 0 && t >= P ? fc_dq_first_sharer(bt, P, t, qa, bn, bm) : 0;
    int64_t A = 0;
    for (int64_t s = 0; s < n_qt * heads; s++) {
        const int64_t qt = qa + s % n_qt;
        if (s % n_qt == 0)
            A = A0;
        if (t >= P)
            A = fc_dq_first_sharer(bt, A, t, qt, bn, bm);
        out[s] = fc_dq_turn(t, P, A);
    }
}

static void check_turns(tc_rng *r, int cases)
{
    static const int shapes[][2] = {{64, 32}, {64, 64}, {16, 8}, {8, 16}, {64, 16}};
    int64_t turns[2 * 512];
    for (int c = 0; c < cases; c++) {
        const fc_batch bt = random_batch(r);
        const int bn = shapes[c % 5][0], bm = shapes[c % 5][1];
        tc_context("turns: case %d sq=%lld skv=%lld vis=[%lld, %lld] prefix=%lld bn=%d bm=%d", c, (long long)bt.sq,
                   (long long)bt.skv, (long long)bt.vis_lo, (long long)bt.vis_hi, (long long)bt.prefix, bn, bm);
        int bad = 0;
        for (int64_t t = 0; t < n_kv_tiles(&bt, bn); t++) {
            int64_t qa, qz;
            fc_dq_visits(&bt, t, bn, bm, &qa, &qz);
            if (qz - qa > 512) {
                TC_CHECK(false, "tile %lld visits %lld query tiles", (long long)t, (long long)(qz - qa));
                break;
            }
            kernel_turns(&bt, t, bn, bm, 2, turns);
            for (int64_t s = 0; s < 2 * (qz - qa); s++) {
                const int64_t qt = qa + s % (qz - qa), want = counted_turn(&bt, t, qt, bn, bm);
                if (turns[s] != want && bad++ < 3)
                    TC_CHECK(false, "kv tile %lld, query tile %lld: turn %lld, counted %lld", (long long)t, (long long)qt,
                             (long long)turns[s], (long long)want);
            }
            /* the rows a tile's steps cover include every row that sees one of its columns */
            int64_t sp[4];
            for (int64_t i = 0; i < bt.sq; i++) {
                fc_row_spans(&bt, i, sp);
                const int64_t j0 = t * bn, j1 = j0 + bn < bt.skv ? j0 + bn : bt.skv;
                const bool sees = (sp[0] < sp[1] && sp[0] < j1 && j0 < sp[1]) || (sp[2] < sp[3] && sp[2] < j1 && j0 < sp[3]);
                if (sees && !visits(&bt, t, i / bm, bn, bm) && bad++ < 3)
                    TC_CHECK(false, "row %lld sees kv tile %lld but its query tile is not visited", (long long)i, (long long)t);
            }
        }
        TC_CHECK(bad == 0, "turns: %d mismatches", bad);
    }
    tc_context("%s", "");
}

/* One problem of the schedule model: batches, kv heads, group size and feature parts. */
typedef struct {
    int B, Nkv, G, parts, bn, bm;
    fc_batch bt[MAXB];
    int32_t items[2 * 64 * MAXB]; /* (batch, kv tile) in launch order */
    int n_items;
    int64_t qt0[MAXB], n_qt_all; /* per batch: query tiles before it; query tiles a head */
} model;

static int units(const model *m) { return m->n_items * m->Nkv * m->parts; }

/* The partial of (kv tile t, query head n1, global query tile, part): a float whose rounding
 * depends on the order of the sums (magnitudes from 2^-12 to 2^12). */
static float partial(int64_t t, int64_t n1, int64_t qt, int part)
{
    uint64_t h = (uint64_t)t * 0x9E3779B97F4A7C15ull ^ (uint64_t)n1 * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)qt * 0x165667B19E3779F9ull ^
                 (uint64_t)part * 0x27D4EB2F165667C5ull;
    h ^= h >> 29, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 32;
    const double mant = (double)(h & 0xFFFFFF) / (double)0x1000000 - 0.5;
    return (float)ldexp(mant, (int)((h >> 24) % 25) - 12);
}

/* The unit's steps: (query head, global query tile, turn) as dkv_unit walks them. */
typedef struct {
    int64_t n1, qt, turn;
} step;

static int unit_steps(const model *m, int u, step *out, int *part)
{
    const int per_item = m->Nkv * m->parts, b = m->items[2 * (u / per_item)], t = m->items[2 * (u / per_item) + 1];
    const int n2 = (u % per_item) / m->parts;
    *part = u % m->parts;
    int64_t qa, qz, turns[2 * 512];
    fc_dq_visits(&m->bt[b], t, m->bn, m->bm, &qa, &qz);
    const int n_qt = (int)(qz - qa), n = n_qt * m->G;
    kernel_turns(&m->bt[b], t, m->bn, m->bm, m->G, turns);
    for (int s = 0; s < n; s++)
        out[s] = (step){(int64_t)n2 * m->G + s / n_qt, m->qt0[b] + qa + s % n_qt, turns[s]};
    return n;
}

static model random_model(tc_rng *r)
{
    model m;
    memset(&m, 0, sizeof m);
    m.B = (int)tc_rng_int(r, 1, MAXB), m.Nkv = (int)tc_rng_int(r, 1, 2), m.G = (int)tc_rng_int(r, 1, 3);
    m.parts = (int)tc_rng_int(r, 1, 2), m.bn = tc_rng_bool(r, 0.5) ? 64 : 32, m.bm = tc_rng_bool(r, 0.5) ? 32 : 16;
    for (int b = 0; b < m.B; b++) {
        m.bt[b] = random_batch(r);
        m.qt0[b] = m.n_qt_all;
        m.n_qt_all += (m.bt[b].q_rows + m.bm - 1) / m.bm;
        for (int64_t t = 0; t < n_kv_tiles(&m.bt[b], m.bn); t++, m.n_items++)
            m.items[2 * m.n_items] = b, m.items[2 * m.n_items + 1] = (int32_t)t;
    }
    for (int x = m.n_items - 1; x > 0; x--) { /* any cost order the plan may pick... */
        const int y = (int)tc_rng_int(r, 0, x);
        int32_t tb = m.items[2 * x], tt = m.items[2 * x + 1];
        m.items[2 * x] = m.items[2 * y], m.items[2 * x + 1] = m.items[2 * y + 1];
        m.items[2 * y] = tb, m.items[2 * y + 1] = tt;
    }
    int64_t next[MAXB] = {0}; /* ...then each batch's tiles in increasing order */
    fc_dq_ascending_tiles(m.items, m.n_items, next);
    if (tc_rng_bool(r, 0.5)) { /* the spread order: a permutation of the pairs, by tile */
        int32_t before[2 * 64 * MAXB];
        memcpy(before, m.items, sizeof before);
        TC_CHECK(fc_dq_spread_tiles(m.items, m.n_items), "spread: out of memory");
        int count[MAXB][64] = {{0}}, bad = 0;
        for (int x = 0; x < m.n_items; x++)
            count[before[2 * x]][before[2 * x + 1]]++, count[m.items[2 * x]][m.items[2 * x + 1]]--;
        for (int x = 0; x < m.n_items; x++)
            bad += count[m.items[2 * x]][m.items[2 * x + 1]] != 0 || (x > 0 && m.items[2 * x + 1] < m.items[2 * x - 1]);
        TC_CHECK(bad == 0, "spread: the same pairs, in tile order");
    }
    return m;
}

/* Every unit waits only on units with smaller indices: for each (batch, kv head, part), the units
 * of its kv tiles in increasing tile order have increasing indices. */
static void check_launch_order(const model *m)
{
    int last[MAXB][2][2];
    memset(last, 0xFF, sizeof last);
    int bad = 0;
    for (int u = 0; u < units(m); u++) {
        const int per_item = m->Nkv * m->parts, b = m->items[2 * (u / per_item)], t = m->items[2 * (u / per_item) + 1];
        const int n2 = (u % per_item) / m->parts, part = u % m->parts;
        bad += t != last[b][n2][part] + 1;
        last[b][n2][part] = t;
    }
    TC_CHECK(bad == 0, "launch order: %d units come before a smaller kv tile of their chain", bad);
}

/* A simulated CTA: the unit it holds (−1: none yet) and the next action within it. */
typedef struct {
    int state; /* 0 not started, 1 resident, 2 exited */
    int unit, n_steps, s, part;
    step steps[2 * 3 * 512];
} cta;

/* The kernel's protocol on `grid` CTAs, at most `resident` at a time, random interleaving.
 * Returns false on a deadlock; acc receives each (query head, query tile, part)'s sum. */
static bool simulate(tc_rng *r, const model *m, int grid, int resident, float *acc, unsigned *turn_ctr)
{
    const int nq = m->Nkv * m->G, U = units(m);
    const size_t slots = (size_t)nq * m->n_qt_all * m->parts;
    memset(acc, 0, slots * sizeof *acc);
    memset(turn_ctr, 0, slots * sizeof *turn_ctr);
    cta *c = calloc((size_t)grid, sizeof *c);
    int ticket = 0, live = 0, exited = 0;
    bool ok = true;
    while (exited < grid) {
        /* the CTAs that can act: resident ones not blocked, or a start when a slot is free */
        int cand[512], n = 0;
        for (int k = 0; k < grid && n < 512; k++) {
            if (c[k].state == 0 && live < resident)
                cand[n++] = k;
            else if (c[k].state == 1) {
                const cta *x = &c[k];
                if (x->unit >= 0 && x->s < x->n_steps) {
                    const step *st = &x->steps[x->s];
                    if (turn_ctr[(st->n1 * m->n_qt_all + st->qt) * m->parts + x->part] != (unsigned)st->turn)
                        continue; /* waiting for its turn */
                }
                cand[n++] = k;
            }
        }
        if (n == 0) {
            ok = false; /* every resident CTA waits and none can start: deadlock */
            break;
        }
        cta *x = &c[cand[tc_rng_int(r, 0, n - 1)]];
        if (x->state == 0) {
            x->state = 1, x->unit = -1, live++;
        } else if (x->unit < 0 || x->s == x->n_steps) { /* claim the next unit, or exit */
            if (ticket >= U) {
                x->state = 2, live--, exited++;
                continue;
            }
            x->unit = ticket++;
            x->n_steps = unit_steps(m, x->unit, x->steps, &x->part);
            x->s = 0;
        } else { /* its turn: add and release */
            const step *st = &x->steps[x->s];
            const size_t at = (size_t)(st->n1 * m->n_qt_all + st->qt) * m->parts + x->part;
            const int t = m->items[2 * (x->unit / (m->Nkv * m->parts)) + 1];
            acc[at] += partial(t, st->n1, st->qt, x->part);
            turn_ctr[at]++;
            x->s++;
        }
    }
    free(c);
    return ok;
}

/* The sums by definition: each (query head, query tile, part) over its kv tiles in increasing order. */
static void ordered_sums(const model *m, float *want)
{
    const int nq = m->Nkv * m->G;
    memset(want, 0, (size_t)nq * m->n_qt_all * m->parts * sizeof *want);
    for (int b = 0; b < m->B; b++)
        for (int64_t t = 0; t < n_kv_tiles(&m->bt[b], m->bn); t++)
            for (int n1 = 0; n1 < nq; n1++)
                for (int64_t q = 0; q * m->bm < m->bt[b].q_rows; q++)
                    for (int part = 0; part < m->parts; part++)
                        if (visits(&m->bt[b], t, q, m->bn, m->bm)) {
                            const int64_t qt = m->qt0[b] + q;
                            want[(n1 * m->n_qt_all + qt) * m->parts + part] += partial(t, n1, qt, part);
                        }
}

static void check_schedules(tc_rng *r, int problems)
{
    for (int k = 0; k < problems; k++) {
        const model m = random_model(r);
        const size_t slots = (size_t)m.Nkv * m.G * m.n_qt_all * m.parts;
        float *want = malloc((slots ? slots : 1) * sizeof *want), *got = malloc((slots ? slots : 1) * sizeof *got);
        unsigned *ctr = malloc((slots ? slots : 1) * sizeof *ctr);
        ordered_sums(&m, want);
        check_launch_order(&m);
        for (int run = 0; run < 4; run++) {
            const int U = units(&m) ? units(&m) : 1;
            const int grid = run == 0 ? 1 : (int)tc_rng_int(r, 1, U + 3), resident = (int)tc_rng_int(r, 1, grid);
            tc_context("schedule: problem %d (B=%d Nkv=%d G=%d parts=%d bn=%d bm=%d, %d units) grid %d, %d resident", k, m.B,
                       m.Nkv, m.G, m.parts, m.bn, m.bm, units(&m), grid, resident);
            const bool ok = simulate(r, &m, grid, resident, got, ctr);
            TC_CHECK(ok, "no deadlock");
            if (ok)
                TC_CHECK(memcmp(got, want, slots * sizeof *got) == 0, "every query tile's sum is bitwise the kv-ordered sum");
        }
        free(want), free(got), free(ctr);
    }
    tc_context("%s", "");
}

int main(int argc, char **argv)
{
    const int scale = argc > 1 ? atoi(argv[1]) : 1;
    tc_rng r = tc_rng_seed(20261128u);
    check_turns(&r, 1500 * scale);
    check_schedules(&r, 150 * scale);
    return tc_summary("test_unit_dq_order");
}
