/* FLASHC_ISA read from the environment (CTest sets it): "reject" expects every plan to fail with
 * FC_ERR_BACKEND and a message naming the variable until fc_cpu_force_isa() pins a path; "default"
 * (with an empty variable) expects the default path, when paths are named after it the first of
 * them this CPU runs (the last one whether it runs or not); any other
 * argument is the path it must select (77 where this CPU does not run it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flashc.h>

#include "common/check.h"

enum { S = 4, D = 8 };

static fc_status attend(void)
{
    static float q[S * D], k[S * D], v[S * D], out[S * D];
    for (int i = 0; i < S * D; i++)
        q[i] = k[i] = v[i] = (float)(i % 7) / 7.0f;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = 1, d.kv_heads = 1, d.head_dim = D, d.q_len = S, d.kv_len = S;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, S, D);
    d.k = fc_tensor_bnsd(k, FC_F32, 1, S, D);
    d.v = fc_tensor_bnsd(v, FC_F32, 1, S, D);
    d.out = fc_tensor_bnsd(out, FC_F32, 1, S, D);
    return fc_attention(&d);
}

int main(int argc, char **argv)
{
    const char *env = getenv("FLASHC_ISA");
    if (argc < 2 || !env) {
        fprintf(stderr, "usage: FLASHC_ISA=name test_native_isa_env reject|default [paths...]|<expected path>\n");
        return 2;
    }
    if (strcmp(argv[1], "reject") == 0) {
        for (int k = 0; k < 2; k++) { /* not only the first call */
            const fc_status st = attend();
            const char *msg = fc_last_error();
            TC_CHECK(st == FC_ERR_BACKEND, "call %d: FLASHC_ISA=%s gave %s, want FC_ERR_BACKEND", k, env,
                     fc_status_name(st));
            TC_CHECK(strstr(msg, "FLASHC_ISA=") && strstr(msg, env), "the message must name FLASHC_ISA=%s: %s", env, msg);
        }
        TC_CHECK(fc_cpu_force_isa("scalar") && attend() == FC_OK, "fc_cpu_force_isa() overrides the variable: %s",
                 fc_last_error());
        TC_CHECK(fc_cpu_force_isa(NULL) && attend() == FC_ERR_BACKEND, "unpinned, the variable is checked again");
    } else {
        if (strcmp(argv[1], "default") != 0 && !(fc_cpu_force_isa(argv[1]) && fc_cpu_force_isa(NULL))) {
            printf("kernel path %s is not run by this CPU: skipped\n", argv[1]);
            return TC_SKIP;
        }
        const fc_status st = attend();
        TC_CHECK(st == FC_OK, "FLASHC_ISA=%s: %s %s", env, fc_status_name(st), fc_last_error());
        if (strcmp(argv[1], "default") != 0)
            TC_CHECK(strcmp(fc_cpu_isa(), argv[1]) == 0, "FLASHC_ISA=%s selected %s, want %s", env, fc_cpu_isa(),
                     argv[1]);
        else if (argc > 2) { /* the paths the default must be on this kind of CPU: the first one it runs */
            int want = 2;
            while (want + 1 < argc && !(fc_cpu_force_isa(argv[want]) && fc_cpu_force_isa(NULL)))
                want++;
            TC_CHECK(strcmp(fc_cpu_isa(), argv[want]) == 0, "the default is %s, want %s", fc_cpu_isa(), argv[want]);
        }
    }
    return tc_summary("native_isa_env");
}
