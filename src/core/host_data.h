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

/* Sum over rows and heads of the visible columns, counted the way the kernels walk them. */
double fc_host_visible(const fc_problem *prob);

#endif /* FC_CORE_HOST_DATA_H */
