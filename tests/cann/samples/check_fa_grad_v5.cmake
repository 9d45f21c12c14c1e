# Runs the UnpaddingScoreGradV5 sample and checks its observable behaviour (semantics §6.9).
# Its FLOAT32 host data is declared FLOAT16 (accepted: the allocations are large enough, the values
# are the reinterpreted bits: each fp32 1.0 reads as the fp16 pair 0, 1.875), and its softmax
# statistics of 3.0 are used as given.
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sample exited with ${rc}\n${out}\n${err}")
endif()
# Every call succeeds, the copy-backs included (each allocation holds 4-byte host elements).
if(out MATCHES "failed\\. ERROR")
  message(FATAL_ERROR "a call of the sample failed:\n${out}")
endif()
# dq, dk, dv (32768 values each) and dsink (1 value) printed in full.
string(REGEX MATCHALL "mean result\\[32767\\] is: " last "${out}")
list(LENGTH last nlast)
string(REGEX MATCHALL "mean result\\[0\\] is: " first "${out}")
list(LENGTH first nfirst)
if(NOT nlast EQUAL 3 OR NOT nfirst EQUAL 4)
  message(FATAL_ERROR "expected dq, dk, dv and dsink printed in full, got ${nlast} full tensors, ${nfirst} starts")
endif()
# dsink = -sum_i exp(sink - m) / l * D_i with the given m = l = 3, sink 0, D_i = 64 * 1.875^2 = 225
# over 256 rows: -57600 * e^-3 / 3 = -955.9117...
string(REGEX MATCH "mean result\\[0\\] is: [-0-9.e+]+\n*$" dsink "${out}")
if(NOT dsink MATCHES "is: -955\\.91")
  message(FATAL_ERROR "dsink from the given statistics must be -955.91..., got '${dsink}'")
endif()
message(STATUS "sample ok: every call succeeded, gradients printed, dsink ${dsink}")
