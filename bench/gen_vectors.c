/* The vector benchmark's dataset (see gen_vectors.h). */
#include "gen_vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float *gv_random_vectors(size_t n, uint32_t dim, uint64_t seed) {
    size_t count = n * dim;
    float *out = malloc((count ? count : 1) * sizeof(float));
    if (!out) return NULL;
    uint64_t state = seed;
    for (size_t i = 0; i < count; i++)
        out[i] = (float)((double)gg_splitmix64(&state) / 18446744073709551616.0 * 2.0 - 1.0);
    return out;
}

int gv_format_vector(char *buf, size_t cap, const float *v, uint32_t dim) {
    size_t len = 0;
    if (cap < 3) return -1;
    buf[len++] = '[';
    for (uint32_t d = 0; d < dim; d++) {
        int k = snprintf(buf + len, cap - len, "%s%.9g", d ? ", " : "", (double)v[d]);
        if (k < 0 || (size_t)k >= cap - len) return -1;
        len += (size_t)k;
    }
    if (len + 2 > cap) return -1;
    buf[len++] = ']';
    buf[len] = '\0';
    return (int)len;
}

int gv_emit_vectors(const char *rel, const float *v, size_t n, uint32_t dim, size_t chunk,
                    gg_stmt_fn fn, void *ctx) {
    size_t per_vector = (size_t)dim * 18 + 32;
    if (chunk == 0) chunk = GV_CHUNK;
    size_t cap = strlen(rel) + 8 + chunk * per_vector;
    char *buf = malloc(cap);
    if (!buf) return -1;
    int rc = 0;
    for (size_t start = 0; start < n && rc == 0; start += chunk) {
        size_t end = start + chunk < n ? start + chunk : n;
        size_t len = (size_t)snprintf(buf, cap, "+%s[", rel);
        for (size_t i = start; i < end && rc == 0; i++) {
            int k = snprintf(buf + len, cap - len, "%s(%zu, ", i > start ? ", " : "", i + 1);
            len += (size_t)k;
            k = gv_format_vector(buf + len, cap - len, v + i * dim, dim);
            if (k < 0 || len + (size_t)k + 3 > cap) {
                rc = -1;
                break;
            }
            len += (size_t)k;
            buf[len++] = ')';
        }
        if (rc) break;
        buf[len++] = ']';
        buf[len] = '\0';
        rc = fn(ctx, buf, len);
    }
    free(buf);
    return rc;
}
