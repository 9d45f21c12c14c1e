/*
 * The first phase of SparseFlashAttention and its grad: required pointers (with the forward's
 * statistics outputs required only when returnSoftmaxLse is true), the grad's zero-element query
 * (success, workspace 0, nothing done), the rules, the template lowering and the executor.
 */
#include <stdlib.h>

#include "cann/common/errmsg.h"
#include "sfa_exec.h"
#include "sfa_lower.h"
#include "sfa_rules.h"

/* The grad with a query of zero elements: only the query itself is examined. */
static aclnnStatus empty_query(sfa_state *s, bool *empty)
{
    static const aclDataType ok[] = {ACL_FLOAT16, ACL_BF16};
    cann_operand q;
    *empty = false;
    aclnnStatus st = cann_operand_capture(s->fn, sfa_name(s, SFA_QUERY), s->c->query, true, &q);
    if (st == ACLNN_SUCCESS)
        st = cann_check_dtype(&q, ok, 2);
    *empty = st == ACLNN_SUCCESS && q.numel == 0;
    return st;
}

aclnnStatus sfa_prepare(const sfa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    cann_signature sig = *call->sig;
    if (!call->backward && call->return_lse)
        sig.required |= SFA_BIT(SMAX) | SFA_BIT(SSUM);
    sfa_call c = *call;
    c.sig = &sig;
    aclnnStatus st;
    sfa_state *s = cann_prepare_state(&sfa_fields, &sig, &c, sizeof *s, &st);
    if (!s)
        return st;
    s->c = &c;
    s->fn = sig.fn;
    bool empty = false;
    if (c.backward && (st = empty_query(s, &empty)) == ACLNN_SUCCESS && empty) {
        free(s);
        return sfa_make_noop_executor(sig.fn, sig.run_fn, workspaceSize, executor);
    }
    if (st == ACLNN_SUCCESS)
        st = sfa_validate(s);
    if (st == ACLNN_SUCCESS) {
        fc_problem tmpl;
        sfa_lower_template(s, &tmpl);
        st = sfa_make_executor(s, &tmpl, workspaceSize, executor);
    }
    free(s);
    return st;
}
