/*
 * Devices, contexts and streams of the runtime (semantics §6.5, §7.6), shared by the faces.
 *
 * Without a device provider (devmem.h) there is exactly one device, id 0, the CPU; with one, its
 * devices, made current on the provider too, and streams are the provider's streams.  Each thread has a current device (0 until set)
 * and a current context (the device's default context until one is created or set).  Contexts
 * hold the system options (ACL_OPT_*); streams remember their device.  Contexts and streams are
 * registered handles: unknown or destroyed ones are recognised without being dereferenced.
 */
#ifndef FC_RUNTIME_DEVICE_H
#define FC_RUNTIME_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define FC_RT_OPTIONS 4 /* system options stored per context */

typedef struct fc_rt_context fc_rt_context;
typedef struct fc_rt_stream fc_rt_stream;

int fc_rt_device_count(void);
fc_rt_status fc_rt_check_device(int device);

/* The calling thread's device; setting it makes that device's default context current. */
int fc_rt_current_device(void);
fc_rt_status fc_rt_set_device(int device);

/* Creates a context on device and makes it (and the device) current for the calling thread. */
fc_rt_status fc_rt_context_create(int device, fc_rt_context **out);
/* Destroys a created context; the default contexts cannot be destroyed. */
fc_rt_status fc_rt_context_destroy(fc_rt_context *ctx);
/* Makes a live context (default or created) and its device current for the calling thread. */
fc_rt_status fc_rt_context_set_current(fc_rt_context *ctx);
/* The calling thread's current context (never NULL). */
fc_rt_context *fc_rt_context_current(void);

/* Options of the current context. */
void fc_rt_option_set(int opt, int64_t value);
int64_t fc_rt_option_get(int opt);

fc_rt_status fc_rt_stream_create(fc_rt_stream **out);
fc_rt_status fc_rt_stream_destroy(fc_rt_stream *stream);
/* Whether stream is a live stream (NULL, the default stream, counts as live). */
bool fc_rt_stream_live(const fc_rt_stream *stream);
/* The provider's stream behind a live stream (NULL for the default stream and without a device);
 * FC_RT_INVALID when stream is not live. */
fc_rt_status fc_rt_stream_native(const fc_rt_stream *stream, void **native);
/* Waits for the work queued on a live stream (the default stream when NULL). */
fc_rt_status fc_rt_stream_sync(const fc_rt_stream *stream);
/* Waits for all work on the current device. */
fc_rt_status fc_rt_device_sync(void);

#endif /* FC_RUNTIME_DEVICE_H */
