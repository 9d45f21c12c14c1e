/* A CPU plan's variant as text: the debug query behind fc_plan_describe. */
#include <stdio.h>

#include "cpu.h"

static const char *const fc_fwd_kind_names[FC_FWD_KINDS] = {"gemm", "dots", "decode", "tiles_qk", "tiles", "fused"};
static const char *const fc_bwd_kind_names[FC_BWD_KINDS] = {"fp32", "tiles", "elements"};

int fc_cpu_describe(const fc_plan *plan, char *buf, size_t len)
{
    const fc_cpu_plan *cp = plan->state;
    const fc_cpu_variant *v = &cp->v;
    const fc_problem *p = &plan->prob;
    const fc_cpu_items *its = &cp->items;
    char what[160];
    if (plan->op == FC_OP_FORWARD)
        snprintf(what, sizeof what, "kernel=%s%s few_rows_kernel=%s item_rows=%d kv_cols=%d items=%lld splits=%lld",
                 fc_fwd_kind_names[v->kinds.many], v->kinds.parts ? "(parts)" : "", fc_fwd_kind_names[v->kinds.few],
                 v->tiles.rows, v->tiles.cols, (long long)its->q_start[p->B], (long long)its->nsplit);
    else if (v->tiles.fused) /* one item per kv head (the two passes' item counts go unused) */
        snprintf(what, sizeof what, "products=%s schedule=fused_heads item_rows=%d kv_cols=%d kv_item_rows=%d items=%lld",
                 fc_bwd_kind_names[v->kinds.bwd], v->tiles.rows, v->tiles.cols, v->tiles.kv_rows,
                 (long long)(p->B * p->Nkv));
    else
        snprintf(what, sizeof what, "products=%s schedule=%s item_rows=%d kv_cols=%d kv_item_rows=%d q_items=%lld "
                 "kv_items=%lld", fc_bwd_kind_names[v->kinds.bwd], p->sparse.data ? "sparse_passes" : "two_passes",
                 v->tiles.rows, v->tiles.cols, v->tiles.kv_rows, (long long)its->q_start[p->B],
                 (long long)its->kv_start[p->B]);
    return snprintf(buf, len, "isa=%s %s threads=%d workspace=%zu (per_thread=%zu partials_at=%zu counts_at=%zu)",
                    v->k->isa, what, v->threads, v->bytes, v->ws_thread, v->partial_at, v->counts_at);
}
