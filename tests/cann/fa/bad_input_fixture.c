/* The operands of bad_input_fixture.h. */
#include "bad_input_fixture.h"

dev_tensor tq, tk, tmax, tsum, nq, nk, nmax, nsum, nqr, nkr;
aclIntArray *aq, *akv;
dev_tensor tv, tout, nv, nout;
dev_tensor tv6, tdy, tin, tdq, tdk, tdv, nv6, ndy, nin, ndq, ndk, ndv, ndqr, ndkr, sink, dsink;
uint64_t ws;
aclOpExecutor *ex;
char bnsd[] = "BNSD", tnd_s[] = "TND";

dev_tensor bi_tensor(aclDataType dt, int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t dims[4] = {a, b, c, d};
    return dt_simple(dt, rank, dims);
}

static dev_tensor *const all[] = {&tq,  &tk,  &tmax, &tsum, &nq,  &nk,  &nmax, &nsum, &nqr,  &nkr,  &tv,  &tout,
                                  &nv,  &nout, &tv6, &tdy,  &tin, &tdq, &tdk,  &tdv,  &nv6,  &ndy,  &nin, &ndq,
                                  &ndk, &ndv, &ndqr, &ndkr, &sink, &dsink};

void bi_setup(void)
{
    tq = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D), tk = bi_tensor(ACL_FLOAT, 4, B, N2, S2, D);
    tmax = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 8), tsum = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 8);
    nq = bi_tensor(ACL_FLOAT, 3, T1, N1, D, 0), nk = bi_tensor(ACL_FLOAT, 3, T2, N2, D, 0);
    nmax = bi_tensor(ACL_FLOAT, 3, T1, N1, 8, 0), nsum = bi_tensor(ACL_FLOAT, 3, T1, N1, 8, 0);
    nqr = bi_tensor(ACL_FLOAT, 3, T1, N1, DR, 0), nkr = bi_tensor(ACL_FLOAT, 3, T2, N2, DR, 0);
    tv = bi_tensor(ACL_FLOAT, 4, B, N2, S2, D), tout = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D);
    nv = bi_tensor(ACL_FLOAT, 3, T2, N2, D, 0), nout = bi_tensor(ACL_FLOAT, 3, T1, N1, D, 0);
    tv6 = bi_tensor(ACL_FLOAT, 4, B, N2, S2, DV);
    tdy = bi_tensor(ACL_FLOAT, 4, B, N1, S1, DV), tin = bi_tensor(ACL_FLOAT, 4, B, N1, S1, DV);
    tdq = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D), tdk = bi_tensor(ACL_FLOAT, 4, B, N2, S2, D);
    tdv = bi_tensor(ACL_FLOAT, 4, B, N2, S2, DV);
    nv6 = bi_tensor(ACL_FLOAT, 3, T2, N2, DV, 0);
    ndy = bi_tensor(ACL_FLOAT, 3, T1, N1, DV, 0), nin = bi_tensor(ACL_FLOAT, 3, T1, N1, DV, 0);
    ndq = bi_tensor(ACL_FLOAT, 3, T1, N1, D, 0), ndk = bi_tensor(ACL_FLOAT, 3, T2, N2, D, 0);
    ndv = bi_tensor(ACL_FLOAT, 3, T2, N2, DV, 0);
    ndqr = bi_tensor(ACL_FLOAT, 3, T1, N1, DR, 0), ndkr = bi_tensor(ACL_FLOAT, 3, T2, N2, DR, 0);
    sink = bi_tensor(ACL_FLOAT, 1, N1, 0, 0, 0), dsink = bi_tensor(ACL_FLOAT, 1, N1, 0, 0, 0);
    const int64_t cq[] = {2, 6}, ck[] = {4, 9};
    aq = aclCreateIntArray(cq, 2), akv = aclCreateIntArray(ck, 2);
}

void bi_teardown(void)
{
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
    aclDestroyIntArray(aq), aclDestroyIntArray(akv);
}
