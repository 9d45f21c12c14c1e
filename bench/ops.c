/* The operator table: how each bench_op_kind is measured and in which unit. */
#include "bench.h"

static const bench_op ops[BENCH_OP_COUNT] = {
    [BENCH_OP_FORWARD] = {"fwd", "GFLOP/s", bench_forward_measure},
    [BENCH_OP_BACKWARD] = {"bwd", "GFLOP/s", bench_backward_measure},
    [BENCH_OP_DECODE] = {"decode", "GB/s", bench_decode_measure},
    [BENCH_OP_SPARSE_FWD] = {"sparse-fwd", "GFLOP/s", bench_sparse_measure},
    [BENCH_OP_SPARSE_BWD] = {"sparse-bwd", "GFLOP/s", bench_sparse_measure},
    [BENCH_OP_RING] = {"ring", "GFLOP/s", bench_ring_measure},
};

const bench_op *bench_op_get(bench_op_kind kind)
{
    return (unsigned)kind < BENCH_OP_COUNT ? &ops[kind] : NULL;
}
