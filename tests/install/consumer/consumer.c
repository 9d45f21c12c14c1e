/* An installed flashc used from C: the run-time version is the one installed (argv[1]), and one
 * attention call runs — with a single key every query row returns the value row exactly. */
#include <stdio.h>
#include <string.h>

#include <flashc.h>

int main(int argc, char **argv)
{
    enum { D = 8 };
    float q[2 * D], k[D], v[D], out[2 * D];
    for (int e = 0; e < D; e++)
        q[e] = q[D + e] = 0.25f * (float)e, k[e] = 1.0f - 0.1f * (float)e, v[e] = 3.0f + (float)e;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = 1, d.kv_heads = 1, d.head_dim = D, d.q_len = 2, d.kv_len = 1;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, 2, D);
    d.k = fc_tensor_bnsd(k, FC_F32, 1, 1, D);
    d.v = fc_tensor_bnsd(v, FC_F32, 1, 1, D);
    d.out = fc_tensor_bnsd(out, FC_F32, 1, 2, D);
    if (fc_attention(&d) != FC_OK) {
        fprintf(stderr, "consumer: fc_attention: %s\n", fc_last_error());
        return 1;
    }
    if (memcmp(out, v, sizeof v) != 0 || memcmp(out + D, v, sizeof v) != 0) {
        fprintf(stderr, "consumer: a single key must give its value row\n");
        return 1;
    }
    if (argc > 1 && strcmp(fc_version_string(), argv[1]) != 0) {
        fprintf(stderr, "consumer: loaded flashc %s, installed %s\n", fc_version_string(), argv[1]);
        return 1;
    }
    printf("consumer (C): flashc %s on %s\n", fc_version_string(), fc_cpu_isa());
    return 0;
}
