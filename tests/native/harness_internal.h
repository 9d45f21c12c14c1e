/* Harness internals: buffer geometry of every operand, the library's buffers of one run, output
 * sentinels, and the element checks. */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_INTERNAL_H
#define FLASHC_TESTS_NATIVE_HARNESS_INTERNAL_H

#include "common/halfconv.h"
#include "common/tolerance.h"
#include "harness.h"
#include "reference/reference.h"
#include "reference/rules_native.h"

typedef struct nt_geom {
    int64_t sb, sh, ss, sd; /* element strides; packed: sb is a bogus value the library must ignore */
    int64_t count;          /* elements of the buffer */
} nt_geom;

typedef enum { NT_Q, NT_K, NT_V, NT_QR, NT_KR, NT_OUT } nt_operand;

/* Strides of one sequence operand of the case (layout, padding, feature stride, broadcasts). */
nt_geom nt_operand_geom(const nt_case *c, const nt_data *d, nt_operand which);
/* Element offset of logical (b, n, s, e) of an operand. */
int64_t nt_offset(const nt_case *c, const nt_data *d, const nt_geom *g, nt_operand which, int b, int n, int s, int e);
/* Tokens of batches before b on the query / kv side (packed base offsets). */
int64_t nt_tokens_before(const int *lens, int b);
int nt_total(const int *lens, int B);

tc_dtype nt_tc(fc_dtype t);
/* Statistics: element offset of (b, n1, i, replica 0) and the total element count. */
int64_t nt_stat_offset(const nt_case *c, const nt_data *d, int b, int n1, int i);
int64_t nt_stat_count(const nt_case *c, const nt_data *d);
int nt_replicas(const nt_case *c);
/* Rows of batch b in the output (padded: Sq incl. padding rows; packed: its length). */
int nt_q_rows(const nt_case *c, const nt_data *d, int b);

/* The buffers handed to the library in one run (freed together by nt_bufs_free). */
typedef struct nt_bufs {
    void *q, *k, *v, *qr, *kr, *out, *bias;
    float *smax, *ssum;
    int64_t *q_lens, *kv_lens;
    nt_geom gq, gk, gv, gqr, gkr, gout;
    int64_t stat_n;
    void **k_batches, **v_batches;  /* per-batch storage (nbatches each) */
    int64_t nbatches;
    void *kdq[2], *vdq[2], *oq[2];  /* affine maps in their dtype */
    void *sparse;                   /* index buffer in the case's index dtype */
} nt_bufs;

/* Element size of an fc_dtype (the tests' own table). */
size_t nt_dtype_bytes(fc_dtype t);

/* The description of one run of the case on d, with its buffers in L (output and statistics
 * sentinel-filled); nt_bufs_free releases them. */
fc_attention_desc nt_make_desc(const nt_case *c, const nt_data *d, nt_bufs *L);
void nt_bufs_free(nt_bufs *L);
/* An operand's buffer in the case's layout (the case's dtype, or int8 raw values for FC_I8 key /
 * value), NaN in every gap; g receives its geometry. */
void *nt_build_input(const nt_case *c, const nt_data *d, nt_operand which, const double *logical, fc_dtype dt, nt_geom *g);

/* The reference problem of a case (dense: ref_fwd with the native rules plugged in). */
typedef struct nt_ref {
    ref_fwd f;
    ref_native rn;
    ref_window *bw;
    double *slopes, *sink;
} nt_ref;
void nt_ref_init(const nt_case *c, const nt_data *d, nt_ref *R);
void nt_ref_free(nt_ref *R);
/* Fills r->ref_out, ref_max, ref_sum (logical rows) and nvis (−1 = padding row) for the case:
 * dense or sparse reference. */
void nt_run_reference(const nt_case *c, const nt_data *d, nt_result *r);
/* Runs the plan of a (forward) with an exact-size workspace, or fc_attention when oneshot. */
fc_status nt_run_library(const nt_case *c, const fc_attention_desc *a, size_t *ws_bytes);
/* Runs a case's description in place of nt_run_library when set (NULL: nt_run_library): a test of
 * another backend copies L's buffers to that backend's memory, runs there and copies the outputs
 * and statistics back into L (its gaps and guards included, so that the checks see every write). */
typedef fc_status (*nt_runner_fn)(const nt_case *c, const nt_data *d, const fc_attention_desc *a, nt_bufs *L,
                                  size_t *ws_bytes);
extern nt_runner_fn nt_runner;
/* The case on the CPU backend and then `runs` (1 or 2) times through `runner`, each against the
 * reference (nt_execute's checks); the first run through `runner` against the CPU's results
 * (tolerance of the output dtype; statistics when the case writes them) and, with two runs, the
 * two bit for bit. */
void nt_run_elsewhere(const nt_case *c, nt_runner_fn runner, int runs);
/* The same over prepared (possibly edited) data, which stays the caller's. */
void nt_run_elsewhere_on(const nt_case *c, const nt_data *d, nt_runner_fn runner, int runs);
/* Prints the case (after a failure). */
void nt_describe(const nt_case *c);

/* An int8 output's tolerance (against the quantised reference, or another backend): one step — a
 * value near a rounding boundary may round either way. */
#define NT_I8_TOL ((tc_tol){0, 1})

/* Statistics buffers carry this many guard elements after the last slot. */
#define NT_STAT_GUARD 16

/* Sentinels: NaN payloads no kernel produces, so an unwritten output element is recognisable
 * (FC_I8 outputs: the byte NT_SENT_I8, which is also a valid value). */
#define NT_SENT_I8 0x5A
void nt_fill_sentinel(fc_dtype dt, void *buf, int64_t n);
bool nt_is_sentinel(fc_dtype dt, const void *buf, int64_t k);
void *nt_xmalloc(size_t n); /* aborts when out of memory */

/* Compares the library's outputs in L with the reference results in r (filled by the run) and
 * copies the library's logical outputs into r. */
void nt_check_outputs(const nt_case *c, const nt_data *d, const nt_bufs *L, nt_result *r);

#endif
