# The CUDA backend's device code (src/cuda/*.cu): sm_80 (mma.sync) and sm_90a unless
# CMAKE_CUDA_ARCHITECTURES is given; the CUDA runtime is linked statically so that one
# libflashc.so loads on machines without a driver.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # nvcc 13 rejects the bare sm_90a spelling, so the gencode pairs are spelled out.
  set(FLASHC_CUDA_GENCODE "SHELL:-gencode arch=compute_80,code=sm_80" "SHELL:-gencode arch=compute_90a,code=sm_90a")
  set(CMAKE_CUDA_ARCHITECTURES OFF)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
option(FLASHC_CUDA_PTXAS_VERBOSE "Print ptxas register/spill reports for the kernels" OFF)

add_library(flashc_cuda OBJECT src/cuda/runtime.cu src/cuda/devmem.cu src/cuda/launch.cu src/cuda/forward.cu
  src/cuda/backward.cu src/cuda/decode.cu src/cuda/decode_mma.cu)
target_include_directories(flashc_cuda PRIVATE include src)
# --threads 0: the architectures compile in parallel
# no C++ runtime: C consumers of the static archive link without libstdc++
target_compile_options(flashc_cuda PRIVATE ${FLASHC_CUDA_GENCODE} --threads=0
  -Xcompiler=-fvisibility=hidden,-fno-threadsafe-statics,-fno-exceptions)
if(FLASHC_CUDA_PTXAS_VERBOSE)
  target_compile_options(flashc_cuda PRIVATE -Xptxas=-v)
endif()
set_target_properties(flashc_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
set(FLASHC_PC_CUDA "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lpthread")
