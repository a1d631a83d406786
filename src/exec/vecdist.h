/* Distance kernels over f32 vectors, for the vector builtins (vector.c), their bounds
 * (what lets a filter reject a row without the exact distance) and the HNSW index.
 *
 * Two kinds of kernel. The exact ones sum sequentially in f32, the order the builtins
 * must follow to print the original's digits (iql-language.md 5.2); a sequential f32 sum
 * is one chain of dependent additions, about 4 cycles per element. The fast ones keep
 * several partial sums in SIMD lanes (AVX2 when the CPU has it, chosen at run time; the
 * portable build's SSE2 or scalar code otherwise): a different rounding, within a known
 * bound of the exact result, which is all a bound or a nearest-neighbour search needs. */
#ifndef IL_EXEC_VECDIST_H
#define IL_EXEC_VECDIST_H

#include <stdbool.h>
#include <stdint.h>

#include "value/value.h"

/* Sequential f32 sums, as the builtins define them: the dot product from +0.0 (cosine's
 * dot) and the squared distance from -0.0 (euclidean's sum). */
float vecdist_dot_seq(const float *x, const float *y, uint32_t n);
float vecdist_sqdist_seq(const float *x, const float *y, uint32_t n);

/* The builtins' dot (an f64 sum of f64 products from -0.0) and manhattan distance (an
 * f64 sum of |f32 differences|), sequential. */
double vecdist_dot_f64(const float *x, const float *y, uint32_t n);
double vecdist_manhattan(const float *x, const float *y, uint32_t n);

/* The same sums in SIMD lanes: each differs from the exact sum of the rounded terms by
 * at most vecdist_gamma(n) times the sum of their absolute values. */
float vecdist_dot_fast(const float *x, const float *y, uint32_t n);
float vecdist_sqdist_fast(const float *x, const float *y, uint32_t n);

/* The relative error bound of an f32 sum of n rounded products: (n+1)u / (1 - (n+1)u),
 * u = 2^-24. */
double vecdist_gamma(uint32_t n);

/* cosine(a, b) of iql-language.md 5.2 from the exact dot product and the two heads
 * (their |.|^2): 1 - clamp(dot / (|a| |b|), -1, 1), 0.0 when a norm is 0. */
double vecdist_cosine_from(float dot, const val_vec_head *hx, const val_vec_head *hy);

/* Bounds [*lo, *hi] of cosine(x, y) and of euclidean(x, y) (the builtins' exact values)
 * from a fast kernel; false when the vectors are outside the range where the bound
 * holds (not finite, norms too small or too large, mismatched lengths), in which case
 * only the exact value will do. */
bool vecdist_cosine_bounds(const float *x, const val_vec_head *hx, const float *y,
                           const val_vec_head *hy, uint32_t n, double *lo, double *hi);
bool vecdist_euclidean_bounds(const float *x, const val_vec_head *hx, const float *y,
                              const val_vec_head *hy, uint32_t n, double *lo, double *hi);

#endif
