/*
 * Status and messages of the face-neutral runtime.  Runtime calls return an fc_rt_status and leave
 * a message (without a function prefix) that the calling face reads with fc_rt_message() and
 * reports in its own words and codes (aclrt*, infinirt*).
 */
#ifndef FC_RUNTIME_STATUS_H
#define FC_RUNTIME_STATUS_H

typedef enum fc_rt_status {
    FC_RT_OK = 0,
    FC_RT_INVALID = 1,    /* bad pointer, range, handle or value */
    FC_RT_NO_MEMORY = 2,  /* allocation failed */
    FC_RT_BAD_DEVICE = 3, /* device id out of range */
    FC_RT_DEVICE = 4      /* the device failed a copy, fill, stream or synchronisation */
} fc_rt_status;

/* Records the message of a failure in the calling thread and returns status. */
fc_rt_status fc_rt_fail(fc_rt_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The calling thread's most recent runtime message ("" when none). */
const char *fc_rt_message(void);

#endif /* FC_RUNTIME_STATUS_H */
