/* The run-time version query agrees with the header it was built with and with the build's
 * project version (argv[1], from CMake). */
#include <stdio.h>
#include <string.h>

#include <flashc.h>

#include "common/check.h"

int main(int argc, char **argv)
{
    TC_CHECK(fc_version() == FLASHC_VERSION, "fc_version() %d, header %d", fc_version(), FLASHC_VERSION);
    TC_CHECK(FLASHC_VERSION == FLASHC_VERSION_MAJOR * 10000 + FLASHC_VERSION_MINOR * 100 + FLASHC_VERSION_PATCH,
             "FLASHC_VERSION does not encode its parts");
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", FLASHC_VERSION_MAJOR, FLASHC_VERSION_MINOR, FLASHC_VERSION_PATCH);
    TC_CHECK(strcmp(fc_version_string(), want) == 0, "fc_version_string() \"%s\", header %s", fc_version_string(), want);
    if (argc > 1)
        TC_CHECK(strcmp(fc_version_string(), argv[1]) == 0, "library %s, CMake project version %s",
                 fc_version_string(), argv[1]);
    return tc_summary("native_version");
}
