/* fa_call's fields by id, from the family's one parameter list. */
#include "fa_params.h"

static const cann_field fields[FA_NPARAMS] = CANN_PARAM_TABLE(fa_call, FA_PARAMS);
const cann_fields fa_fields = {fields, FA_NPARAMS};
