/*
 * Per-batch facts from lengths: the one place where lengths become fc_batch records, both when a
 * face plans and when a run binds lengths of its own (fc_bindings).  A face describes how its
 * sides are stored and what the batch bases of its mask and bias are (fc_batch_rule, fixed at
 * planning); the lengths may then change from run to run.  Visibility beyond one window for all
 * batches (per-batch windows, prefixes, bias alignment) is the face's, added after.
 */
#ifndef FC_CORE_BATCH_H
#define FC_CORE_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "problem.h"

/* How one side's (query or key/value) batches are stored. */
typedef struct fc_side_rule {
    bool packed;  /* back to back: tokens before batch b = the sum of the earlier lengths; rows = length */
    int64_t rows; /* unpacked: rows per batch (padding rows included); 0 = the batch's length */
    int64_t len;  /* every batch's length when no per-batch lengths are given */
} fc_side_rule;

typedef struct fc_batch_rule {
    int64_t B;
    fc_side_rule q, kv;
    fc_window window;           /* one window for every batch ... */
    int64_t q_start, kv_start;  /* ... over these global positions (fc_lower_window) */
    int64_t mask_sb;            /* the explicit mask of batch b at b·mask_sb ... */
    bool mask_by_tokens;        /* ... or at q_tok·mask_si + kv_tok·mask_sj (packed diagonal blocks) */
    int64_t mask_si, mask_sj;
    int64_t pse_sb;             /* the bias of batch b at b·pse_sb */
    int64_t drop_heads;         /* dropout bits per score position: the query heads (0 = no dropout) */
} fc_batch_rule;

/* A run's lengths, host memory (NULL: every batch has the rule's len; kv_lo NULL: 0). */
typedef struct fc_lengths {
    const int64_t *sq, *skv;
    const int64_t *kv_lo; /* columns before kv_lo[b] are hidden from every row (left padding) */
} fc_lengths;

/* What the records add up to. */
typedef struct fc_batch_totals {
    int64_t max_sq, max_skv; /* max_sq over rows written (padding included) */
    int64_t q_rows;          /* query rows of all batches (statistics rows) */
    int64_t drop_bits;       /* dropout bits the batches use (saturates at INT64_MAX) */
} fc_batch_totals;

/* Fills out[0..B): lengths, rows and token offsets of both sides, the window, the column floor,
 * the mask and bias bases, the dropout bit and statistics row of each batch's first position. */
void fc_batch_facts(const fc_batch_rule *rule, const fc_lengths *len, fc_batch *out, fc_batch_totals *totals);

/* Where a walk over the batches stands: the next batch, and what the batches before it add up to
 * (their tokens on each side, totals) — all a batch's record needs from the earlier ones, so that
 * the records can be made a few at a time into a fixed buffer.  Start from {0}. */
typedef struct fc_batch_cursor {
    int64_t next;
    int64_t q_tok, kv_tok;
    fc_batch_totals totals;
} fc_batch_cursor;

/* The records of batches cur->next .. cur->next + n − 1 (within the rule's B) into out[0..n), the
 * cursor moved past them: in any chunking, the same records as fc_batch_facts. */
void fc_batch_facts_next(const fc_batch_rule *rule, const fc_lengths *len, fc_batch_cursor *cur, fc_batch *out, int64_t n);

/* The same into the problem: p->batch (allocated by the caller), max_sq and max_skv. */
void fc_batch_facts_into(const fc_batch_rule *rule, const fc_lengths *len, fc_problem *p, fc_batch_totals *totals);

#endif /* FC_CORE_BATCH_H */
