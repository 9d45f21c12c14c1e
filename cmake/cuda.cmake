# The CUDA backend's device code (src/cuda/*.cu): sm_80 (mma.sync) and sm_90a unless
# CMAKE_CUDA_ARCHITECTURES is given; the CUDA runtime is linked statically so that one
# libflashc.so loads on machines without a driver.  The Hopper kernels (src/cuda/hopper/: TMA,
# wgmma, warp specialisation) are built for sm_90a alone, on CUTLASS's CuTe headers
# (FLASHC_CUTLASS_DIR, or tools/deps.sh's copy in .deps/cutlass); without them the build keeps
# the sm_80 kernels only.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # nvcc 13 rejects the bare sm_90a spelling, so the gencode pairs are spelled out.
  set(FLASHC_CUDA_GENCODE "SHELL:-gencode arch=compute_80,code=sm_80" "SHELL:-gencode arch=compute_90a,code=sm_90a")
  set(FLASHC_CUDA_SM90 ON)
  set(CMAKE_CUDA_ARCHITECTURES OFF)
else()
  set(FLASHC_CUDA_SM90 OFF)
  if("90a" IN_LIST CMAKE_CUDA_ARCHITECTURES)
    set(FLASHC_CUDA_SM90 ON)
  endif()
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_RUNTIME_LIBRARY Static)

# Every CUDA object library compiles through tools/cuda-budget.sh with src/cuda/budget.txt: ptxas's
# report of each kernel (registers, spills, stack) must stay inside its line, so a build that spills
# fails here, without a GPU.
set(FLASHC_CUDA_BUDGET "${PROJECT_SOURCE_DIR}/tools/cuda-budget.sh;${PROJECT_SOURCE_DIR}/src/cuda/budget.txt")
add_library(flashc_cuda OBJECT src/cuda/runtime.cu src/cuda/devmem.cu src/cuda/launch.cu src/cuda/forward.cu
  src/cuda/backward.cu src/cuda/plan_facts.cu)
target_include_directories(flashc_cuda PRIVATE include src)
# --threads 0: the architectures compile in parallel
# no C++ runtime: C consumers of the static archive link without libstdc++
target_compile_options(flashc_cuda PRIVATE ${FLASHC_CUDA_GENCODE} --threads=0 -Xptxas=-v
  -Xcompiler=-fvisibility=hidden,-fno-threadsafe-statics,-fno-exceptions)
set_target_properties(flashc_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_COMPILER_LAUNCHER "${FLASHC_CUDA_BUDGET}")

# The decode kernels (a library of their own: their instantiations compile in parallel with the rest).
add_library(flashc_cuda_decode OBJECT src/cuda/decode.cu src/cuda/decode_mma.cu)
target_include_directories(flashc_cuda_decode PRIVATE include src)
target_compile_options(flashc_cuda_decode PRIVATE ${FLASHC_CUDA_GENCODE} --threads=0 -Xptxas=-v
  -Xcompiler=-fvisibility=hidden,-fno-threadsafe-statics,-fno-exceptions)
set_target_properties(flashc_cuda_decode PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_COMPILER_LAUNCHER "${FLASHC_CUDA_BUDGET}")

# The sparse forward and backward (SparseFlashAttention and its gradient; their own library, compiled in parallel with the rest).
add_library(flashc_cuda_sparse OBJECT src/cuda/sparse_fwd.cu src/cuda/sparse_bwd.cu)
target_include_directories(flashc_cuda_sparse PRIVATE include src)
target_compile_options(flashc_cuda_sparse PRIVATE ${FLASHC_CUDA_GENCODE} --threads=0 -Xptxas=-v
  -Xcompiler=-fvisibility=hidden,-fno-threadsafe-statics,-fno-exceptions)
set_target_properties(flashc_cuda_sparse PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_COMPILER_LAUNCHER "${FLASHC_CUDA_BUDGET}")

# --- the sm_90a kernels on CuTe ---------------------------------------------------------------------
set(FLASHC_CUTLASS_DIR "" CACHE PATH "CUTLASS include directory (holding cute/tensor.hpp) for the sm_90a kernels")
if(NOT FLASHC_CUTLASS_DIR AND EXISTS "${PROJECT_SOURCE_DIR}/.deps/cutlass/include/cute/tensor.hpp")
  set(FLASHC_CUTLASS_DIR "${PROJECT_SOURCE_DIR}/.deps/cutlass/include")
endif()
set(FLASHC_WITH_HOPPER OFF)
if(FLASHC_CUDA_SM90 AND FLASHC_CUTLASS_DIR AND EXISTS "${FLASHC_CUTLASS_DIR}/cute/tensor.hpp")
  set(FLASHC_WITH_HOPPER ON)
  # CONFIGURE_DEPENDS: a file added later joins an existing build (else it links without it)
  file(GLOB FLASHC_HOPPER_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/hopper/*.cu)
  add_library(flashc_cuda_sm90 OBJECT ${FLASHC_HOPPER_SOURCES})
  target_include_directories(flashc_cuda_sm90 PRIVATE include src)
  target_include_directories(flashc_cuda_sm90 SYSTEM PRIVATE ${FLASHC_CUTLASS_DIR})
  # no_ioinit.h: CuTe includes <iostream>, whose static initialiser would tie libflashc to libstdc++
  target_compile_options(flashc_cuda_sm90 PRIVATE "SHELL:-gencode arch=compute_90a,code=sm_90a" --expt-relaxed-constexpr
    "SHELL:--pre-include ${PROJECT_SOURCE_DIR}/src/cuda/hopper/no_ioinit.h"
    -Xptxas=-v -Xcompiler=-fvisibility=hidden,-fno-threadsafe-statics)
  # CUDA_ARCHITECTURES OFF: only the gencode above, whatever CMAKE_CUDA_ARCHITECTURES lists ("80;90a"
  # would compile these sm_90a-only sources for compute_80 too, and ptxas rejects them)
  set_target_properties(flashc_cuda_sm90 PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_ARCHITECTURES OFF
    CUDA_COMPILER_LAUNCHER "${FLASHC_CUDA_BUDGET}")
  target_compile_definitions(flashc_cuda PRIVATE FLASHC_HOPPER=1)
endif()
message(STATUS "flashc: sm_90a kernels (CuTe) ${FLASHC_WITH_HOPPER} ${FLASHC_CUTLASS_DIR}")
set(FLASHC_PC_CUDA "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lpthread")
