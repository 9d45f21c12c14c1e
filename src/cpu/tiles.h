/* The CPU tile policy (tiles.c): the one place that answers "which tiles does this problem get?". */
#ifndef FC_CPU_TILES_H
#define FC_CPU_TILES_H

#include "../core/plan.h"
#include "work.h"

/* Item rows, kv tile columns and kv item rows for op on p, whose items take `kinds` on kernel set
 * k (fused is left false: fc_cpu_bwd_fuses decides it once the threads are known). */
fc_tiles fc_cpu_tiles(const fc_problem *p, fc_op op, const fc_kinds *kinds, const fc_cpu_kernels *k);

/* Whether a backward runs one item per kv head (dQ, dK and dV in one pass) with these tiles. */
bool fc_cpu_bwd_fuses(const fc_problem *p, fc_tiles t, int threads);

/* The kv rows of a fused backward's kv items (a multiple of t.cols). */
int fc_cpu_bwd_fused_kv_rows(fc_tiles t, const fc_kinds *kinds);

#endif /* FC_CPU_TILES_H */
