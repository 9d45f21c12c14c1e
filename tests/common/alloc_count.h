/* Host allocations counted: a test linked with alloc_count.c and -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc has every malloc, calloc and realloc of the program (the library's included)
 * counted, from any thread. */
#ifndef FLASHC_TESTS_ALLOC_COUNT_H
#define FLASHC_TESTS_ALLOC_COUNT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The allocations so far. */
long tc_allocations(void);

#ifdef __cplusplus
}
#endif

#endif
