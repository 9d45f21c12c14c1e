/*
 * Every validation rule of the FlashAttention operators, forward and backward (semantics §0.5,
 * §0.6, §1, §2, §3.2): the code (161001 for a NULL required pointer, 161002 for everything else),
 * the validation order (NULLs first; then the first failing parameter in declaration order,
 * relational checks charged to their last parameter), and a message naming the function and the
 * parameter as that function declares it.  The rules: bad_input_forward.c, bad_input_backward.c;
 * the valid operands they start from: bad_input_fixture.c.
 */
#include "bad_input_fixture.h"

int main(void)
{
    bi_setup();
    fa_bad_input_forward();
    fa_bad_input_backward();
    bi_teardown();
    return tc_summary("cann_fa_bad_input");
}
