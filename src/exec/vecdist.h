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
#include <stddef.h>
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

/* Rows of bfloat16 elements (the high 16 bits of an f32: 8 bits of precision), half the
 * memory of f32, for a graph's navigation copies of its vectors. A row of dim elements
 * takes vecdist_bf16_words(dim) 32-bit words (dim padded with zeros to a multiple of
 * 16), a pair of elements per word, so that the kernel widens them to f32 lane by lane;
 * the query goes with them as 2 * vecdist_bf16_words(dim) floats in the matching order.
 * Elements are rounded to nearest and must be finite. */
uint32_t vecdist_bf16_words(uint32_t dim);
void vecdist_bf16_pack(const float *x, uint32_t dim, uint32_t *out);
void vecdist_bf16_query(const float *q, uint32_t dim, float *out);
/* For one prepared query pq against many bf16 rows of a matrix: out[i] is the fast dot
 * product (sq false) or squared distance (sq true) of the query and the row at
 * rows + ids[i] * stride (stride in words). One call for all the neighbours of a node in
 * a graph search, the kernel inline. */
void vecdist_bf16_rows(bool sq, const float *pq, const uint32_t *rows, size_t stride,
                       const uint32_t *ids, size_t n, uint32_t dim, float *out);

/* The relative error bound of an f32 sum of n rounded products: (n+1)u / (1 - (n+1)u),
 * u = 2^-24. */
double vecdist_gamma(uint32_t n);

/* cosine(a, b) of iql-language.md 5.2 from the exact dot product and the two heads
 * (their |.|^2): 1 - clamp(dot / (|a| |b|), -1, 1), 0.0 when a norm is 0. */
double vecdist_cosine_from(float dot, const val_vec_head *hx, const val_vec_head *hy);

/* The builtins whose exact value the fast kernels bound. */
typedef enum vecdist_bounded {
    VECDIST_COSINE,
    VECDIST_EUCLIDEAN,
} vecdist_bounded;

/* Bounds [lo[i], hi[i]] of f(xs[i], q) (the builtin's exact value) for n vectors of dim
 * elements with heads hxs[i], against one vector q with head hq; both NaN where xs[i] is
 * NULL or the pair is outside the range where the bound holds (not finite, norms too
 * small or too large), in which case only the exact value will do. What depends on q
 * alone is worked out once, and the kernel runs inline, with no call per vector: this is
 * what a scan with a filter on the distance runs over its rows. */
void vecdist_bounds_many(vecdist_bounded f, const float *q, const val_vec_head *hq, uint32_t dim,
                         const float *const *xs, const val_vec_head *const *hxs, size_t n,
                         double *lo, double *hi);
/* The same for one pair (f is symmetric): false, with NaN bounds, when none hold. */
bool vecdist_bounds(vecdist_bounded f, const float *x, const val_vec_head *hx, const float *q,
                    const val_vec_head *hq, uint32_t n, double *lo, double *hi);

#endif
