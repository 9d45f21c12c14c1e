/*
 * A thread's last message, printf-style: each part of the library that reports errors in its own
 * words (the core, the runtime, the MPI ring) keeps its own text and defines its setter with
 * FC_DEFINE_FAIL(name, status type, thread-local char array).  Header only: no layer links to
 * another for it.
 */
#ifndef FC_COMMON_SAY_H
#define FC_COMMON_SAY_H

#include <stdarg.h>
#include <stdio.h>

#define FC_DEFINE_FAIL(name, status_type, text)                                                                        \
    status_type name(status_type status, const char *fmt, ...)                                                         \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, fmt);                                                                                             \
        vsnprintf(text, sizeof text, fmt, ap);                                                                         \
        va_end(ap);                                                                                                    \
        return status;                                                                                                 \
    }

#endif /* FC_COMMON_SAY_H */
