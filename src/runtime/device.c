#include "device.h"

#include <pthread.h>
#include <stdlib.h>

#include "devmem.h"
#include "registry.h"

struct fc_rt_context {
    int device;
    int64_t option[FC_RT_OPTIONS];
};

struct fc_rt_stream {
    int device;
    void *native; /* the provider's stream (devmem.h); NULL without a device */
};

static const fc_rt_kind kind_context = {"context"};
static const fc_rt_kind kind_stream = {"stream"};

/* The devices: the CPU's one, or the provider's (at most FC_RT_DEVICES), each with a default context. */
#define FC_RT_DEVICES 16
static fc_rt_context default_ctx[FC_RT_DEVICES];
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

/* Guards option reads and writes against a concurrent context destroy. */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
/* Guards a stream's native handle against a concurrent destroy. */
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local int tl_device;
static _Thread_local fc_rt_context *tl_ctx; /* NULL = the device's default context */

static void register_defaults(void)
{
    for (int d = 0; d < fc_rt_device_count(); d++) {
        default_ctx[d].device = d;
        fc_rt_registry_add(&default_ctx[d], &kind_context);
    }
}

static bool is_default(const fc_rt_context *ctx)
{
    return ctx >= default_ctx && ctx < default_ctx + FC_RT_DEVICES;
}

int fc_rt_device_count(void)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    if (fc_rt_devmem_error())
        return 0;
    const int n = dm ? dm->device_count() : 1;
    return n < FC_RT_DEVICES ? n : FC_RT_DEVICES;
}

fc_rt_status fc_rt_check_device(int device)
{
    const char *err = fc_rt_devmem_error();
    if (err)
        return fc_rt_fail(FC_RT_BAD_DEVICE, "%s", err);
    const int n = fc_rt_device_count();
    if (device < 0 || device >= n)
        return fc_rt_fail(FC_RT_BAD_DEVICE, "device id %d is out of range [0, %d)", device, n);
    return FC_RT_OK;
}

int fc_rt_current_device(void) { return tl_device; }

/* Makes device (checked) the calling thread's device, on the provider too. */
static fc_rt_status make_current(int device)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const char *err = dm ? dm->set_device(device) : NULL;
    if (err)
        return fc_rt_fail(FC_RT_BAD_DEVICE, "%s device %d cannot be made current: %s", dm->name, device, err);
    tl_device = device;
    return FC_RT_OK;
}

fc_rt_status fc_rt_set_device(int device)
{
    fc_rt_status st = fc_rt_check_device(device);
    if (st == FC_RT_OK && (st = make_current(device)) == FC_RT_OK)
        tl_ctx = NULL;
    return st;
}

fc_rt_status fc_rt_device_sync(void)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const char *err = dm ? dm->device_sync() : NULL; /* the CPU's work is done when its call returns */
    return err ? fc_rt_fail(FC_RT_DEVICE, "%s device synchronisation failed: %s", dm->name, err) : FC_RT_OK;
}

fc_rt_status fc_rt_context_create(int device, fc_rt_context **out)
{
    fc_rt_status st = fc_rt_check_device(device);
    if (st != FC_RT_OK)
        return st;
    if ((st = make_current(device)) != FC_RT_OK)
        return st;
    fc_rt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fc_rt_fail(FC_RT_NO_MEMORY, "out of host memory for a context");
    ctx->device = device;
    if (!fc_rt_registry_add(ctx, &kind_context)) {
        free(ctx);
        return fc_rt_fail(FC_RT_NO_MEMORY, "out of host memory for the handle registry");
    }
    tl_device = device;
    tl_ctx = ctx;
    *out = ctx;
    return FC_RT_OK;
}

fc_rt_status fc_rt_context_destroy(fc_rt_context *ctx)
{
    pthread_once(&defaults_once, register_defaults);
    if (is_default(ctx))
        return fc_rt_fail(FC_RT_INVALID, "context %p is a device's default context and cannot be destroyed", (void *)ctx);
    pthread_mutex_lock(&ctx_lock);
    const bool live = fc_rt_registry_remove(ctx, &kind_context);
    pthread_mutex_unlock(&ctx_lock);
    if (!live)
        return fc_rt_fail(FC_RT_INVALID, "context %p is not a live context", (void *)ctx);
    if (tl_ctx == ctx)
        tl_ctx = NULL;
    free(ctx);
    return FC_RT_OK;
}

fc_rt_status fc_rt_context_set_current(fc_rt_context *ctx)
{
    pthread_once(&defaults_once, register_defaults);
    pthread_mutex_lock(&ctx_lock);
    const bool live = fc_rt_registry_has(ctx, &kind_context);
    const int device = live ? ctx->device : 0;
    pthread_mutex_unlock(&ctx_lock);
    if (!live)
        return fc_rt_fail(FC_RT_INVALID, "context %p is not a live context", (void *)ctx);
    const fc_rt_status st = make_current(device);
    if (st != FC_RT_OK)
        return st;
    tl_ctx = is_default(ctx) ? NULL : ctx;
    return FC_RT_OK;
}

/* Caller holds ctx_lock.  A context destroyed by another thread falls back to the default. */
static fc_rt_context *current_locked(void)
{
    if (tl_ctx && fc_rt_registry_has(tl_ctx, &kind_context))
        return tl_ctx;
    return &default_ctx[tl_device];
}

fc_rt_context *fc_rt_context_current(void)
{
    pthread_once(&defaults_once, register_defaults);
    pthread_mutex_lock(&ctx_lock);
    fc_rt_context *ctx = current_locked();
    pthread_mutex_unlock(&ctx_lock);
    return ctx;
}

void fc_rt_option_set(int opt, int64_t value)
{
    if (opt < 0 || opt >= FC_RT_OPTIONS)
        return;
    pthread_once(&defaults_once, register_defaults);
    pthread_mutex_lock(&ctx_lock);
    current_locked()->option[opt] = value;
    pthread_mutex_unlock(&ctx_lock);
}

int64_t fc_rt_option_get(int opt)
{
    if (opt < 0 || opt >= FC_RT_OPTIONS)
        return 0;
    pthread_once(&defaults_once, register_defaults);
    pthread_mutex_lock(&ctx_lock);
    const int64_t v = current_locked()->option[opt];
    pthread_mutex_unlock(&ctx_lock);
    return v;
}

fc_rt_status fc_rt_stream_create(fc_rt_stream **out)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    fc_rt_stream *s = calloc(1, sizeof *s);
    if (!s)
        return fc_rt_fail(FC_RT_NO_MEMORY, "out of host memory for a stream");
    s->device = tl_device;
    const char *err = dm ? dm->stream_create(&s->native) : NULL;
    if (err) {
        free(s);
        return fc_rt_fail(FC_RT_NO_MEMORY, "cannot create a %s stream: %s", dm->name, err);
    }
    if (!fc_rt_registry_add(s, &kind_stream)) {
        if (dm)
            dm->stream_destroy(s->native);
        free(s);
        return fc_rt_fail(FC_RT_NO_MEMORY, "out of host memory for the handle registry");
    }
    *out = s;
    return FC_RT_OK;
}

fc_rt_status fc_rt_stream_destroy(fc_rt_stream *stream)
{
    pthread_mutex_lock(&stream_lock);
    const bool live = fc_rt_registry_remove(stream, &kind_stream);
    pthread_mutex_unlock(&stream_lock);
    if (!live)
        return fc_rt_fail(FC_RT_INVALID, "stream %p is not a live stream", (void *)stream);
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const char *err = dm ? dm->stream_destroy(stream->native) : NULL; /* waits for its queued work */
    free(stream);
    return err ? fc_rt_fail(FC_RT_DEVICE, "destroying the %s stream failed: %s", dm->name, err) : FC_RT_OK;
}

fc_rt_status fc_rt_stream_native(const fc_rt_stream *stream, void **native)
{
    *native = NULL;
    if (!stream)
        return FC_RT_OK; /* the default stream */
    pthread_mutex_lock(&stream_lock);
    const bool live = fc_rt_registry_has(stream, &kind_stream);
    if (live)
        *native = stream->native;
    pthread_mutex_unlock(&stream_lock);
    return live ? FC_RT_OK : fc_rt_fail(FC_RT_INVALID, "stream %p is not a live stream (destroyed or foreign)", (const void *)stream);
}

fc_rt_status fc_rt_stream_sync(const fc_rt_stream *stream)
{
    void *native;
    fc_rt_status st = fc_rt_stream_native(stream, &native);
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const char *err = st == FC_RT_OK && dm ? dm->stream_sync(native) : NULL; /* CPU work ends with its call */
    return err ? fc_rt_fail(FC_RT_DEVICE, "%s stream synchronisation failed: %s", dm->name, err) : st;
}

bool fc_rt_stream_live(const fc_rt_stream *stream)
{
    return stream == NULL || fc_rt_registry_has(stream, &kind_stream);
}
