/* What one SparseFlashAttention(Grad) first phase knows while it validates and lowers (private). */
#ifndef FC_CANN_SFA_STATE_H
#define FC_CANN_SFA_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cann/common/operand.h"
#include "sfa_geom.h"
#include "sfa_params.h"
#include "cann/common/signature.h"

typedef struct sfa_state {
    const sfa_call *c;
    const char *fn;
    cann_operand t[SFA_NPARAMS]; /* tensor snapshots by id (absent or ignored: present = false) */
    sfa_geom g;
} sfa_state;

/* The declared name of parameter id in the call's function. */
static inline const char *sfa_name(const sfa_state *s, sfa_param id) { return cann_sig_name(s->c->sig, id); }

/* Every validation rule of the call's function, in the order of semantics §0.5. */
aclnnStatus sfa_validate(sfa_state *s);

/* Phase 1 of either function (required pointers, rules, lowering, executor). */
aclnnStatus sfa_prepare(const sfa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_SFA_STATE_H */
