/*
 * The backward harness (flashc.h fc_plan_create_backward / fc_attention_backward), on top of the
 * forward harness: a forward nt_case is prepared and run (and checked) as usual; its library
 * output and statistics become desc.out / desc.stats of the backward, exactly as the forward
 * wrote them; a seeded random d_out is laid out like desc.out; the gradients go to sentinel-filled
 * buffers with their own strides.  The reference backward (reference/backward.h, or
 * reference/sparse.h for sparse cases) gets the same values, and every gradient element is
 * checked:
 *   - within the §0.4 gradient tolerance (M = max(1, max |reference|) per tensor);
 *   - dq rows of fully masked and padding rows exactly 0;
 *   - every logical element written (no sentinel left), no gap or guard written, dsink guard
 *     untouched (and the whole dsink buffer untouched when the problem has no sink);
 *   - desc.out and desc.stats unchanged by the backward.
 */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_BWD_H
#define FLASHC_TESTS_NATIVE_HARNESS_BWD_H

#include "harness.h"

struct nt_bufs; /* harness_internal.h */

/* A backward run elsewhere (a GPU, an emulated kernel) in place of the library's: the case, its
 * data and forward buffers, the description and gradients as the library would get them, the
 * gradients' and d_out's sizes in bytes (dq, dk, dv, dq_rope, dk_rope, d_out: for copies), and a
 * launch configuration (0, 1, …: each must give the same bits). */
typedef fc_status (*nt_bwd_runner_fn)(const nt_case *c, const nt_data *d, const fc_attention_desc *a, const struct nt_bufs *L,
                                      const fc_attention_grads *gr, const size_t bytes[6], int config);

typedef struct nt_bwd {
    fc_dtype grad_dt;        /* dtype of dq, dk, dv and the rope gradients */
    bool dout_dt_set;        /* d_out dtype dout_dt (else the output dtype) */
    fc_dtype dout_dt;
    bool grad_layout_set;    /* gradients in grad_layout (padded problems), else the operands' layouts */
    nt_layout grad_layout;
    int grad_pad;            /* extra elements on every gradient stride */
    float stat_shift;        /* given statistics: max + shift, sum·1.3 (visible rows): used as given */
    bool poison_replicas;    /* statistics replicas other than 0 hold NaN (only replica 0 is read) */
    bool dsink_without_sink; /* pass a dsink buffer although there is no sink: it stays untouched */
    int threads;
    bool check_threads;      /* run again with another thread count: bit-identical gradients */
    bool oneshot;            /* fc_attention_backward */
    bool use_io;             /* plan on decoy (NaN) inputs, output, statistics and gradients, run with the
                                real ones through fc_attention_io */
    const char *may_reject;  /* FC_ERR_INVALID_ARG naming this is an accepted outcome of the backward */
    /* when set: the backward runs there (configurations 0 .. runner_configs − 1, bit for bit the
     * same), is checked against the reference as usual and against the CPU backend's gradients */
    nt_bwd_runner_fn runner;
    int runner_configs;
    /* optional edits (non-finite values, semantics §0.3): the inputs after nt_prepare, the random
     * d_out (reference layout), and each row's given statistics (every replica) */
    void (*edit_data)(const nt_case *c, nt_data *d);
    void (*edit_dout)(const nt_case *c, const nt_data *d, double *dout);
    void (*edit_stats)(const nt_case *c, int b, int n, int i, float *max, float *sum);
    int64_t *ref_nonfinite, *ref_finite; /* when set: += the reference gradient elements of each kind */
} nt_bwd;

nt_bwd nt_bwd_default(void);

/* Forward (checked), backward, reference, checks; returns the number of failed checks. */
int64_t nt_bwd_run(const nt_case *c, const nt_bwd *o);

/* Central finite differences of the library's own forward (L = Σ d_out·out over real rows)
 * against the library's backward, for tiny fp32 cases without broadcast strides (§9 b). */
int64_t nt_bwd_finite_differences(const nt_case *c);

#endif
