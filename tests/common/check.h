/*
 * A tiny check framework: every check is counted, every failure is printed with its place and the
 * current context (which case was running), and tc_summary() turns the tally into an exit code.
 */
#ifndef FLASHC_TESTS_CHECK_H
#define FLASHC_TESTS_CHECK_H

#include <stdbool.h>

/* Exit code CTest reads as "skipped" (tests set SKIP_RETURN_CODE 77). */
#define TC_SKIP 77

#define TC_CHECK(cond, ...) tc_check_at((cond), __FILE__, __LINE__, __VA_ARGS__)

/* Records one check; on failure prints "file:line: [context] message".  Returns cond. */
bool tc_check_at(bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Names the case being checked (printed with its failures); "" clears it. */
void tc_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *tc_context_text(void);

int tc_checks(void);
int tc_failures(void);

/* Prints "<name>: N checks, F failures" and returns 0 when nothing failed, 1 otherwise. */
int tc_summary(const char *name);

#endif
