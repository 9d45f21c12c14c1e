/* The native API's messages and status names (the messages themselves are the core's). */
#include "../core/error.h"

const char *fc_last_error(void) { return fc_error_message(); }

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
