/* Locality-sensitive hashing builtins (iql-language.md 5.2 and 5.6): lsh_bucket hashes a
 * vector to the bit set of random hyperplanes it lies above; lsh_probes and
 * lsh_multi_probe list the buckets to probe around one. The hyperplanes are not stored:
 * each coordinate is regenerated from (table, hyperplane, dimension) with SipHash-1-3
 * keyed by zeros, exactly as the original's Rust DefaultHasher did, so bucket ids agree
 * with data the original computed. */
#include <math.h>
#include <stdlib.h>

#include "exec/builtin_impl.h"

/* 62 hyperplane bits keep a bucket id positive in an i64. */
#define LSH_MAX_BITS 62

static inline uint64_t rotl64(uint64_t x, unsigned r) {
    return (x << r) | (x >> (64 - r));
}

#define SIP_ROUND(v0, v1, v2, v3)                                                                  \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl64(v1, 13);                                                                       \
        v1 ^= v0;                                                                                  \
        v0 = rotl64(v0, 32);                                                                       \
        v2 += v3;                                                                                  \
        v3 = rotl64(v3, 16);                                                                       \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl64(v3, 21);                                                                       \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl64(v1, 17);                                                                       \
        v1 ^= v2;                                                                                  \
        v2 = rotl64(v2, 32);                                                                       \
    } while (0)

/* SipHash-1-3 with both keys zero of the 8 little-endian bytes of `message`: one
 * compression round per block, three finalisation rounds. The message is exactly one
 * block, so the final block holds only the length (8) in its top byte. */
static uint64_t siphash13_u64(uint64_t message) {
    uint64_t v0 = 0x736f6d6570736575ull, v1 = 0x646f72616e646f6dull;
    uint64_t v2 = 0x6c7967656e657261ull, v3 = 0x7465646279746573ull;
    v3 ^= message;
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= message;
    uint64_t last = (uint64_t)8 << 56;
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* Coordinate `dim` of hyperplane `plane` of table `table`: uniform in [-1, 1] as f32. */
static float hyperplane_coord(int64_t table, uint64_t plane, uint64_t dim) {
    uint64_t seed = (uint64_t)table * 1000000007ull + plane * 31337ull + dim;
    uint64_t bits = siphash13_u64(seed) & 0xFFFFFFFFull;
    double unit = (double)bits / 4294967295.0;
    return (float)(unit * 2.0 - 1.0);
}

/* The hyperplanes of the last (table, bits, dim) this thread asked for: a rule computes
 * the bucket of every row with the same parameters, and regenerating bits x dim hashes
 * per row would dominate its cost. Sets larger than the cache are generated per row. */
#define LSH_CACHED_COORDS 4096
static _Thread_local struct {
    bool valid;
    int64_t table;
    uint32_t bits, dim;
    float coords[LSH_CACHED_COORDS]; /* hyperplane-major: coords[h * dim + d] */
} plane_cache;

/* The cached coordinates of those hyperplanes, or NULL when they do not fit. */
static const float *cached_hyperplanes(int64_t table, uint32_t bits, uint32_t dim) {
    if ((uint64_t)bits * dim > LSH_CACHED_COORDS) return NULL;
    if (!plane_cache.valid || plane_cache.table != table || plane_cache.bits != bits ||
        plane_cache.dim != dim) {
        for (uint32_t h = 0; h < bits; h++)
            for (uint32_t d = 0; d < dim; d++)
                plane_cache.coords[h * dim + d] = hyperplane_coord(table, h, d);
        plane_cache.valid = true;
        plane_cache.table = table;
        plane_cache.bits = bits;
        plane_cache.dim = dim;
    }
    return plane_cache.coords;
}

static float plane_coord(const float *cached, int64_t table, uint32_t h, uint32_t d, uint32_t dim) {
    return cached ? cached[h * dim + d] : hyperplane_coord(table, h, d);
}

/* The bucket of lsh_bucket: the f32 dot with each hyperplane, summed from -0.0 in
 * dimension order as the original did. */
static int64_t bucket_f32(const float *v, uint32_t dim, int64_t table, uint32_t bits) {
    const float *cached = cached_hyperplanes(table, bits, dim);
    int64_t bucket = 0;
    for (uint32_t h = 0; h < bits; h++) {
        float dot = -0.0f;
        for (uint32_t d = 0; d < dim; d++) {
            float p = v[d] * plane_coord(cached, table, h, d, dim);
            dot += p;
        }
        if (dot > 0.0f) bucket |= (int64_t)1 << h;
    }
    return bucket;
}

static val_t fn_lsh_bucket(const val_t *a) {
    if (val_type_of(a[0]) != VT_VEC) return VAL_NULL;
    uint32_t dim;
    const float *v = val_get_vec_f32(a[0], &dim);
    int64_t table = val_to_i64(a[1]), planes = val_to_i64(a[2]);
    if (planes < 0) return VAL_NULL;
    if (dim == 0 || planes == 0) return val_int(0);
    uint32_t bits = planes > LSH_MAX_BITS ? LSH_MAX_BITS : (uint32_t)planes;
    return val_int(bucket_f32(v, dim, table, bits));
}

/* The probe sequence around `bucket`: the bucket itself, then every single, pair and
 * triple of flipped bits, the bits taken in the order `order` lists them, at most
 * `limit` ids. The ids are stored as f32, as the original returned them (large ids
 * lose precision). */
static val_t probe_sequence(int64_t bucket, const uint32_t *order, uint32_t bits, int64_t limit) {
    uint64_t b = bits;
    uint64_t pairs = b >= 2 ? b * (b - 1) / 2 : 0;
    uint64_t triples = b >= 3 ? b * (b - 1) * (b - 2) / 6 : 0;
    uint64_t total = 1 + b + pairs + triples;
    uint32_t n = (uint32_t)((uint64_t)limit < total ? (uint64_t)limit : total);
    float *out = malloc((n ? n : 1) * sizeof(float));
    uint32_t k = 0;
    if (k < n) out[k++] = (float)bucket;
    for (uint32_t i = 0; i < bits && k < n; i++)
        out[k++] = (float)(bucket ^ ((int64_t)1 << order[i]));
    for (uint32_t i = 0; i < bits && k < n; i++)
        for (uint32_t j = i + 1; j < bits && k < n; j++)
            out[k++] = (float)(bucket ^ ((int64_t)1 << order[i]) ^ ((int64_t)1 << order[j]));
    for (uint32_t i = 0; i < bits && k < n; i++)
        for (uint32_t j = i + 1; j < bits && k < n; j++)
            for (uint32_t l = j + 1; l < bits && k < n; l++)
                out[k++] = (float)(bucket ^ ((int64_t)1 << order[i]) ^ ((int64_t)1 << order[j]) ^
                                   ((int64_t)1 << order[l]));
    val_t v = val_vec_f32(out, n);
    free(out);
    return v;
}

static val_t fn_lsh_probes(const val_t *a) {
    int64_t bucket = val_to_i64(a[0]), planes = val_to_i64(a[1]), limit = val_to_i64(a[2]);
    if (planes < 0 || limit < 0) return VAL_NULL;
    uint32_t bits = planes > LSH_MAX_BITS ? LSH_MAX_BITS : (uint32_t)planes;
    uint32_t order[LSH_MAX_BITS];
    for (uint32_t i = 0; i < bits; i++) order[i] = i;
    return probe_sequence(bucket, order, bits, limit);
}

/* Like lsh_bucket with the dots in f64, then the bits to flip ordered by how close the
 * vector lies to each hyperplane (|dot| ascending, ties in bit order): the nearest
 * hyperplanes are the likeliest to separate it from its neighbours. */
static val_t fn_lsh_multi_probe(const val_t *a) {
    if (val_type_of(a[0]) != VT_VEC) return VAL_NULL;
    uint32_t dim;
    const float *v = val_get_vec_f32(a[0], &dim);
    int64_t table = val_to_i64(a[1]), planes = val_to_i64(a[2]), limit = val_to_i64(a[3]);
    if (planes < 0 || limit < 0) return VAL_NULL;
    uint32_t bits = planes > LSH_MAX_BITS ? LSH_MAX_BITS : (uint32_t)planes;
    const float *cached = cached_hyperplanes(table, bits, dim);
    double distance[LSH_MAX_BITS];
    int64_t bucket = 0;
    for (uint32_t h = 0; h < bits; h++) {
        double dot = 0.0;
        for (uint32_t d = 0; d < dim; d++) {
            double p = (double)v[d] * (double)plane_coord(cached, table, h, d, dim);
            dot += p;
        }
        if (dot > 0.0) bucket |= (int64_t)1 << h;
        distance[h] = fabs(dot);
    }
    /* A stable insertion sort: at most 62 entries */
    uint32_t order[LSH_MAX_BITS];
    for (uint32_t i = 0; i < bits; i++) {
        uint32_t j = i;
        while (j > 0 && distance[i] < distance[order[j - 1]]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return probe_sequence(bucket, order, bits, limit);
}

const exec_builtin exec_lsh_builtins[] = {
    {"lsh_bucket", 3, fn_lsh_bucket},
    {"lsh_probes", 3, fn_lsh_probes},
    {"lsh_multi_probe", 4, fn_lsh_multi_probe},
    {NULL, 0, NULL},
};
