#include "tolerance.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

tc_tol tc_tol_out(tc_dtype out_dtype)
{
    switch (out_dtype) {
    case TC_F16: return (tc_tol){2e-3, 2e-3};
    case TC_BF16: return (tc_tol){1e-2, 1e-2};
    default: return (tc_tol){1e-4, 1e-5};
    }
}

tc_tol tc_tol_max(void) { return (tc_tol){1e-5, 1e-5}; }
tc_tol tc_tol_sum(void) { return (tc_tol){1e-4, 1e-5}; }

bool tc_close(double y, double r, tc_tol t, double M)
{
    if (isnan(r) || isnan(y)) /* NaN exactly where the reference has NaN (semantics §0.3) */
        return isnan(r) && isnan(y);
    if (isinf(r) || isinf(y))
        return y == r;
    return fabs(y - r) <= t.atol * M + t.rtol * fabs(r);
}

double tc_grad_scale(const double *r, int64_t n)
{
    double m = 1;
    for (int64_t k = 0; k < n; k++)
        m = isfinite(r[k]) && fabs(r[k]) > m ? fabs(r[k]) : m; /* non-finite values are compared exactly */
    return m;
}

int64_t tc_compare(const char *what, const double *y, const double *r, int64_t n, tc_tol t, double M)
{
    int64_t bad = 0, first = -1;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        if (tc_close(y[k], r[k], t, M))
            continue;
        if (bad++ == 0)
            first = k;
        const double excess = fabs(y[k] - r[k]) / (t.atol * M + t.rtol * fabs(r[k]));
        worst = isnan(excess) || excess > worst ? excess : worst;
    }
    if (bad)
        TC_CHECK(false, "%s: %lld of %lld values out of tolerance; first [%lld] got %.9g want %.9g; worst %.3gx tol",
                 what, (long long)bad, (long long)n, (long long)first, y[first], r[first], worst);
    else
        TC_CHECK(true, "%s", what);
    return bad;
}

uint32_t tc_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
