/* Thread-local error reporting shared by every face. */
#ifndef FC_CORE_ERROR_H
#define FC_CORE_ERROR_H

#include "flashc.h"

/* Records a message for fc_last_error() (and the faces' own queues) and returns status. */
fc_status fc_fail(fc_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fc_clear_error(void);

/* Called with every message fc_fail records; a face installs one to keep its own error queue. */
typedef void (*fc_error_sink)(const char *message);
void fc_set_error_sink(fc_error_sink sink);

#endif /* FC_CORE_ERROR_H */
