/*
 * Force-included into the sm_90a translation units (cmake/cuda.cmake): CuTe's config includes
 * <iostream>, whose static ios_base::Init object would make libflashc need libstdc++ at load
 * time.  This declares what <iostream> declares, without that object, and stands in for it; a
 * CuTe host helper that really used std::cerr would show as an undefined symbol (the library is
 * checked for C++ runtime symbols by the ctest cuda_no_cxx_runtime).
 */
#ifndef FC_CUDA_HOPPER_NO_IOINIT_H
#define FC_CUDA_HOPPER_NO_IOINIT_H
#if defined(__cplusplus) && defined(__GLIBCXX__) && !defined(_GLIBCXX_IOSTREAM)
#include <istream>
#include <ostream>
#define _GLIBCXX_IOSTREAM 1
namespace std {
extern istream cin;
extern ostream cout, cerr, clog;
} // namespace std
#endif
#endif
