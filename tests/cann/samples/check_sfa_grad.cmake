# Runs the SparseFlashAttentionGrad sample and checks its observable behaviour (semantics §6.9):
# every operator call succeeds (exit code 0, no "failed" line: INT32 indices and INT64 lengths are
# accepted), and all five gradients are copied back and printed in full.  The rope allocations the
# sample stores in the gradient pointers leave qRopeDeviceAddr / kRopeDeviceAddr NULL; their final
# aclrtFree calls fail without effect and print nothing.  The output (2.2 million lines) goes to a
# file next to the test.
set(log ${CMAKE_CURRENT_BINARY_DIR}/sample_sfa_grad.out)
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_FILE ${log} ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sample exited with ${rc}\n${err}")
endif()
file(STRINGS ${log} fails REGEX "failed")
list(LENGTH fails nfail)
if(NOT nfail EQUAL 0)
  message(FATAL_ERROR "expected no failure line, got ${nfail}: ${fails}")
endif()
# dQuery 16·512, dKey and dValue 2048·512, dQueryRope 16·64, dKeyRope 2048·64 elements, printed in
# that order: the indices 0, 1023, 8191, 131071 and 1048575, where a tensor has them, must appear as
# exactly this sequence (each tensor complete, none cut short or repeated).  The values are the
# sample's own (it prints int16 with %e), so only the shape of the output is checked.
file(STRINGS ${log} marks REGEX "^mean result\\[(0|1023|8191|131071|1048575)\\] is: ")
string(REGEX REPLACE "mean result\\[([0-9]+)\\] is: [^;]*" "\\1" got "${marks}")
set(want "0;1023;8191;0;1023;8191;131071;1048575;0;1023;8191;131071;1048575;0;1023;0;1023;8191;131071")
if(NOT got STREQUAL want)
  message(FATAL_ERROR "expected the five gradients printed in full (index marks ${want}), got ${got}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "the sample wrote to stderr:\n${err}")
endif()
message(STATUS "sample ok: every call succeeded, five gradients printed")
