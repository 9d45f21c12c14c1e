/* A bounded ring of messages per thread; the oldest are dropped beyond CANN_ERR_KEEP. */
#include "errmsg.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANN_ERR_KEEP 32
#define CANN_ERR_LEN 512

typedef struct err_queue {
    char text[CANN_ERR_KEEP][CANN_ERR_LEN];
    int first, count;   /* oldest message, number pending */
    char *retrieved;    /* the string handed out by the last retrieval */
} err_queue;

static pthread_key_t queue_key;
static pthread_once_t queue_once = PTHREAD_ONCE_INIT;

static void queue_free(void *q)
{
    if (q) {
        free(((err_queue *)q)->retrieved);
        free(q);
    }
}

static void queue_key_create(void) { pthread_key_create(&queue_key, queue_free); }

static err_queue *queue_get(void)
{
    pthread_once(&queue_once, queue_key_create);
    err_queue *q = pthread_getspecific(queue_key);
    if (!q && (q = calloc(1, sizeof *q)) != NULL)
        pthread_setspecific(queue_key, q);
    return q;
}

static void push(const char *fmt, va_list ap)
{
    err_queue *q = queue_get();
    if (!q)
        return;
    if (q->count == CANN_ERR_KEEP) { /* drop the oldest */
        q->first = (q->first + 1) % CANN_ERR_KEEP;
        q->count--;
    }
    char *slot = q->text[(q->first + q->count) % CANN_ERR_KEEP];
    vsnprintf(slot, CANN_ERR_LEN, fmt, ap);
    for (char *c = slot; *c; c++) /* one message per line */
        if (*c == '\n')
            *c = ' ';
    q->count++;
}

int cann_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    push(fmt, ap);
    va_end(ap);
    return code;
}

void *cann_fail_null(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    push(fmt, ap);
    va_end(ap);
    return NULL;
}

void cann_fail_append(const char *fmt, ...)
{
    err_queue *q = queue_get();
    if (!q || q->count == 0)
        return;
    char *slot = q->text[(q->first + q->count - 1) % CANN_ERR_KEEP];
    const size_t used = strlen(slot);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(slot + used, CANN_ERR_LEN - used, fmt, ap);
    va_end(ap);
}

const char *aclGetRecentErrMsg(void)
{
    err_queue *q = queue_get();
    if (!q)
        return NULL;
    free(q->retrieved);
    q->retrieved = NULL;
    if (q->count == 0)
        return NULL;
    size_t total = 1;
    for (int k = 0; k < q->count; k++)
        total += strlen(q->text[(q->first + k) % CANN_ERR_KEEP]) + 1;
    char *out = malloc(total);
    if (!out)
        return NULL;
    char *cur = out;
    for (int k = q->count - 1; k >= 0; k--) { /* newest first */
        const char *m = q->text[(q->first + k) % CANN_ERR_KEEP];
        const size_t n = strlen(m);
        memcpy(cur, m, n);
        cur += n;
        *cur++ = k ? '\n' : '\0';
    }
    q->retrieved = out;
    q->first = q->count = 0;
    return out;
}
