#include "signature.h"

#include "errmsg.h"

const char *cann_sig_name(const cann_signature *s, int id)
{
    for (int k = 0; k < s->count; k++)
        if (s->params[k].id == id)
            return s->params[k].name;
    return NULL;
}

aclnnStatus cann_check_required(const cann_signature *s, const void *const *ptr)
{
    for (int k = 0; k < s->count; k++) {
        const int id = s->params[k].id;
        if ((s->required & CANN_BIT(id)) && ptr[id] == NULL)
            return cann_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL, expected a valid pointer (it is required)", s->fn,
                             s->params[k].name);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus cann_run_rules(const cann_signature *s, const cann_rule *rules, int n, void *ctx)
{
    int charged[CANN_MAX_RULES];
    if (n > CANN_MAX_RULES)
        return cann_fail(ACLNN_ERR_INNER, "%s: internal error: %d rules exceed CANN_MAX_RULES", s->fn, n);
    for (int r = 0; r < n; r++) {
        charged[r] = -1;
        for (int k = 0; k < s->count; k++)
            if (rules[r].involves & CANN_BIT(s->params[k].id))
                charged[r] = k; /* the last declared one */
    }
    for (int k = 0; k < s->count; k++)
        for (int r = 0; r < n; r++)
            if (charged[r] == k) {
                const aclnnStatus st = rules[r].check(ctx);
                if (st != ACLNN_SUCCESS)
                    return st;
            }
    return ACLNN_SUCCESS;
}
