/* Warnings about a query or rule that runs but cannot mean what it says (kg.h,
 * kg_lint): an atom naming a relation that does not exist (no facts, rule, schema or
 * session data by that name), an atom whose argument count differs from the
 * relation's, and an equality whose sides can never be equal: two constants of
 * different kinds, or a variable whose column holds only values of other kinds than
 * the constant or the variable it is compared with. They are reported in the result's
 * `metadata.warnings`; the statement runs as before. */
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

/* Kinds of values, as bits, for telling whether the two sides of `=` can ever be equal.
 * Numbers compare numerically across int, float and timestamp, so they are one kind;
 * K_ANY stands for a value or a declared type that may equal anything (null, a named
 * type). */
enum { K_NUM = 1, K_STR = 2, K_BOOL = 4, K_VEC = 8, K_ANY = 16, K_ALL = 15 };

/* Stored and session values read to learn a column's kinds, at most, per comparison
 * side: a larger relation whose column has not shown the kind looked for is not judged
 * (no warning rather than a slow lint). */
enum { LINT_SCAN_MAX = 1 << 16 };

/* The kind of a constant term: 0 for a non-constant. */
static unsigned const_kind(const iql_term *t) {
    switch (t->kind) {
    case IQL_T_INT:
    case IQL_T_FLOAT:
        return K_NUM;
    case IQL_T_STRING:
        return K_STR;
    case IQL_T_BOOL:
        return K_BOOL;
    case IQL_T_VECTOR:
        return K_VEC;
    default:
        return 0;
    }
}

static unsigned value_kind(val_t v) {
    switch (val_type_of(v)) {
    case VT_INT:
    case VT_FLOAT:
    case VT_TS:
        return K_NUM;
    case VT_STR:
        return K_STR;
    case VT_BOOL:
        return K_BOOL;
    case VT_VEC:
    case VT_VEC_I8:
        return K_VEC;
    default:
        return K_ANY;
    }
}

static unsigned type_kind(const iql_type *t) {
    switch (t->kind) {
    case IQL_TY_INT:
    case IQL_TY_FLOAT:
        return K_NUM;
    case IQL_TY_STRING:
        return K_STR;
    case IQL_TY_BOOL:
        return K_BOOL;
    case IQL_TY_VECTOR:
        return K_VEC;
    default:
        return K_ANY;
    }
}

/* Adds the kinds of column col of n tuples `stride` words apart to *mask, until one of
 * `want` (or K_ANY) turns up. False when the budget ran out first. */
static bool scan_values(const val_t *t, size_t n, uint32_t stride, uint32_t col, unsigned want,
                        unsigned *mask, size_t *budget) {
    for (size_t i = 0; i < n; i++, t += stride) {
        if (!*budget) return false;
        (*budget)--;
        *mask |= value_kind(t[col]);
        if (*mask & (want | K_ANY)) return true;
    }
    return true;
}

/* The kinds the values of column col of relation `name` can have, learned until one of
 * `want` is found: its schema's type, and the kinds of its stored facts and (in a query)
 * its session facts. 0 when they are not fixed: a rule's results, a column of any type,
 * no schema in a rule (a rule also reads the facts written after it; only a schema binds
 * those), nothing known, or too many values to read. Otherwise either a mask that meets
 * `want`, or every kind the column holds. */
static unsigned column_kinds(il_session *s, const iql_atom *head, const char *name, uint32_t col,
                             unsigned want) {
    if (head && strcmp(head->rel, name) == 0) return 0;
    for (uint32_t i = 0; i < s->rules.n; i++)
        if (strcmp(s->rules.v[i]->head.rel, name) == 0) return 0;
    kg_rule *rule = kg_rule_find(s->kg, name);
    if (rule && rule->clauses.n) return 0;
    kg_relation *rel = kg_rel_find(s->kg, name);
    const iql_schema *sc = rel && rel->schema ? rel->schema : sess_schema_find(s, name);
    unsigned mask = 0;
    if (sc) {
        if (col >= sc->ncols) return 0;
        mask = type_kind(&sc->cols[col].type);
        if (mask & (want | K_ANY)) return mask & K_ANY ? 0 : mask;
    } else if (head) {
        return 0;
    }
    size_t budget = LINT_SCAN_MAX;
    /* a schema declared after facts were stored does not check them: they count too */
    if (rel && rel->data && rel_count(rel->data)) {
        if (col >= rel_arity(rel->data)) return 0;
        rel_cursor c;
        rel_seek(rel->data, 0, NULL, 0, &c);
        const val_t *t;
        size_t n;
        uint32_t stride;
        while (!(mask & (want | K_ANY)) && (t = rel_next_run(&c, &n, &stride)))
            if (!scan_values(t, n, stride, col, want, &mask, &budget)) return 0;
    }
    sess_facts *f = sess_facts_find(s, name);
    if (f && f->vals.n && !(mask & (want | K_ANY))) {
        if (col >= f->arity) return 0;
        uint32_t stride = sess_fact_stride(f);
        if (!scan_values(f->vals.v, f->vals.n / stride, stride, col, want, &mask, &budget))
            return 0;
    }
    return mask & K_ANY ? 0 : mask;
}

/* Where variable `var` is first bound by a positive atom of the goal or body (not
 * hnsw_nearest): the atom and the argument's position. False when it is not. */
static bool var_column(const char *var, const iql_atom *goal, const iql_literal *body,
                       uint32_t nbody, const iql_atom **atom, uint32_t *col) {
    for (uint32_t i = 0; i <= nbody; i++) {
        const iql_atom *a = i == 0 ? goal : &body[i - 1].atom;
        if (!a || (i > 0 && body[i - 1].kind != IQL_LIT_ATOM)) continue;
        if (strcmp(a->rel, "hnsw_nearest") == 0) continue;
        for (uint32_t k = 0; k < a->nargs; k++) {
            if (a->args[k]->kind == IQL_T_VAR && strcmp(a->args[k]->u.var, var) == 0) {
                *atom = a;
                *col = k;
                return true;
            }
        }
    }
    return false;
}

/* "(numbers|strings|bools|vectors)" joined with " and ". */
static void put_kinds(il_buf *w, unsigned mask) {
    static const char *names[] = {"numbers", "strings", "bools", "vectors"};
    bool first = true;
    for (unsigned b = 0; b < 4; b++) {
        if (!(mask & (1u << b))) continue;
        il_buf_printf(w, "%s%s", first ? "" : " and ", names[b]);
        first = false;
    }
}

static void put_column(il_buf *w, const char *var, const iql_atom *a, uint32_t col, unsigned mask) {
    il_buf_printf(w, "%s: column %u of '%s' holds only ", var, col + 1, a->rel);
    put_kinds(w, mask);
}

/* A side of a comparison: a constant's kind, or the column that binds a variable. */
typedef struct lint_side {
    unsigned kind;        /* the constant's, or 0 */
    const iql_atom *atom; /* the variable's binding atom, or NULL */
    uint32_t col;
} lint_side;

static lint_side side_of(const iql_term *t, const iql_atom *goal, const iql_literal *body,
                         uint32_t nbody) {
    lint_side sd = {const_kind(t), NULL, 0};
    if (t->kind == IQL_T_VAR) var_column(t->u.var, goal, body, nbody, &sd.atom, &sd.col);
    return sd;
}

static void lint_cmp(il_session *s, const iql_atom *head, const iql_atom *goal,
                     const iql_literal *body, uint32_t nbody, const iql_literal *l, il_buf *out,
                     unsigned *n) {
    if (l->op != IQL_CMP_EQ) return;
    lint_side a = side_of(l->lhs, goal, body, nbody), b = side_of(l->rhs, goal, body, nbody);
    unsigned ma = a.kind, mb = b.kind;
    if (a.kind && b.kind) {
        if (a.kind == b.kind) return;
    } else if (a.atom && b.kind) {
        ma = column_kinds(s, head, a.atom->rel, a.col, b.kind);
        if (!ma || (ma & b.kind)) return;
    } else if (a.kind && b.atom) {
        mb = column_kinds(s, head, b.atom->rel, b.col, a.kind);
        if (!mb || (mb & a.kind)) return;
    } else if (a.atom && b.atom) {
        /* one value of a's column, then b's column read for that kind, then a's for b's:
         * a sound join stops at its first values */
        ma = column_kinds(s, head, a.atom->rel, a.col, K_ALL);
        if (!ma) return;
        mb = column_kinds(s, head, b.atom->rel, b.col, ma);
        if (!mb || (mb & ma)) return;
        ma = column_kinds(s, head, a.atom->rel, a.col, mb);
        if (!ma || (ma & mb)) return;
    } else {
        return;
    }
    il_buf w;
    il_buf_init(&w);
    iql_fmt_term(l->lhs, &w);
    il_buf_puts(&w, " = ");
    iql_fmt_term(l->rhs, &w);
    il_buf_puts(&w, " compares values of different types: it is never true");
    if (a.atom || b.atom) {
        il_buf_puts(&w, " (");
        if (a.atom) put_column(&w, l->lhs->u.var, a.atom, a.col, ma);
        if (a.atom && b.atom) il_buf_puts(&w, "; ");
        if (b.atom) put_column(&w, l->rhs->u.var, b.atom, b.col, mb);
        il_buf_putc(&w, ')');
    }
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
            lint_cmp(s, head, goal, body, nbody, &body[i], &out, &n);
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
