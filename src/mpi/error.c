/* The ring's own error text: libflashc's fc_last_error() belongs to libflashc. */
#include <stdarg.h>
#include <stdio.h>

#include "ring.h"

static _Thread_local char ring_message[1024];

fc_status ring_fail(fc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ring_message, sizeof ring_message, fmt, ap);
    va_end(ap);
    return status;
}

fc_status ring_fail_flashc(fc_status status, const char *what)
{
    return ring_fail(status, "%s: %s", what, fc_last_error());
}

void ring_clear_error(void) { ring_message[0] = '\0'; }

const char *fc_ring_last_error(void) { return ring_message; }
