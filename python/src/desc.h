/* A Python dict (built by flashc/_native.py) → fc_attention_desc and fc_attention_grads, with every
 * array checked to cover what the library will read or write. */
#ifndef FLASHC_PY_DESC_H
#define FLASHC_PY_DESC_H

#include "arrays.h"

/* Storage the description points into, owned by the call. */
typedef struct fcpy_call {
    fcpy_holds holds;
    fc_attention_desc desc;
    fc_attention_grads grads;
    fc_window *batch_window; /* PyMem */
    float *lse;              /* log-sum-exp wanted (forward) or given (backward): desc.stats.max aliases it */
    float *sum_scratch;      /* PyMem: the sums behind lse */
    int64_t lse_count;
} fcpy_call;

int fcpy_desc_from_dict(fcpy_call *call, PyObject *dict);
int fcpy_grads_from_dict(fcpy_call *call, PyObject *dict);
void fcpy_call_release(fcpy_call *call);

#endif
