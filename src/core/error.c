#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char fc_message[1024];

fc_status fc_fail(fc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fc_message, sizeof fc_message, fmt, ap);
    va_end(ap);
    return status;
}

void fc_clear_error(void) { fc_message[0] = '\0'; }

const char *fc_error_message(void) { return fc_message; }

fc_status fc_fail_in(const char *fn, fc_status status)
{
    if (status == FC_OK)
        return status;
    char inner[sizeof fc_message];
    memcpy(inner, fc_message, sizeof inner);
    return fc_fail(status, "%s: %s", fn, inner);
}
