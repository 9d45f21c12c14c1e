/* FC_HD marks the core's small inline functions that device code calls too (compiled by nvcc for
 * the CUDA backend, by the C compiler for everything else): one model, two compilers. */
#ifndef FC_CORE_HD_H
#define FC_CORE_HD_H

#ifdef __CUDACC__
#define FC_HD __host__ __device__
#else
#define FC_HD
#endif

#endif /* FC_CORE_HD_H */
