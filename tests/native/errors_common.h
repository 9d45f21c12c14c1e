/* Shared pieces of the bad-input tests: a valid problem with static buffers, its options, and
 * the expectation helpers (status, message naming the field, *plan left NULL, fc_attention agrees). */
#ifndef FLASHC_TESTS_NATIVE_ERRORS_COMMON_H
#define FLASHC_TESTS_NATIVE_ERRORS_COMMON_H

#include <stdint.h>

#include "flashc.h"

enum { B = 2, NQ = 4, NKV = 2, D = 8, S = 6 };

extern float q[B * NQ * S * D], k[B * NKV * S * D], v[B * NKV * S * D], qr[B * NQ * S * D], kr[B * NKV * S * D];
extern float out[B * NQ * S * D], bias[B * NQ * S * S], slopes[NQ], smax[B * NQ * S * 8], ssum[B * NQ * S * 8];
extern uint8_t mask[S * S], keep[(B * NQ * S * S + 7) / 8];

/* A valid padded problem without options; each test breaks exactly one thing. */
fc_attention_desc valid(void);
/* Turns on bias, ALiBi, mask, dropout and statistics (still valid). */
void add_options(fc_attention_desc *d);

#define EXPECT(want, field, desc) expect_at(__LINE__, want, field, NULL, desc, NULL)
#define EXPECT2(want, field, field2, desc) expect_at(__LINE__, want, field, field2, desc, NULL)
#define EXPECT_OPT(want, field, desc, opt) expect_at(__LINE__, want, field, NULL, desc, opt)
#define EXPECT_OK(desc) expect_ok(__LINE__, desc)

/* fc_plan_create gives `want` with a message naming field (and field2); fc_attention agrees. */
void expect_at(int line, fc_status want, const char *field, const char *field2, fc_attention_desc d,
               const fc_options *opt);
/* fc_plan_create accepts d and leaves no message. */
void expect_ok(int line, fc_attention_desc d);

#endif
