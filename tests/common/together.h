/* Host threads started together, for the tests of concurrent runs. */
#ifndef FLASHC_TESTS_TOGETHER_H
#define FLASHC_TESTS_TOGETHER_H

#include <stddef.h>

/* Runs fn on each of the n elements of args (arg_size bytes apart), each on its own thread, the
 * threads released at once (a barrier), and returns when all are done. */
void tc_together(int n, void (*fn)(void *arg), void *args, size_t arg_size);

#endif
