#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char fc_rt_text[512];

fc_rt_status fc_rt_fail(fc_rt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fc_rt_text, sizeof fc_rt_text, fmt, ap);
    va_end(ap);
    return status;
}

const char *fc_rt_message(void) { return fc_rt_text; }
