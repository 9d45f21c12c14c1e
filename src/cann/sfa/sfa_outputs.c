#include "sfa_outputs.h"

bool sfa_stats_in_place(const cann_operand *t)
{
    int64_t want = 1;
    for (int k = t->rank - 1; k >= 0; k--) {
        if (t->dims[k] > 1 && t->strides[k] != want)
            return false;
        want *= t->dims[k];
    }
    return true;
}

void sfa_scatter_floats(const cann_operand *t, const float *src)
{
    int64_t idx[CANN_MAX_RANK] = {0};
    for (int64_t n = 0; n < t->numel; n++) {
        int64_t off = 0;
        for (int k = 0; k < t->rank; k++)
            off += idx[k] * t->strides[k];
        ((float *)t->data)[off] = src[n];
        for (int k = t->rank - 1; k >= 0 && ++idx[k] == t->dims[k]; k--)
            idx[k] = 0;
    }
}
