/* Indented proof trees (proof.h). The DAG's shared nodes are printed under each parent;
 * a path is cut where it would repeat a node already on it, and at a depth bound, so
 * that a hostile or cyclic answer cannot loop. */
#include "client/proof.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

static void print_value(FILE *out, json_t *v) {
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    fputs(s ? s : "?", out);
    free(s);
}

static void print_atom(FILE *out, json_t *conclusion) {
    const char *pred = json_string_value(json_object_get(conclusion, "pred"));
    fprintf(out, "%s(", pred ? pred : "?");
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(conclusion, "args"), i, v) {
        if (i) fputs(", ", out);
        print_value(out, v);
    }
    fputc(')', out);
}

/* What the node says beside its conclusion: how it holds, or why it does not. */
static void print_how(FILE *out, json_t *n) {
    const char *kind = json_string_value(json_object_get(n, "kind"));
    if (!kind) return;
    if (strcmp(kind, "fact") == 0) {
        fputs("  [fact]", out);
    } else if (strcmp(kind, "rule") == 0) {
        const char *rule = json_string_value(json_object_get(n, "rule_id"));
        fprintf(out, "  [rule %s]", rule ? rule : "?");
        json_t *b = json_object_get(n, "bindings");
        if (json_object_size(b)) {
            fputs(" with ", out);
            const char *var;
            json_t *v;
            bool first = true;
            json_object_foreach(b, var, v) {
                fprintf(out, "%s%s = ", first ? "" : ", ", var);
                print_value(out, v);
                first = false;
            }
        }
    } else if (strcmp(kind, "negation") == 0) {
        fputs("  [not derivable]", out);
    } else if (strcmp(kind, "aggregate") == 0) {
        json_t *a = json_object_get(n, "aggregate");
        const char *fn = json_string_value(json_object_get(a, "fn"));
        fprintf(out, "  [aggregate %s = ", fn ? fn : "?");
        print_value(out, json_object_get(a, "result"));
        fprintf(out, " over %lld input(s)]",
                (long long)json_integer_value(json_object_get(a, "contributing_count")));
    } else if (strcmp(kind, "why_not") == 0) {
        json_t *w = json_object_get(n, "why_not");
        const char *clause = json_string_value(json_object_get(w, "clause_text"));
        const char *reason =
            json_string_value(json_object_get(json_object_get(w, "blocker"), "reason"));
        fprintf(out, "  [not by %s: %s]", clause ? clause : "?", reason ? reason : "blocked");
    } else {
        fprintf(out, "  [%s]", kind);
    }
}

/* depth: the node's ancestors, on path[0..depth). */
static void print_node(FILE *out, json_t *nodes, const char *id, int depth, const char **path) {
    for (int i = 0; i <= depth; i++) fputs("  ", out);
    json_t *n = json_object_get(nodes, id);
    if (!n) {
        fprintf(out, "? (no node %s)\n", id);
        return;
    }
    for (int i = 0; i < depth; i++) {
        if (strcmp(path[i], id) == 0) {
            print_atom(out, json_object_get(n, "conclusion"));
            fputs("  [as above]\n", out);
            return;
        }
    }
    print_atom(out, json_object_get(n, "conclusion"));
    print_how(out, n);
    fputc('\n', out);
    if (depth + 1 >= MAX_DEPTH) return;
    path[depth] = id;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(n, "children"), i, c) {
        if (json_is_string(c)) print_node(out, nodes, json_string_value(c), depth + 1, path);
    }
}

void cli_print_proofs(FILE *out, const char *json) {
    json_t *all = json ? json_loads(json, 0, NULL) : NULL;
    if (!json_is_array(all)) {
        json_decref(all);
        return;
    }
    const char *path[MAX_DEPTH];
    size_t i;
    json_t *dag;
    json_array_foreach(all, i, dag) {
        fprintf(out, "Proof %zu:\n", i + 1);
        size_t k;
        json_t *root;
        json_array_foreach(json_object_get(dag, "roots"), k, root) {
            if (json_is_string(root))
                print_node(out, json_object_get(dag, "nodes"), json_string_value(root), 0, path);
        }
    }
    json_decref(all);
}
