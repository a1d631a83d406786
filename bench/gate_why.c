/* The proof-tree check of the `why` fixture; see gate_why.h. */
#include "gate_why.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 200 };

typedef struct conclusion {
    char rel[16]; /* "edge", "reach", "two_hop" */
    int64_t a, b;
} conclusion;

/* What a check has seen: the conclusions written out so far, by id (refs point back). */
typedef struct checker {
    const gg_edge *edges;
    size_t nedges;
    conclusion *byid;
    bool *known;
    size_t cap;
    char *why;
    size_t why_len;
} checker;

__attribute__((format(printf, 2, 3))) static bool fault(checker *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->why_len, fmt, ap);
    va_end(ap);
    return false;
}

static bool has_edge(const checker *c, int64_t a, int64_t b) {
    size_t lo = 0, hi = c->nedges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const gg_edge *e = &c->edges[mid];
        if (e->src < a || (e->src == a && e->dst < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nedges && c->edges[lo].src == a && c->edges[lo].dst == b;
}

static bool read_pair(const json_t *v, int64_t *a, int64_t *b) {
    if (json_array_size(v) != 2 || !json_is_integer(json_array_get(v, 0)) ||
        !json_is_integer(json_array_get(v, 1)))
        return false;
    *a = json_integer_value(json_array_get(v, 0));
    *b = json_integer_value(json_array_get(v, 1));
    return true;
}

static bool remember(checker *c, int64_t id, const conclusion *k) {
    if (id < 0 || id > 10000000) return fault(c, "a node id %" PRId64 " out of range", id);
    if ((size_t)id >= c->cap) {
        size_t cap = c->cap ? c->cap : 256;
        while (cap <= (size_t)id) cap *= 2;
        conclusion *byid = realloc(c->byid, cap * sizeof *byid);
        bool *known = byid ? realloc(c->known, cap * sizeof *known) : NULL;
        if (byid) c->byid = byid;
        if (!known) return fault(c, "out of memory");
        memset(known + c->cap, 0, (cap - c->cap) * sizeof *known);
        c->known = known;
        c->cap = cap;
    }
    if (c->known[id]) return fault(c, "node id %" PRId64 " written out twice", id);
    c->known[id] = true;
    c->byid[id] = *k;
    return true;
}

static bool check_node(checker *c, const json_t *node, int depth, conclusion *out);

/* A derivation of `k`: an instance of one of its relation's clauses, its children valid
 * and joined as the clause says. */
static bool check_derivation(checker *c, const conclusion *k, const json_t *d, int depth) {
    const char *kind = json_string_value(json_object_get(d, "kind"));
    const json_t *children = json_object_get(d, "children");
    const json_t *clause = json_object_get(d, "clause");
    if (!kind || strcmp(kind, "rule") != 0 || !json_is_integer(clause) || !json_is_array(children))
        return fault(c, "%s(%" PRId64 ", %" PRId64 "): a derivation that is not a rule's", k->rel,
                     k->a, k->b);
    conclusion ch[2];
    size_t n = json_array_size(children);
    if (n > 2) return fault(c, "%s: a derivation with %zu children", k->rel, n);
    for (size_t i = 0; i < n; i++)
        if (!check_node(c, json_array_get(children, i), depth + 1, &ch[i])) return false;
    bool two_hop = strcmp(k->rel, "two_hop") == 0;
    long cl = (long)json_integer_value(clause);
    bool good;
    if (two_hop)
        good = cl == 1 && n == 2 && strcmp(ch[0].rel, "edge") == 0 &&
               strcmp(ch[1].rel, "edge") == 0 && ch[0].a == k->a && ch[0].b == ch[1].a &&
               ch[1].b == k->b;
    else if (cl == 1)
        good = n == 1 && strcmp(ch[0].rel, "edge") == 0 && ch[0].a == k->a && ch[0].b == k->b;
    else
        good = cl == 2 && n == 2 && strcmp(ch[0].rel, "reach") == 0 &&
               strcmp(ch[1].rel, "edge") == 0 && ch[0].a == k->a && ch[0].b == ch[1].a &&
               ch[1].b == k->b;
    return good || fault(c,
                         "%s(%" PRId64 ", %" PRId64 "): clause %ld's derivation does not "
                         "derive it from its children",
                         k->rel, k->a, k->b, cl);
}

static bool check_node(checker *c, const json_t *node, int depth, conclusion *out) {
    if (depth > MAX_DEPTH) return fault(c, "a proof deeper than %d", MAX_DEPTH);
    const char *kind = json_string_value(json_object_get(node, "kind"));
    if (!kind) return fault(c, "a node without a kind");
    if (strcmp(kind, "ref") == 0) {
        const json_t *id = json_object_get(node, "id");
        json_int_t i = json_is_integer(id) ? json_integer_value(id) : -1;
        if (i < 0 || (size_t)i >= c->cap || !c->known[i])
            return fault(c, "a ref to node %lld, not written out before", (long long)i);
        *out = c->byid[i];
        return true;
    }
    const char *rel = json_string_value(json_object_get(node, "relation"));
    if (!rel || strlen(rel) >= sizeof out->rel ||
        !read_pair(json_object_get(node, "tuple"), &out->a, &out->b))
        return fault(c, "a %s node without a relation and a tuple of two integers", kind);
    snprintf(out->rel, sizeof out->rel, "%s", rel);
    if (strcmp(kind, "fact") == 0) {
        if (strcmp(rel, "edge") != 0 || !has_edge(c, out->a, out->b))
            return fault(c, "fact %s(%" PRId64 ", %" PRId64 ") is not in the graph", rel, out->a,
                         out->b);
        return true;
    }
    if (strcmp(kind, "derived") != 0)
        return fault(c, "a %s node for %s(%" PRId64 ", %" PRId64 ")", kind, rel, out->a, out->b);
    if (strcmp(rel, "two_hop") != 0 && strcmp(rel, "reach") != 0)
        return fault(c, "a conclusion of relation %s", rel);
    const json_t *id = json_object_get(node, "id");
    if (!json_is_integer(id) || !remember(c, json_integer_value(id), out)) return false;
    const json_t *ds = json_object_get(node, "derivations");
    if (json_array_size(ds) == 0)
        return fault(c, "%s(%" PRId64 ", %" PRId64 ") has no derivation", rel, out->a, out->b);
    for (size_t i = 0; i < json_array_size(ds); i++)
        if (!check_derivation(c, out, json_array_get(ds, i), depth)) return false;
    return true;
}

bool gw_check_proofs(const json_t *trees, const json_t *rows, const gg_edge *edges, size_t n,
                     char *why, size_t why_len) {
    checker c = {.edges = edges, .nedges = n, .why = why, .why_len = why_len};
    bool good = true;
    if (json_array_size(trees) != json_array_size(rows) || json_array_size(rows) == 0)
        good = fault(&c, "%zu proof trees for %zu rows", json_array_size(trees),
                     json_array_size(rows));
    for (size_t i = 0; good && i < json_array_size(trees); i++) {
        const json_t *t = json_array_get(trees, i), *row = json_array_get(rows, i);
        conclusion k;
        int64_t a, b;
        if (!json_equal(json_object_get(t, "row"), row) || !read_pair(row, &a, &b))
            good = fault(&c, "proof tree %zu is not for row %zu", i, i);
        else if (!check_node(&c, json_object_get(t, "proof"), 0, &k))
            good = false;
        else if (strcmp(k.rel, "edge") == 0 || k.a != a || k.b != b)
            good = fault(&c, "proof tree %zu proves %s(%" PRId64 ", %" PRId64 "), not its row", i,
                         k.rel, k.a, k.b);
    }
    free(c.byid);
    free(c.known);
    return good;
}
