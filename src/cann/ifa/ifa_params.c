/* ifa_call's fields by id, from the family's one parameter list. */
#include "ifa_params.h"

static const cann_field fields[IFA_NPARAMS] = CANN_PARAM_TABLE(ifa_call, IFA_PARAMS);
const cann_fields ifa_fields = {fields, IFA_NPARAMS};
