/* The read policy of maintained views (read_policy.h). Each maintained rule is one view
 * of `?rule(V0, ..., Vn)`: its rows are exactly what evaluating the rule over the graph's
 * own rules and facts gives, so a query may read them as if they were stored facts. The
 * plan cache holds programs that point into those rows, so every change of the set of
 * maintained rules empties the graph's plan cache. */
#include "views/read_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/vec.h"
#include "iql/parser.h"
#include "views/catalog.h"
#include "views/view.h"

typedef struct maintained_rule {
    char *name;
    view_t *view; /* NULL: refused (cannot be maintained) until the version moves */
    rel_t *truth; /* a rule of no columns: its rows as a relation of no columns (the
                     view keeps a placeholder column), set from the view when read */
} maintained_rule;

typedef struct read_policy {
    IL_VEC(maintained_rule) rules;
    uint64_t version; /* the graph's version the rules were chosen at */
} read_policy;

static void policy_clear(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    if (!p) return;
    bool had_views = false;
    for (uint32_t i = 0; i < p->rules.n; i++) {
        had_views |= p->rules.v[i].view != NULL;
        view_close(p->rules.v[i].view);
        rel_free(p->rules.v[i].truth);
        free(p->rules.v[i].name);
    }
    p->rules.n = 0;
    if (had_views) view_cat_flush_plans(g); /* cached programs may point into the closed views */
}

static maintained_rule *find(read_policy *p, const char *rel) {
    for (uint32_t i = 0; p && i < p->rules.n; i++)
        if (strcmp(p->rules.v[i].name, rel) == 0) return &p->rules.v[i];
    return NULL;
}

/* The view of rule `rel` (of `arity` columns) over the session's graph as the read policy
 * keeps it, or NULL when it cannot be maintained; *stopped when the statement's guard
 * stopped computing it (its rows are the reading statement's evaluation). */
static view_t *open_rule_view(il_session *s, const char *rel, uint32_t arity, bool own_clauses,
                              bool *stopped) {
    *stopped = false;
    const rel_t *stored = view_cat_stored(view_cat_graph(s), rel);
    /* stored facts of another width make reads of the rule quirky: leave them alone */
    if (arity > REL_MAX_ARITY || (stored && rel_arity(stored) != arity)) return NULL;
    il_buf text;
    il_buf_init(&text);
    il_buf_printf(&text, "?%s(", rel);
    for (uint32_t i = 0; i < arity; i++) il_buf_printf(&text, "%sV%u", i ? ", " : "", i);
    il_buf_puts(&text, ")");
    const char *err = NULL;
    view_opts o = {
        .guard = view_cat_guard(s), .refuse_clock = true, .lazy = true, .own_clauses = own_clauses};
    view_t *v = view_open_with(s, il_buf_str(&text), o, &err, stopped);
    il_buf_free(&text);
    if (v && view_arity(v) != arity) {
        view_close(v);
        v = NULL;
    }
    return v;
}

/* The graph's policy, emptied first when the graph's version moved since it was kept. */
static read_policy *current_policy(kg_graph *g) {
    read_policy **slot = view_cat_policy(g);
    if (!*slot) *slot = calloc(1, sizeof **slot);
    read_policy *p = *slot;
    uint64_t version = view_cat_version(g);
    if (p->version != version) policy_clear(g);
    p->version = version;
    return p;
}

static void keep(kg_graph *g, read_policy *p, const char *rel, view_t *v, uint32_t arity) {
    maintained_rule m = {strdup(rel), v, v && arity == 0 ? rel_new(0) : NULL};
    il_vec_push(p->rules, m);
    if (v) view_cat_flush_plans(g);
}

/* Starts maintaining `rel` when it is a persistent rule not yet decided on. Computing the
 * view's rows is the reading statement's evaluation, under its guard: a read that is
 * stopped leaves the rule undecided. */
static void maintain(il_session *s, const char *rel) {
    kg_graph *g = view_cat_graph(s);
    if (!g) return;
    read_policy *p = current_policy(g);
    if (find(p, rel)) return;
    uint32_t arity;
    if (!view_cat_rule_arity(g, rel, &arity)) return;
    bool stopped;
    view_t *v = open_rule_view(s, rel, arity, false, &stopped);
    if (!stopped) keep(g, p, rel, v, arity);
}

/* Whether the goal binds nothing: every argument a variable of its own (or `_`). */
static bool goal_unbound(const iql_atom *goal) {
    for (uint32_t i = 0; i < goal->nargs; i++) {
        const iql_term *t = goal->args[i];
        if (t->kind == IQL_T_PLACEHOLDER) continue;
        if (t->kind != IQL_T_VAR) return false;
        for (uint32_t j = 0; j < i; j++)
            if (goal->args[j]->kind == IQL_T_VAR && strcmp(goal->args[j]->u.var, t->u.var) == 0)
                return false;
    }
    return true;
}

void read_policy_note_query(il_session *s, const iql_query *q) {
    if (!view_cat_maintained(view_cat_engine(s)) || view_cat_session_involved(s) ||
        !goal_unbound(&q->goal))
        return;
    maintain(s, q->goal.rel);
}

view_t *read_policy_build(il_session *s, const iql_query *q, bool *stopped) {
    *stopped = false;
    uint32_t arity;
    if (!view_cat_maintained(view_cat_engine(s)) || view_cat_session_involved(s) ||
        !goal_unbound(&q->goal) || !view_cat_rule_arity(view_cat_graph(s), q->goal.rel, &arity))
        return NULL;
    /* a rule of no columns keeps its truth beside the view (maintained_rule): the
       serialized read that decides it makes that */
    return arity ? open_rule_view(s, q->goal.rel, arity, true, stopped) : NULL;
}

bool read_policy_undecided(kg_graph *g, const char *rel) {
    read_policy *p = *view_cat_policy(g);
    return !p || p->version != view_cat_version(g) || !find(p, rel);
}

void read_policy_adopt(kg_graph *g, const char *rel, view_t *v) {
    read_policy *p = current_policy(g);
    keep(g, p, rel, v, view_arity(v));
}

bool read_policy_active(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    if (!p || p->version != view_cat_version(g)) return false;
    bool any = false;
    for (uint32_t i = 0; i < p->rules.n; i++) {
        maintained_rule *m = &p->rules.v[i];
        if (!m->view) continue;
        const rel_t *rows = view_current_rows(m->view);
        if (!rows) return false;
        if (m->truth) {
            val_t none = 0; /* the empty tuple: no word is read */
            if (rel_count(rows))
                rel_insert(m->truth, &none);
            else
                rel_delete(m->truth, &none);
        }
        any = true;
    }
    return any;
}

const rel_t *read_policy_rows(kg_graph *g, const char *rel) {
    maintained_rule *m = find(*view_cat_policy(g), rel);
    if (!m || !m->view) return NULL;
    const rel_t *rows = view_current_rows(m->view);
    return rows && m->truth ? m->truth : rows;
}

uint32_t read_policy_entries(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    return p ? p->rules.n : 0;
}

const rel_t *read_policy_entry(kg_graph *g, uint32_t i, const char **rel) {
    maintained_rule *m = &(*view_cat_policy(g))->rules.v[i];
    *rel = m->name;
    if (!m->view) return NULL;
    const rel_t *rows = view_current_rows(m->view);
    return rows && m->truth ? m->truth : rows;
}

uint32_t read_policy_count(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    uint32_t n = 0;
    for (uint32_t i = 0; p && p->version == view_cat_version(g) && i < p->rules.n; i++)
        n += p->rules.v[i].view != NULL;
    return n;
}

size_t read_policy_state_tuples(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    size_t n = 0;
    for (uint32_t i = 0; p && i < p->rules.n; i++)
        if (p->rules.v[i].view) n += view_state_tuples(p->rules.v[i].view);
    return n;
}

void read_policy_graph_commit(kg_graph *g) {
    read_policy *p = *view_cat_policy(g);
    if (p && p->rules.n && p->version != view_cat_version(g)) policy_clear(g);
}

void read_policy_graph_clear(kg_graph *g) {
    policy_clear(g);
}

void read_policy_graph_free(kg_graph *g) {
    read_policy **slot = view_cat_policy(g);
    if (!*slot) return;
    policy_clear(g);
    il_vec_free((*slot)->rules);
    free(*slot);
    *slot = NULL;
}
