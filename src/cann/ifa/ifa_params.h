/*
 * Parameter ids of IncreFlashAttentionV4 (its own family: only this function uses them).  The
 * declaration order and spelled names live in ifa_sig (ifa_signature.c).
 */
#ifndef FC_CANN_IFA_PARAMS_H
#define FC_CANN_IFA_PARAMS_H

typedef enum ifa_param {
    IFA_QUERY,
    IFA_KEY,
    IFA_VALUE,
    IFA_PSE,
    IFA_MASK,
    IFA_ACT_LEN,
    IFA_DEQ_SCALE1,
    IFA_Q_SCALE1,
    IFA_DEQ_SCALE2,
    IFA_Q_SCALE2,
    IFA_Q_OFFSET2,
    IFA_AQ_SCALE,
    IFA_AQ_OFFSET,
    IFA_BLOCK_TABLE,
    IFA_KV_PAD,
    IFA_NUM_HEADS,
    IFA_SCALE,
    IFA_LAYOUT,
    IFA_NUM_KV_HEADS,
    IFA_BLOCK_SIZE,
    IFA_INNER_PRECISE,
    IFA_OUT,
    IFA_WORKSPACE_SIZE,
    IFA_EXECUTOR,
    IFA_NPARAMS
} ifa_param;

#endif /* FC_CANN_IFA_PARAMS_H */
