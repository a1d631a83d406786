/* Rule validation (iql-language.md 3.5): self-negation, unsafe head variables, unsafe
 * negation, and the stratification of the persistent rule set, with the reference's
 * messages and their order of checks. */
#include <stdlib.h>
#include <string.h>

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

typedef struct dep_edge {
    uint32_t to;
    bool negative;
} dep_edge;

typedef struct dep_graph {
    name_vec names;
    IL_VEC(dep_edge) * edges; /* per node */
    uint32_t cap;
} dep_graph;

static uint32_t node_of(dep_graph *g, const char *n) {
    for (uint32_t i = 0; i < g->names.n; i++)
        if (strcmp(g->names.v[i], n) == 0) return i;
    il_vec_push(g->names, n);
    if (g->names.n > g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 16;
        g->edges = realloc(g->edges, cap * sizeof *g->edges);
        memset(g->edges + g->cap, 0, (cap - g->cap) * sizeof *g->edges);
        g->cap = cap;
    }
    return g->names.n - 1;
}

static void add_rule_edges(dep_graph *g, const iql_rule *r) {
    uint32_t h = node_of(g, r->head.rel);
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind == IQL_LIT_CMP) continue;
        dep_edge e = {node_of(g, l->atom.rel), l->kind == IQL_LIT_NEG};
        il_vec_push(g->edges[h], e);
    }
}

typedef struct scc_state {
    dep_graph *g;
    uint32_t *index, *low, *stack, *comp;
    bool *on;
    uint32_t next, sp, ncomp;
} scc_state;

static void scc_visit(scc_state *s, uint32_t v) {
    s->index[v] = s->low[v] = s->next++;
    s->stack[s->sp++] = v;
    s->on[v] = true;
    for (uint32_t i = 0; i < s->g->edges[v].n; i++) {
        uint32_t w = s->g->edges[v].v[i].to;
        if (s->index[w] == UINT32_MAX) {
            scc_visit(s, w);
            if (s->low[w] < s->low[v]) s->low[v] = s->low[w];
        } else if (s->on[w] && s->index[w] < s->low[v]) {
            s->low[v] = s->index[w];
        }
    }
    if (s->low[v] == s->index[v]) {
        uint32_t w;
        do {
            w = s->stack[--s->sp];
            s->on[w] = false;
            s->comp[w] = s->ncomp;
        } while (w != v);
        s->ncomp++;
    }
}

static int cmp_edge_target(const void *a, const void *b, void *names) {
    const dep_edge *x = a, *y = b;
    const char **n = names;
    return strcmp(n[x->to], n[y->to]);
}

const char *kg_check_stratification(kg_graph *kg, const iql_rule *extra, il_arena *a) {
    dep_graph g = {0};
    for (uint32_t i = 0; i < kg->rules.n; i++)
        for (uint32_t j = 0; j < kg->rules.v[i]->clauses.n; j++)
            add_rule_edges(&g, kg->rules.v[i]->clauses.v[j]);
    if (extra) add_rule_edges(&g, extra);
    uint32_t n = g.names.n;
    scc_state s = {.g = &g};
    s.index = malloc((n + 1) * sizeof *s.index);
    s.low = malloc((n + 1) * sizeof *s.low);
    s.stack = malloc((n + 1) * sizeof *s.stack);
    s.comp = malloc((n + 1) * sizeof *s.comp);
    s.on = calloc(n + 1, 1);
    for (uint32_t i = 0; i < n; i++) s.index[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (s.index[i] == UINT32_MAX) scc_visit(&s, i);
    const char *msg = NULL;
    il_buf b;
    il_buf_init(&b);
    for (uint32_t c = 0; c < s.ncomp && !msg; c++) {
        name_vec members = {0};
        for (uint32_t i = 0; i < n; i++)
            if (s.comp[i] == c) il_vec_push(members, g.names.v[i]);
        if (members.n > 1) qsort(members.v, members.n, sizeof *members.v, cmp_str);
        for (uint32_t m = 0; m < members.n && !msg; m++) {
            uint32_t v = node_of(&g, members.v[m]);
            if (g.edges[v].n > 1)
                qsort_r(g.edges[v].v, g.edges[v].n, sizeof(dep_edge), cmp_edge_target, g.names.v);
            for (uint32_t e = 0; e < g.edges[v].n && !msg; e++) {
                dep_edge *ed = &g.edges[v].v[e];
                if (!ed->negative || s.comp[ed->to] != c) continue;
                if (ed->to == v) {
                    il_buf_printf(&b,
                                  "Unstratified negation: '%s' negates itself. Self-negation is "
                                  "not supported.",
                                  g.names.v[v]);
                } else {
                    il_buf_printf(&b,
                                  "Unstratified negation: '%s' negates '%s' within a recursive "
                                  "cycle. Negation through recursion is not supported. Cycle: [",
                                  g.names.v[v], g.names.v[ed->to]);
                    for (uint32_t k = 0; k < members.n; k++)
                        il_buf_printf(&b, "%s%s", k ? ", " : "", members.v[k]);
                    il_buf_putc(&b, ']');
                }
                msg = il_arena_strdup(a, il_buf_str(&b));
            }
        }
        il_vec_free(members);
    }
    il_buf_free(&b);
    for (uint32_t i = 0; i < g.cap; i++) il_vec_free(g.edges[i]);
    free(g.edges);
    il_vec_free(g.names);
    free(s.index);
    free(s.low);
    free(s.stack);
    free(s.comp);
    free(s.on);
    return msg;
}
