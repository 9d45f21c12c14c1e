#include "status.h"

#include "../common/say.h"

static _Thread_local char fc_rt_text[512];

FC_DEFINE_FAIL(fc_rt_fail, fc_rt_status, fc_rt_text)

const char *fc_rt_message(void) { return fc_rt_text; }
