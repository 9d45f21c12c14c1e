/* sfa_call's fields by id, from the family's one parameter list. */
#include "sfa_params.h"

static const cann_field fields[SFA_NPARAMS] = CANN_PARAM_TABLE(sfa_call, SFA_PARAMS);
const cann_fields sfa_fields = {fields, SFA_NPARAMS};
