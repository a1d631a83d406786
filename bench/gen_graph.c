/* The benchmark datasets of docs/performance.md 3.2: SplitMix64 random graphs, hot chains,
 * and their IQL bulk-insert statements. See gen_graph.h. */
#include "gen_graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct splitmix64 {
    uint64_t x;
} splitmix64;

uint64_t gg_splitmix64(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t sm_next(splitmix64 *r) {
    return gg_splitmix64(&r->x);
}

static uint64_t sm_below(splitmix64 *r, uint64_t b) {
    return sm_next(r) % b;
}

/* An open-addressing set of nonzero 128-bit keys (src, dst), src >= 1. */
typedef struct edge_set {
    gg_edge *slots;
    size_t cap; /* a power of two */
    size_t len;
} edge_set;

static size_t edge_hash(int64_t a, int64_t b) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL ^ (uint64_t)b * 0xC2B2AE3D27D4EB4FULL;
    return (size_t)(h ^ (h >> 29));
}

/* Inserts (a, b); returns 1 when new, 0 when present. cap must exceed len. */
static int edge_set_add(edge_set *s, int64_t a, int64_t b) {
    size_t mask = s->cap - 1;
    for (size_t i = edge_hash(a, b) & mask;; i = (i + 1) & mask) {
        if (s->slots[i].src == 0) {
            s->slots[i].src = a;
            s->slots[i].dst = b;
            s->len++;
            return 1;
        }
        if (s->slots[i].src == a && s->slots[i].dst == b) return 0;
    }
}

static int edge_cmp(const void *pa, const void *pb) {
    const gg_edge *a = pa, *b = pb;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    return 0;
}

gg_edge *gg_random_graph(uint64_t nodes, size_t edges, uint64_t seed) {
    /* At most nodes * (nodes - 1) distinct edges without self-loops. */
    if (nodes < ((uint64_t)1 << 32) && (uint64_t)edges > nodes * (nodes ? nodes - 1 : 0))
        return NULL;
    if (edges == 0) return malloc(sizeof(gg_edge));
    edge_set set = {0};
    set.cap = 16;
    while (set.cap < edges * 2) set.cap *= 2;
    set.slots = calloc(set.cap, sizeof(gg_edge));
    gg_edge *out = malloc(edges * sizeof(gg_edge));
    if (!set.slots || !out) {
        free(set.slots);
        free(out);
        return NULL;
    }
    splitmix64 r = {seed};
    size_t n = 0;
    while (n < edges) {
        int64_t a = (int64_t)sm_below(&r, nodes) + 1;
        int64_t b = (int64_t)sm_below(&r, nodes) + 1;
        if (a != b && edge_set_add(&set, a, b)) {
            out[n].src = a;
            out[n].dst = b;
            n++;
        }
    }
    free(set.slots);
    qsort(out, edges, sizeof(gg_edge), edge_cmp);
    return out;
}

size_t gg_chain_count(size_t edges) {
    return (edges + 2) / 3;
}

size_t gg_hot_count(size_t chains) {
    return (chains + 99) / 100;
}

gg_edge *gg_chains(size_t edges, size_t *n) {
    size_t chains = gg_chain_count(edges);
    *n = 3 * chains;
    gg_edge *out = malloc((*n ? *n : 1) * sizeof(gg_edge));
    if (!out) return NULL;
    for (size_t c = 0; c < chains; c++) {
        for (int i = 0; i < 3; i++) {
            out[3 * c + (size_t)i].src = (int64_t)(4 * c) + i;
            out[3 * c + (size_t)i].dst = (int64_t)(4 * c) + i + 1;
        }
    }
    return out;
}

/* A growable text buffer for one statement. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static int text_reserve(text *t, size_t more) {
    if (t->len + more + 1 <= t->cap) return 0;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) return -1;
    t->p = p;
    t->cap = cap;
    return 0;
}

static int text_add(text *t, const char *s, size_t n) {
    if (text_reserve(t, n)) return -1;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
    return 0;
}

/* Emits `+rel[` tuples `]` statements; tuple(i, buf, cap) formats tuple i. */
typedef int (*tuple_fn)(const void *data, size_t i, char *buf, size_t cap);

static int emit(const char *rel, size_t n, size_t chunk, tuple_fn tuple, const void *data,
                gg_stmt_fn fn, void *ctx) {
    text t = {0};
    char buf[256];
    int rc = 0;
    if (chunk == 0) chunk = GG_CHUNK;
    for (size_t start = 0; start < n && rc == 0; start += chunk) {
        size_t end = start + chunk < n ? start + chunk : n;
        t.len = 0;
        if (text_add(&t, "+", 1) || text_add(&t, rel, strlen(rel)) || text_add(&t, "[", 1)) {
            rc = -1;
            break;
        }
        for (size_t i = start; i < end; i++) {
            int len = tuple(data, i, buf, sizeof buf);
            if (len < 0 || (size_t)len >= sizeof buf || (i > start && text_add(&t, ", ", 2)) ||
                text_add(&t, buf, (size_t)len)) {
                rc = -1;
                break;
            }
        }
        if (rc == 0 && text_add(&t, "]", 1)) rc = -1;
        if (rc == 0) rc = fn(ctx, t.p, t.len);
    }
    free(t.p);
    return rc;
}

static int edge_tuple(const void *data, size_t i, char *buf, size_t cap) {
    const gg_edge *e = (const gg_edge *)data + i;
    return snprintf(buf, cap, "(%" PRId64 ", %" PRId64 ")", e->src, e->dst);
}

int gg_emit_edges(const char *rel, const gg_edge *edges, size_t n, size_t chunk, gg_stmt_fn fn,
                  void *ctx) {
    return emit(rel, n, chunk, edge_tuple, edges, fn, ctx);
}

static int label_tuple(const void *data, size_t i, char *buf, size_t cap) {
    return snprintf(buf, cap, "(%zu, \"%s\")", 400 * i, (const char *)data);
}

int gg_emit_hot_labels(const char *rel, const char *label, size_t hot, size_t chunk, gg_stmt_fn fn,
                       void *ctx) {
    return emit(rel, hot, chunk, label_tuple, label, fn, ctx);
}

int gg_write_stmt(void *ctx, const char *stmt, size_t len) {
    FILE *f = ctx;
    if (fwrite(stmt, 1, len, f) != len || fputc('\n', f) == EOF) return -1;
    return 0;
}
