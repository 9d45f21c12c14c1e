/* ifa_call's fields by id, from the family's one parameter list. */
#include "ifa_params.h"

CANN_PARAM_TABLE(ifa, IFA_PARAMS, IFA_NPARAMS);
