/*
 * A run's bad block-table entry (or run-time kv length), found on the GPU by the kernels that read
 * paged key/value (decode_common.cuh: dec_check_table, dec_fault, dec_report) and returned by the
 * next run of the plan: the host-mapped report a plan owns and its reading (decode.cu), shared by
 * the decode and the paged forward.
 */
#ifndef FC_CUDA_TABLE_REPORT_H
#define FC_CUDA_TABLE_REPORT_H

extern "C" {
#include "../core/error.h"
}
#include "../core/problem.h"

namespace fc_cuda {
struct DecReport;
}

/* A zeroed host-mapped report (*host, freed with cudaFreeHost) and its device address. */
fc_status fc_cuda_report_alloc(fc_cuda::DecReport **host, fc_cuda::DecReport **dev, const char *who);

/* FC_ERR_INVALID_ARG naming the entry (or length: planned, the plan's facts) of a report that no
 * earlier call returned (*seen counts those), once; FC_OK when there is none.  planned NULL: the
 * reporting run wrote none of its outputs (else: not the batch's rows). */
fc_status fc_cuda_report_check(const fc_cuda::DecReport *report, unsigned *seen, const fc_problem *p, const fc_batch *planned);

#endif /* FC_CUDA_TABLE_REPORT_H */
