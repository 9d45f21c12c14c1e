/* flashc-bench --backend cuda (bench/cuda.c, built with the CUDA backend). */
#ifndef FLASHC_BENCH_CUDA_H
#define FLASHC_BENCH_CUDA_H

int bench_cuda_main(int argc, char **argv);

#endif
