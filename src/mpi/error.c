/* The ring's own error text: libflashc's fc_last_error() belongs to libflashc. */
#include "../common/say.h"
#include "ring.h"

static _Thread_local char ring_message[1024];

FC_DEFINE_FAIL(ring_fail, fc_status, ring_message)

fc_status ring_fail_flashc(fc_status status, const char *what)
{
    return ring_fail(status, "%s: %s", what, fc_last_error());
}

void ring_clear_error(void) { ring_message[0] = '\0'; }

const char *fc_ring_last_error(void) { return ring_message; }
