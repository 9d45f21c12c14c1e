/* The CTA emulator's stand-in for the toolkit header (CuTe's debug helpers include it): cuda_runtime.h's. */
#include "cuda_runtime.h"
