# Runs the IncreFlashAttentionV4 sample and checks its observable behaviour (semantics §6.9): both
# operator phases succeed, and the copy-back of attentionOut as 32 doubles (256 bytes) from a
# 64-byte FP16 allocation fails with the runtime's clean ACL_ERROR_INVALID_PARAM (100000), after
# which the sample returns that code (exit status 100000 mod 256 = 160) without printing results.
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 160)
  message(FATAL_ERROR "sample exited with ${rc} (expected 160: return 100000 after the failed copy-back)\n${out}\n${err}")
endif()
# Exactly one failure line in the whole output, and it is the oversized copy-back.
string(REGEX MATCHALL "failed\\. ERROR: [0-9]+" fails "${out}")
list(LENGTH fails nfail)
string(REGEX MATCHALL "copy result from device to host failed\\. ERROR: 100000" copies "${out}")
list(LENGTH copies ncopy)
if(NOT nfail EQUAL 1 OR NOT ncopy EQUAL 1)
  message(FATAL_ERROR "expected one failure, the copy-back with ACL_ERROR_INVALID_PARAM (100000); got ${nfail}:\n${out}")
endif()
if(err MATCHES "AddressSanitizer|LeakSanitizer|runtime error")
  message(FATAL_ERROR "sanitizer report:\n${err}")
endif()
message(STATUS "sample ok: operator calls succeeded, one clean copy-back failure")
