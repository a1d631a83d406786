/* Warnings about a query or rule that runs but cannot mean what it says (kg.h,
 * kg_lint): an atom naming a relation that does not exist (no facts, rule, schema or
 * session data by that name), an atom whose argument count differs from the
 * relation's, and an equality between two constants of different kinds, which can
 * never hold. They are reported in the result's `metadata.warnings`; the statement
 * runs as before. */
#include <stdbool.h>
#include <string.h>

#include "base/buf.h"
#include "base/json_str.h"
#include "iql/print.h"
#include "kg/kg.h"

enum { MAX_WARNINGS = 16 };

/* The arity of the relation or rule called name, as the session sees it: 1 and *arity
 * when known, 0 when it exists without a fixed arity yet, -1 when nothing has that
 * name. */
static int known(il_session *s, const iql_atom *head, const char *name, uint32_t *arity) {
    if (head && strcmp(head->rel, name) == 0) {
        *arity = kg_head_arity(head);
        return 1;
    }
    for (uint32_t i = 0; i < s->rules.n; i++) {
        if (strcmp(s->rules.v[i]->head.rel, name) == 0) {
            *arity = kg_head_arity(&s->rules.v[i]->head);
            return 1;
        }
    }
    sess_facts *f = sess_facts_find(s, name);
    if (f) {
        *arity = f->arity;
        return 1;
    }
    kg_rule *r = kg_rule_find(s->kg, name);
    if (r && r->clauses.n) {
        *arity = kg_head_arity(&r->clauses.v[0]->head);
        return 1;
    }
    kg_relation *rel = kg_rel_find(s->kg, name);
    if (rel && rel->data) {
        *arity = rel_arity(rel->data);
        return 1;
    }
    if (rel && rel->schema) {
        *arity = rel->schema->ncols;
        return 1;
    }
    const iql_schema *sc = sess_schema_find(s, name);
    if (sc) {
        *arity = sc->ncols;
        return 1;
    }
    return rel ? 0 : -1;
}

static void add(il_buf *out, unsigned *n, const il_buf *w) {
    if (*n == MAX_WARNINGS) return;
    il_buf_puts(out, (*n)++ ? "," : "[");
    il_json_str(out, w->data, w->len);
}

/* A query's goal (`goal`) may name fewer columns than its relation has (its rows are
 * the relation's, every column shown), so only a body atom's count is checked. */
static void lint_atom(il_session *s, const iql_atom *head, const iql_atom *a, bool goal,
                      il_buf *out, unsigned *n) {
    if (strcmp(a->rel, "hnsw_nearest") == 0) return;
    uint32_t arity = 0;
    int k = known(s, head, a->rel, &arity);
    il_buf w;
    il_buf_init(&w);
    if (k < 0) {
        il_buf_printf(&w, "'%s' does not exist (no facts, rule or schema by that name): ", a->rel);
        iql_fmt_atom(a, &w);
        il_buf_puts(&w, " matches nothing");
        add(out, n, &w);
    } else if (k > 0 && arity != a->nargs && !goal) {
        iql_fmt_atom(a, &w);
        il_buf_printf(&w, " has %u argument(s), but '%s' has %u column(s): it matches nothing",
                      a->nargs, a->rel, arity);
        add(out, n, &w);
    }
    il_buf_free(&w);
}

/* The kind of a constant term, for comparing kinds: 0 for a non-constant. */
static int const_kind(const iql_term *t) {
    switch (t->kind) {
    case IQL_T_INT:
    case IQL_T_FLOAT:
        return 1; /* numbers compare across int and float */
    case IQL_T_STRING:
        return 2;
    case IQL_T_BOOL:
        return 3;
    case IQL_T_VECTOR:
        return 4;
    default:
        return 0;
    }
}

static void lint_cmp(const iql_literal *l, il_buf *out, unsigned *n) {
    if (l->op != IQL_CMP_EQ) return;
    int a = const_kind(l->lhs), b = const_kind(l->rhs);
    if (!a || !b || a == b) return;
    il_buf w;
    il_buf_init(&w);
    iql_fmt_term(l->lhs, &w);
    il_buf_puts(&w, " = ");
    iql_fmt_term(l->rhs, &w);
    il_buf_puts(&w, " compares values of different types: it is never true");
    add(out, n, &w);
    il_buf_free(&w);
}

char *kg_lint(il_session *s, const iql_atom *head, const iql_atom *goal, const iql_literal *body,
              uint32_t nbody) {
    il_buf out;
    il_buf_init(&out);
    unsigned n = 0;
    if (goal) lint_atom(s, head, goal, true, &out, &n);
    for (uint32_t i = 0; i < nbody; i++) {
        if (body[i].kind == IQL_LIT_CMP)
            lint_cmp(&body[i], &out, &n);
        else
            lint_atom(s, head, &body[i].atom, false, &out, &n);
    }
    if (!n) {
        il_buf_free(&out);
        return NULL;
    }
    il_buf_putc(&out, ']');
    return il_buf_take(&out);
}

void kg_lint_attach(il_result *r, char *warnings) {
    if (!warnings) return;
    il_buf b;
    il_buf_init(&b);
    const char *m = r->metadata_json;
    const char *w = m ? strstr(m, "\"warnings\":[") : NULL;
    if (w) {
        /* the session's notes first, then these */
        const char *end = strchr(w, ']');
        il_buf_put(&b, m, (size_t)(end - m));
        il_buf_putc(&b, ',');
        il_buf_puts(&b, warnings + 1);
        il_buf_puts(&b, end + 1);
    } else if (m) {
        il_buf_put(&b, m, strlen(m) - 1);
        il_buf_printf(&b, ",\"warnings\":%s}", warnings);
    } else {
        il_buf_printf(&b, "{\"has_ephemeral\":false,\"warnings\":%s}", warnings);
    }
    free(r->metadata_json);
    r->metadata_json = il_buf_take(&b);
    free(warnings);
}
