/*
 * The problem of one bench case as native-API operands: dense BNSD (or packed TND) tensors with
 * random values, the options the case asks for (causal, GQA, Dv, rope, int8 KV, sparse indices),
 * and for the backward the output gradient and gradient buffers.
 */
#ifndef FLASHC_BENCH_PROBLEM_H
#define FLASHC_BENCH_PROBLEM_H

#include <stdbool.h>

#include "bench.h"

typedef struct bench_problem {
    fc_attention_desc d;
    fc_attention_grads g;   /* filled when built for the backward */
    int64_t lens[BENCH_MAX_BATCH];
    float *stats[2];
    float kv_scale[2];      /* int8 KV: per-tensor dequantisation scales */
    void *mem[16];          /* every allocation, freed by bench_problem_free */
    int nmem;
    size_t q_elems, kv_elems, out_elems;
} bench_problem;

/* Builds the case; `sparse` adds its index rows, `backward` the gradients.  False with a note. */
bool bench_problem_build(const bench_case *c, bool sparse, bool backward, bench_problem *bp, char *note,
                         size_t note_size);
void bench_problem_free(bench_problem *bp);

/* One plan, its workspace, and a run function for the timer. */
typedef struct bench_plan {
    fc_plan *plan;
    void *ws;
    size_t ws_bytes;
} bench_plan;

bool bench_plan_make(bench_plan *p, const bench_problem *bp, bool backward, int threads, char *note, size_t note_size);
bool bench_plan_run(void *ctx);
void bench_plan_free(bench_plan *p);

#endif
