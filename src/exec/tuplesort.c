/* LSD radix sort of tuples (see tuplesort.h). */
#include "exec/tuplesort.h"

#include <stdbool.h>
#include <string.h>

#include "base/meter.h"
#include "exec/guard.h"

/* Smaller sorts take less than a millisecond: the callers' own checks cover them. */
enum { CHECK_FROM_TUPLES = 1 << 16 };

bool tuple_sort(val_t *tuples, size_t n, uint32_t arity) {
    if (n < 2 || arity == 0) return true;
    uint64_t or_w[64], and_w[64];
    uint32_t w = arity < 64 ? arity : 64;
    for (uint32_t c = 0; c < w; c++) {
        or_w[c] = 0;
        and_w[c] = ~0ull;
    }
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        const val_t *t = &tuples[i * arity];
        for (uint32_t c = 0; c < w; c++) {
            or_w[c] |= t[c];
            and_w[c] &= t[c];
        }
        if (sorted && i) {
            const val_t *prev = t - arity;
            uint32_t c = 0;
            while (c < arity && prev[c] == t[c]) c++;
            sorted = c == arity || prev[c] < t[c];
        }
    }
    if (sorted) return true; /* often true: rows read from an index */
    bool check = n >= CHECK_FROM_TUPLES;
    if (check && exec_should_stop()) return false;
    val_t *tmp = il_mem_alloc(n * arity * sizeof *tmp);
    val_t *src = tuples, *dst = tmp;
    size_t count[256];
    for (uint32_t c = w; c-- > 0;) {
        uint64_t varying = or_w[c] ^ and_w[c];
        for (unsigned shift = 0; shift < 64; shift += 8) {
            if (!((varying >> shift) & 0xFF)) continue;
            if (check && exec_should_stop()) {
                il_mem_free(tmp);
                return false;
            }
            memset(count, 0, sizeof count);
            for (size_t i = 0; i < n; i++) count[(src[i * arity + c] >> shift) & 0xFF]++;
            size_t sum = 0;
            for (int b = 0; b < 256; b++) {
                size_t k = count[b];
                count[b] = sum;
                sum += k;
            }
            for (size_t i = 0; i < n; i++) {
                size_t to = count[(src[i * arity + c] >> shift) & 0xFF]++;
                for (uint32_t k = 0; k < arity; k++) dst[to * arity + k] = src[i * arity + k];
            }
            val_t *t = src;
            src = dst;
            dst = t;
        }
    }
    if (src != tuples) memcpy(tuples, src, n * arity * sizeof *tuples);
    il_mem_free(tmp);
    return true;
}
