/* Rule validation (iql-language.md 3.5): self-negation, unsafe head variables, unsafe
 * negation, and the stratification of the persistent rule set, with the reference's
 * messages and their order of checks. */
#include <stdlib.h>
#include <string.h>

#include "base/scc.h"
#include "base/strmap.h"
#include "iql/print.h"
#include "iql/vars.h"
#include "kg/kg.h"

typedef IL_VEC(const char *) name_vec;

static bool has_name(const name_vec *v, const char *n) {
    for (uint32_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], n) == 0) return true;
    return false;
}

static void add_name(name_vec *v, const char *n) {
    if (!has_name(v, n)) il_vec_push(*v, n);
}

static bool add_var(const char *var, void *ctx) {
    add_name(ctx, var);
    return true;
}

static void term_vars(const iql_term *t, name_vec *out) {
    iql_term_each_var(t, true, add_var, out);
}

/* Variables of positive atoms, closed under the binding forms of `=`. */
static void positive_bound(const iql_rule *r, name_vec *bound) {
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind != IQL_LIT_ATOM) continue;
        for (uint32_t j = 0; j < l->atom.nargs; j++) term_vars(l->atom.args[j], bound);
    }
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = 0; i < r->nbody; i++) {
            const iql_literal *l = &r->body[i];
            if (l->kind != IQL_LIT_CMP || l->op != IQL_CMP_EQ) continue;
            const iql_term *sides[2][2] = {{l->lhs, l->rhs}, {l->rhs, l->lhs}};
            for (int s = 0; s < 2; s++) {
                const iql_term *v = sides[s][0], *e = sides[s][1];
                if (v->kind != IQL_T_VAR || has_name(bound, v->u.var)) continue;
                /* V = f(..), V = arith, V = const bind V; V = W binds when W is bound */
                bool binds = e->kind != IQL_T_VAR || has_name(bound, e->u.var);
                if (e->kind == IQL_T_PLACEHOLDER || e->kind == IQL_T_AGG) binds = false;
                if (binds) {
                    add_name(bound, v->u.var);
                    changed = true;
                }
            }
        }
    }
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *join_sorted(name_vec *v, il_arena *a) {
    if (v->n > 1) qsort(v->v, v->n, sizeof *v->v, cmp_str);
    il_buf b;
    il_buf_init(&b);
    for (uint32_t i = 0; i < v->n; i++) il_buf_printf(&b, "%s%s", i ? ", " : "", v->v[i]);
    char *s = il_arena_strdup(a, il_buf_str(&b));
    il_buf_free(&b);
    return s;
}

const char *kg_validate_rule(const iql_rule *r, il_arena *a) {
    const char *name = r->head.rel;
    il_buf b;
    il_buf_init(&b);
    const char *msg = NULL;
    for (uint32_t i = 0; i < r->nbody && !msg; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind == IQL_LIT_NEG && strcmp(l->atom.rel, name) == 0) {
            il_buf_printf(&b,
                          "Unstratified negation: Rule '%s' negates itself (!%s in body). "
                          "Self-negation is not supported.",
                          name, name);
            msg = il_arena_strdup(a, il_buf_str(&b));
        }
    }
    name_vec bound = {0}, head = {0}, unbound = {0};
    if (!msg) {
        positive_bound(r, &bound);
        for (uint32_t i = 0; i < r->head.nargs; i++) term_vars(r->head.args[i], &head);
        for (uint32_t i = 0; i < head.n; i++)
            if (!has_name(&bound, head.v[i])) add_name(&unbound, head.v[i]);
        if (unbound.n) {
            il_buf_printf(&b,
                          "Unsafe rule '%s': Head variable(s) %s not bound by any positive body "
                          "atom. All head variables must appear in at least one positive body "
                          "predicate.",
                          name, join_sorted(&unbound, a));
            msg = il_arena_strdup(a, il_buf_str(&b));
        }
    }
    for (uint32_t i = 0; i < r->nbody && !msg; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind != IQL_LIT_NEG) continue;
        name_vec nv = {0}, bad = {0};
        for (uint32_t j = 0; j < l->atom.nargs; j++) term_vars(l->atom.args[j], &nv);
        for (uint32_t j = 0; j < nv.n; j++)
            if (!has_name(&bound, nv.v[j])) add_name(&bad, nv.v[j]);
        if (bad.n) {
            il_buf atom;
            il_buf_init(&atom);
            iql_fmt_atom(&l->atom, &atom);
            il_buf_printf(&b,
                          "Unsafe negation in rule '%s': Variable(s) %s in negated atom !%s must "
                          "be bound by a positive body atom. Range restriction violation.",
                          name, join_sorted(&bad, a), il_buf_str(&atom));
            il_buf_free(&atom);
            msg = il_arena_strdup(a, il_buf_str(&b));
        }
        il_vec_free(nv);
        il_vec_free(bad);
    }
    il_vec_free(bound);
    il_vec_free(head);
    il_vec_free(unbound);
    il_buf_free(&b);
    return msg;
}

/* ---- stratification of the persistent rule set ---- */

/* The dependency graph of the rules: a node per relation name (found through a hash
 * map: a graph has a node per rule, and rules can be many), an edge from a head to each
 * relation its body reads, marked when read through a negation. Edges are gathered in
 * one list, then grouped by their source (adj), so that building it allocates little. */
typedef struct dep_edge {
    uint32_t from, to;
    bool negative;
} dep_edge;

typedef struct dep_graph {
    name_vec names;
    il_strmap nodes; /* name -> node + 1 */
    IL_VEC(dep_edge) edges;
    uint32_t *first; /* node v's edges: to[first[v] .. first[v + 1]) */
    uint32_t *to;
    bool *neg;
} dep_graph;

static uint32_t node_of(dep_graph *g, const char *n) {
    uintptr_t known = (uintptr_t)il_strmap_get(&g->nodes, n);
    if (known) return (uint32_t)(known - 1);
    il_vec_push(g->names, n);
    il_strmap_put(&g->nodes, n, (void *)(uintptr_t)g->names.n);
    return g->names.n - 1;
}

static void add_rule_edges(dep_graph *g, const iql_rule *r) {
    uint32_t h = node_of(g, r->head.rel);
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind == IQL_LIT_CMP) continue;
        dep_edge e = {h, node_of(g, l->atom.rel), l->kind == IQL_LIT_NEG};
        il_vec_push(g->edges, e);
    }
}

/* Groups the edges by source (a counting sort). */
static void group_edges(dep_graph *g) {
    uint32_t n = g->names.n, m = g->edges.n;
    g->first = calloc(n + 2, sizeof *g->first);
    g->to = malloc((m + 1) * sizeof *g->to);
    g->neg = malloc((m + 1) * sizeof *g->neg);
    for (uint32_t e = 0; e < m; e++) g->first[g->edges.v[e].from + 1]++;
    for (uint32_t v = 0; v < n; v++) g->first[v + 1] += g->first[v];
    uint32_t *fill = malloc((n + 1) * sizeof *fill);
    memcpy(fill, g->first, (n + 1) * sizeof *fill);
    for (uint32_t e = 0; e < m; e++) {
        const dep_edge *d = &g->edges.v[e];
        g->to[fill[d->from]] = d->to;
        g->neg[fill[d->from]++] = d->negative;
    }
    free(fill);
}

/* The first negated edge of v (by the name it reads) that stays inside component c, or
 * UINT32_MAX. */
static uint32_t negation_within(const dep_graph *g, const uint32_t *comp, uint32_t v, uint32_t c) {
    uint32_t best = UINT32_MAX;
    for (uint32_t e = g->first[v]; e < g->first[v + 1]; e++) {
        uint32_t w = g->to[e];
        if (!g->neg[e] || comp[w] != c) continue;
        if (best == UINT32_MAX || strcmp(g->names.v[w], g->names.v[best]) < 0) best = w;
    }
    return best;
}

const char *kg_check_stratification(kg_graph *kg, const iql_rule *extra, il_arena *a) {
    dep_graph g = {0};
    for (uint32_t i = 0; i < kg->rules.n; i++)
        for (uint32_t j = 0; j < kg->rules.v[i]->clauses.n; j++)
            add_rule_edges(&g, kg->rules.v[i]->clauses.v[j]);
    if (extra) add_rule_edges(&g, extra);
    group_edges(&g);
    uint32_t n = g.names.n;
    uint32_t *nadj = malloc((n + 1) * sizeof *nadj);
    uint32_t **adj = malloc((n + 1) * sizeof *adj);
    for (uint32_t i = 0; i < n; i++) {
        adj[i] = &g.to[g.first[i]];
        nadj[i] = g.first[i + 1] - g.first[i];
    }
    uint32_t *comp = malloc((n + 1) * sizeof *comp);
    uint32_t ncomp = il_scc(n, adj, nadj, comp);
    /* each component's nodes, together: first[c] .. first[c + 1] in order */
    uint32_t *first = calloc(ncomp + 2, sizeof *first);
    uint32_t *order = malloc((n + 1) * sizeof *order);
    for (uint32_t i = 0; i < n; i++) first[comp[i] + 1]++;
    for (uint32_t c = 0; c < ncomp; c++) first[c + 1] += first[c];
    uint32_t *fill = malloc((ncomp + 1) * sizeof *fill);
    memcpy(fill, first, (ncomp + 1) * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) order[fill[comp[i]]++] = i;
    const char *msg = NULL;
    il_buf b;
    il_buf_init(&b);
    for (uint32_t c = 0; c < ncomp && !msg; c++) {
        /* a component of one node can only negate itself */
        if (first[c + 1] - first[c] == 1 &&
            negation_within(&g, comp, order[first[c]], c) == UINT32_MAX)
            continue;
        name_vec members = {0};
        for (uint32_t k = first[c]; k < first[c + 1]; k++)
            il_vec_push(members, g.names.v[order[k]]);
        if (members.n > 1) qsort(members.v, members.n, sizeof *members.v, cmp_str);
        for (uint32_t m = 0; m < members.n && !msg; m++) {
            uint32_t v = node_of(&g, members.v[m]);
            uint32_t w = negation_within(&g, comp, v, c);
            if (w == UINT32_MAX) continue;
            if (w == v) {
                il_buf_printf(&b,
                              "Unstratified negation: '%s' negates itself. Self-negation is "
                              "not supported.",
                              g.names.v[v]);
            } else {
                il_buf_printf(&b,
                              "Unstratified negation: '%s' negates '%s' within a recursive "
                              "cycle. Negation through recursion is not supported. Cycle: [",
                              g.names.v[v], g.names.v[w]);
                for (uint32_t k = 0; k < members.n; k++)
                    il_buf_printf(&b, "%s%s", k ? ", " : "", members.v[k]);
                il_buf_putc(&b, ']');
            }
            msg = il_arena_strdup(a, il_buf_str(&b));
        }
        il_vec_free(members);
    }
    il_buf_free(&b);
    il_vec_free(g.edges);
    free(g.first);
    free(g.to);
    free(g.neg);
    il_strmap_free(&g.nodes);
    il_vec_free(g.names);
    free(adj);
    free(nadj);
    free(comp);
    free(first);
    free(order);
    free(fill);
    return msg;
}
