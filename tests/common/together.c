#include "together.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct tc_thread {
    void (*fn)(void *);
    void *arg;
    pthread_barrier_t *start;
} tc_thread;

static void *tc_thread_main(void *p)
{
    tc_thread *t = p;
    pthread_barrier_wait(t->start);
    t->fn(t->arg);
    return NULL;
}

void tc_together(int n, void (*fn)(void *arg), void *args, size_t arg_size)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    pthread_t *th = malloc((size_t)n * sizeof *th);
    tc_thread *ts = malloc((size_t)n * sizeof *ts);
    for (int k = 0; k < n; k++) {
        ts[k] = (tc_thread){fn, (char *)args + (size_t)k * arg_size, &start};
        pthread_create(&th[k], NULL, tc_thread_main, &ts[k]);
    }
    for (int k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&start);
    free(th), free(ts);
}
