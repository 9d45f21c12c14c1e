#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char fc_message[1024];
static fc_error_sink fc_sink;

fc_status fc_fail(fc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fc_message, sizeof fc_message, fmt, ap);
    va_end(ap);
    if (fc_sink)
        fc_sink(fc_message);
    return status;
}

void fc_clear_error(void) { fc_message[0] = '\0'; }

void fc_set_error_sink(fc_error_sink sink) { fc_sink = sink; }

const char *fc_last_error(void) { return fc_message; }

const char *fc_status_name(fc_status status)
{
    switch (status) {
    case FC_OK: return "FC_OK";
    case FC_ERR_NULL_ARG: return "FC_ERR_NULL_ARG";
    case FC_ERR_INVALID_ARG: return "FC_ERR_INVALID_ARG";
    case FC_ERR_WORKSPACE: return "FC_ERR_WORKSPACE";
    case FC_ERR_NO_MEMORY: return "FC_ERR_NO_MEMORY";
    case FC_ERR_BACKEND: return "FC_ERR_BACKEND";
    case FC_ERR_INTERNAL: return "FC_ERR_INTERNAL";
    }
    return "unknown fc_status";
}
