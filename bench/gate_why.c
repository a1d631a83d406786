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

/* What a check has seen: the conclusions of the tree checked so far, by id. */
typedef struct checker {
    const gg_edge *edges;
    size_t nedges;
    json_t *checked;
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

static bool check_node(checker *c, const json_t *tree, const char *id, int depth, conclusion *out);

/* A derivation of `k` (a rule node: the conclusion's own or an alternative): an instance
 * of one of its relation's clauses, its children valid and joined as the clause says. */
static bool check_derivation(checker *c, const json_t *tree, const conclusion *k, const json_t *d,
                             int depth) {
    const char *kind = json_string_value(json_object_get(d, "kind"));
    const json_t *children = json_object_get(d, "children");
    if (!kind || strcmp(kind, "rule") != 0 || !json_is_string(json_object_get(d, "rule_id")))
        return fault(c, "%s(%" PRId64 ", %" PRId64 "): a derivation that is not a rule's", k->rel,
                     k->a, k->b);
    conclusion ch[2];
    size_t n = json_array_size(children);
    if (n > 2 || n == 0) return fault(c, "%s: a derivation with %zu children", k->rel, n);
    for (size_t i = 0; i < n; i++) {
        const char *cid = json_string_value(json_array_get(children, i));
        if (!cid || !check_node(c, tree, cid, depth + 1, &ch[i]))
            return cid ? false : fault(c, "a child id that is not a string");
    }
    bool two_hop = strcmp(k->rel, "two_hop") == 0;
    bool good;
    if (two_hop)
        good = n == 2 && strcmp(ch[0].rel, "edge") == 0 && strcmp(ch[1].rel, "edge") == 0 &&
               ch[0].a == k->a && ch[0].b == ch[1].a && ch[1].b == k->b;
    else if (n == 1)
        good = strcmp(ch[0].rel, "edge") == 0 && ch[0].a == k->a && ch[0].b == k->b;
    else
        good = strcmp(ch[0].rel, "reach") == 0 && strcmp(ch[1].rel, "edge") == 0 &&
               ch[0].a == k->a && ch[0].b == ch[1].a && ch[1].b == k->b;
    return good || fault(c,
                         "%s(%" PRId64 ", %" PRId64 "): a derivation that does not derive it "
                         "from its children",
                         k->rel, k->a, k->b);
}

static bool check_node(checker *c, const json_t *tree, const char *id, int depth, conclusion *out) {
    if (depth > MAX_DEPTH) return fault(c, "a proof deeper than %d", MAX_DEPTH);
    const json_t *node = json_object_get(json_object_get(tree, "nodes"), id);
    if (!node) return fault(c, "a child id %s that is not a node", id);
    const char *kind = json_string_value(json_object_get(node, "kind"));
    if (!kind) return fault(c, "a node without a kind");
    const json_t *k = json_object_get(node, "conclusion");
    const char *rel = json_string_value(json_object_get(k, "pred"));
    if (!rel || strlen(rel) >= sizeof out->rel ||
        !read_pair(json_object_get(k, "args"), &out->a, &out->b))
        return fault(c, "a %s node without a conclusion of two integers", kind);
    snprintf(out->rel, sizeof out->rel, "%s", rel);
    if (strcmp(kind, "fact") == 0) {
        if (strcmp(rel, "edge") != 0 || !has_edge(c, out->a, out->b))
            return fault(c, "fact %s(%" PRId64 ", %" PRId64 ") is not in the graph", rel, out->a,
                         out->b);
        return true;
    }
    if (strcmp(kind, "rule") != 0)
        return fault(c, "a %s node for %s(%" PRId64 ", %" PRId64 ")", kind, rel, out->a, out->b);
    if (strcmp(rel, "two_hop") != 0 && strcmp(rel, "reach") != 0)
        return fault(c, "a conclusion of relation %s", rel);
    /* a conclusion is one node: checked once per tree */
    if (json_object_get(c->checked, id)) return true;
    json_object_set_new(c->checked, id, json_true());
    if (!check_derivation(c, tree, out, node, depth)) return false;
    const json_t *alts = json_object_get(node, "alternatives");
    for (size_t i = 0; i < json_array_size(alts); i++) {
        const char *aid = json_string_value(json_array_get(alts, i));
        const json_t *alt = aid ? json_object_get(json_object_get(tree, "nodes"), aid) : NULL;
        if (!alt || !json_equal(json_object_get(alt, "conclusion"), k))
            return fault(c, "an alternative that is not a derivation of its conclusion");
        if (!check_derivation(c, tree, out, alt, depth)) return false;
    }
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
        const char *root = json_string_value(json_array_get(json_object_get(t, "roots"), 0));
        c.checked = json_object();
        if (json_integer_value(json_object_get(t, "version")) != 1 || !root ||
            !read_pair(row, &a, &b))
            good = fault(&c, "proof tree %zu is not a DAG for row %zu", i, i);
        else if (!check_node(&c, t, root, 0, &k))
            good = false;
        else if (strcmp(k.rel, "edge") == 0 || k.a != a || k.b != b)
            good = fault(&c, "proof tree %zu proves %s(%" PRId64 ", %" PRId64 "), not its row", i,
                         k.rel, k.a, k.b);
        json_decref(c.checked);
    }
    return good;
}
