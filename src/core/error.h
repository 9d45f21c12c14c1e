/* Thread-local error reporting shared by every face. */
#ifndef FC_CORE_ERROR_H
#define FC_CORE_ERROR_H

#include "flashc.h"

/* Records the calling thread's message (read back by fc_last_error()) and returns status.  The
 * core and the backends name their own functions; faces add their operator's name (fc_fail_in). */
fc_status fc_fail(fc_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fc_clear_error(void);

/* The calling thread's last message. */
const char *fc_error_message(void);

/* A failed status comes back with "fn: " put before its message; FC_OK passes through. */
fc_status fc_fail_in(const char *fn, fc_status status);

#endif /* FC_CORE_ERROR_H */
