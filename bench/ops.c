/* The operator table: how each bench_op_kind is measured and in which unit. */
#include "bench.h"

static const bench_op ops[BENCH_OP_COUNT] = {
    [BENCH_OP_FORWARD] = {"fwd", "GFLOP/s", bench_forward_measure},
    /* later: backward (GFLOP/s, 2.5x forward FLOPs), decode (GB/s of K and V read), sparse */
};

const bench_op *bench_op_get(bench_op_kind kind)
{
    return (unsigned)kind < BENCH_OP_COUNT ? &ops[kind] : NULL;
}
