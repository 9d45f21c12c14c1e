#include "dropout.h"

bool ref_keep_bit(const uint8_t *bits, int64_t e) { return (bits[e / 8] >> (e % 8)) & 1; }

int64_t ref_drop_index(int N1, const int *S1, const int *S2, int b, int n1, int i, int j)
{
    int64_t before = 0;
    for (int c = 0; c < b; c++)
        before += (int64_t)N1 * S1[c] * S2[c];
    return before + ((int64_t)n1 * S1[b] + i) * S2[b] + j;
}

int64_t ref_drop_bits(int B, int N1, const int *S1, const int *S2)
{
    int64_t e = 0;
    for (int b = 0; b < B; b++)
        e += (int64_t)N1 * S1[b] * S2[b];
    return e;
}

int64_t ref_drop_bytes(int B, int N1, const int *S1, const int *S2) { return (ref_drop_bits(B, N1, S1, S2) + 7) / 8; }
