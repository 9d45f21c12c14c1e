#include "error.h"

#include <string.h>

#include "../common/say.h"

static _Thread_local char fc_message[1024];

FC_DEFINE_FAIL(fc_fail, fc_status, fc_message)

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
