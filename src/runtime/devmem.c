/* The list of device-memory providers and the one place that chooses between them (FLASHC_DEVICE). */
#include "devmem.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const fc_rt_devmem *const providers[] = {
#ifdef FLASHC_CUDA
    &fc_cuda_devmem,
#endif
    NULL, /* keeps the array non-empty */
};

static pthread_once_t choose_once = PTHREAD_ONCE_INIT;
static const fc_rt_devmem *chosen;
static char choice_error[256];

static void choose(void)
{
    const char *want = getenv("FLASHC_DEVICE");
    if (want && strcasecmp(want, "cpu") == 0)
        return;
    const bool any = !want || !*want || strcasecmp(want, "auto") == 0;
    const char *why = "no device of that name is built in";
    for (size_t i = 0; providers[i]; i++) {
        if (!any && strcasecmp(want, providers[i]->name) != 0)
            continue;
        if (providers[i]->available(&why)) {
            chosen = providers[i];
            return;
        }
        if (!any)
            break;
    }
    if (!any) /* asked for a device by name: say why there is none */
        snprintf(choice_error, sizeof choice_error, "FLASHC_DEVICE=%s: %s (use cpu, auto or a built device: %s)", want,
                 why, providers[0] ? providers[0]->name : "none in this build");
}

const fc_rt_devmem *fc_rt_devmem_active(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}

const char *fc_rt_devmem_error(void)
{
    pthread_once(&choose_once, choose);
    return choice_error[0] ? choice_error : NULL;
}

const char *fc_rt_devmem_name(void)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    return dm ? dm->name : "cpu";
}
