/* flashc-bench --backend cuda (bench/cuda.c, built with the CUDA backend). */
#ifndef FLASHC_BENCH_CUDA_H
#define FLASHC_BENCH_CUDA_H

int bench_cuda_main(int argc, char **argv);
/* The decode cases (bench/cuda_decode.c); returns the number that failed. */
int bench_cuda_decode(const char *filter, int repeat);
/* The sparse forward's and backward's cases (bench/cuda_sparse.c); returns the number that failed. */
int bench_cuda_sparse(const char *filter, int repeat);
/* Median milliseconds of `repeat` calls of run(ctx) after `warmup` untimed ones, each timed with
 * CUDA events on the default stream (bench/cuda_timing.c); −1 when a call returns nonzero or the
 * device reports an error (printed). */
float bench_cuda_median_ms(int warmup, int repeat, int (*run)(void *), void *ctx);

#endif
