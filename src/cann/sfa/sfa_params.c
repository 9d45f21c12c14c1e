/* sfa_call's fields by id, from the family's one parameter list. */
#include "sfa_params.h"

CANN_PARAM_TABLE(sfa, SFA_PARAMS, SFA_NPARAMS);
