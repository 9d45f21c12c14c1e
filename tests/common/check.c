#include "check.h"

#include <stdarg.h>
#include <stdio.h>

static int n_checks, n_failures;
static char context[256];

/* Past this many printed failures only the count grows, so a broken kernel cannot flood the log. */
#define TC_PRINT_LIMIT 60

bool tc_check_at(bool cond, const char *file, int line, const char *fmt, ...)
{
    n_checks++;
    if (cond)
        return true;
    if (++n_failures <= TC_PRINT_LIMIT) {
        fprintf(stdout, "FAIL %s:%d: [%s] ", file, line, context);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stdout, fmt, ap);
        va_end(ap);
        fputc('\n', stdout);
        fflush(stdout);
    } else if (n_failures == TC_PRINT_LIMIT + 1) {
        fprintf(stdout, "(further failures are counted but not printed)\n");
    }
    return false;
}

void tc_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
}

const char *tc_context_text(void) { return context; }

int tc_checks(void) { return n_checks; }
int tc_failures(void) { return n_failures; }

int tc_summary(const char *name)
{
    printf("%s: %d checks, %d failures\n", name, n_checks, n_failures);
    return n_failures ? 1 : 0;
}
