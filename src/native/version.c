/* The run-time version: what the loaded library is, whatever header the caller compiled against. */
#include "flashc.h"

#define FC_STR_(x) #x
#define FC_STR(x) FC_STR_(x)

int fc_version(void) { return FLASHC_VERSION; }

const char *fc_version_string(void)
{
    return FC_STR(FLASHC_VERSION_MAJOR) "." FC_STR(FLASHC_VERSION_MINOR) "." FC_STR(FLASHC_VERSION_PATCH);
}
