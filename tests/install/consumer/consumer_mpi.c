/* An installed flashc_mpi used from C: one ring forward over every rank of MPI_COMM_WORLD, each
 * holding one key; with keys that all score alike, every query row returns the values' mean. */
#include <math.h>
#include <stdio.h>

#include <flashc_mpi.h>

int main(int argc, char **argv)
{
    enum { D = 4 };
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    float q[D] = {0}, k[D] = {0}, v[D], out[D];
    for (int e = 0; e < D; e++)
        v[e] = (float)(rank * D + e);
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = 1, d.kv_heads = 1, d.head_dim = D, d.q_len = 1, d.kv_len = 1;
    d.vis.q_start = d.vis.kv_start = rank;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, 1, D);
    d.k = fc_tensor_bnsd(k, FC_F32, 1, 1, D);
    d.v = fc_tensor_bnsd(v, FC_F32, 1, 1, D);
    d.out = fc_tensor_bnsd(out, FC_F32, 1, 1, D);
    fc_ring_options o = fc_ring_options_init();
    o.timeout_s = 60;
    int bad = fc_ring_attention(&d, &o, MPI_COMM_WORLD) != FC_OK;
    if (bad)
        fprintf(stderr, "consumer_mpi: %s\n", fc_ring_last_error());
    for (int e = 0; e < D && !bad; e++) /* mean over ranks of r·D + e */
        bad = fabsf(out[e] - ((float)(ranks - 1) * D / 2 + (float)e)) > 1e-4f;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    if (any && rank == 0)
        fprintf(stderr, "consumer_mpi: wrong ring output\n");
    return any;
}
