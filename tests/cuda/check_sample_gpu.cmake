# A seed sample program (EXE), unchanged (the binary tests/cann builds from it), on the GPU:
# FLASHC_DEVICE=cuda makes its aclrtMalloc CUDA memory, so its aclnn call runs on the CUDA backend
# (the CPU backend cannot read that memory), and CHECK judges its output as on the CPU.
execute_process(COMMAND ${PROBE} RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
if(probe_rc EQUAL 77)
  message("${EXE}: no CUDA device; skipped")
  return()
endif()
set(ENV{FLASHC_DEVICE} cuda)
include(${CHECK})
