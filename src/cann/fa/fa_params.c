/* fa_call's fields by id, from the family's one parameter list. */
#include "fa_params.h"

CANN_PARAM_TABLE(fa, FA_PARAMS, FA_NPARAMS);
