/* The CTA emulator's stand-in for the toolkit header (CUTLASS's complex.h names its types). */
#ifndef FLASHC_EMU_CUCOMPLEX_H
#define FLASHC_EMU_CUCOMPLEX_H
#include "vector_types.h"
typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
inline cuFloatComplex make_cuFloatComplex(float r, float i) { return cuFloatComplex{r, i}; }
inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return cuDoubleComplex{r, i}; }
inline float cuCrealf(cuFloatComplex z) { return z.x; }
inline float cuCimagf(cuFloatComplex z) { return z.y; }
inline double cuCreal(cuDoubleComplex z) { return z.x; }
inline double cuCimag(cuDoubleComplex z) { return z.y; }
#endif
