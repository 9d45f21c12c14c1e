/*
 * Walks over a run's data in host memory: block-table range checks and the visible-score count
 * (sparse index rows included).  Backends whose data lives in host memory use them as their
 * check_data / visible operations (backend.h); a device backend brings its own.
 */
#ifndef FC_CORE_HOST_DATA_H
#define FC_CORE_HOST_DATA_H

#include "problem.h"

/* FC_ERR_INVALID_ARG naming the entry when a block-table entry a batch uses is outside
 * [0, blocks); fn names the caller in the message. */
fc_status fc_host_check_pages(const char *fn, const fc_problem *run);
/* The same for batch b alone, with kv length skv (a device backend that derives a run's facts a
 * batch at a time, over host copies of the tables). */
fc_status fc_host_check_batch_pages(const char *fn, const fc_problem *run, int64_t b, int64_t skv);

/* Sum over rows and heads of the visible columns, counted the way the kernels walk them. */
double fc_host_visible(const fc_problem *prob);

#endif /* FC_CORE_HOST_DATA_H */
