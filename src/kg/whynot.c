/* `.why_not rel(values)`: why a tuple was not derived (iql-language.md 4.8). For each
 * clause of the relation's persistent rule, the head is unified with the values and the
 * body is walked in order, each positive atom taking the first matching tuple (in value
 * order) to bind its variables, until a literal fails: that literal is the blocker.
 * Derived relations are read through ordinary queries, so every rule is honoured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"
#include "iql/parser.h"
#include "iql/print.h"
#include "kg/kg.h"
#include "plan/build.h"
#include "base/json_str.h"
#include "value/print.h"

typedef struct binding {
    const char *var;
    val_t v;
} binding;

typedef struct env {
    binding b[128];
    uint32_t n;
} env;

static bool env_get(const env *e, const char *var, val_t *v) {
    for (uint32_t i = 0; i < e->n; i++)
        if (strcmp(e->b[i].var, var) == 0) {
            *v = e->b[i].v;
            return true;
        }
    return false;
}

static void env_set(env *e, const char *var, val_t v) {
    val_t old;
    if (e->n < 128 && !env_get(e, var, &old)) e->b[e->n++] = (binding){var, v};
}

/* The value of a term under the bindings, if it has one. */
static bool term_value(const iql_term *t, const env *e, val_t *v) {
    switch (t->kind) {
    case IQL_T_VAR:
        return env_get(e, t->u.var, v);
    default:
        if (!plan_term_is_const(t)) return false;
        *v = plan_const_value(t);
        return true;
    }
}

/* `rel(2, Y)`: bound arguments by value, the others as written. */
static void fmt_bound_atom(const iql_atom *at, const env *e, il_buf *out) {
    il_buf_printf(out, "%s(", at->rel);
    for (uint32_t i = 0; i < at->nargs; i++) {
        if (i) il_buf_puts(out, ", ");
        val_t v;
        if (term_value(at->args[i], e, &v))
            val_fmt_display(v, out);
        else
            iql_fmt_term(at->args[i], out);
    }
    il_buf_putc(out, ')');
}

/* The first tuple (value order) of `at` under the bindings, or false when none. */
static bool first_match(il_session *s, const iql_atom *at, const env *e, il_arena *a, val_t *row,
                        const char **err) {
    iql_query q;
    memset(&q, 0, sizeof q);
    q.limit = 1;
    q.goal.rel = at->rel;
    q.goal.nargs = at->nargs;
    q.goal.args = il_arena_alloc(a, (at->nargs + 1) * sizeof(iql_term *));
    for (uint32_t i = 0; i < at->nargs; i++) {
        const iql_term *t = at->args[i];
        val_t v;
        if (t->kind == IQL_T_VAR && env_get(e, t->u.var, &v)) {
            /* a bound variable becomes a fresh variable equal to its value */
            iql_term *c = il_arena_calloc(a, sizeof *c);
            c->kind = IQL_T_VAR;
            char name[32];
            snprintf(name, sizeof name, "_b%u", i);
            c->u.var = il_arena_strdup(a, name);
            q.goal.args[i] = c;
            continue;
        }
        q.goal.args[i] = (iql_term *)t;
    }
    /* bound values as equalities, so numbers match numerically */
    q.extra = il_arena_alloc(a, (at->nargs + 1) * sizeof *q.extra);
    for (uint32_t i = 0; i < at->nargs; i++) {
        const iql_term *t = at->args[i];
        val_t v;
        if (!(t->kind == IQL_T_VAR && env_get(e, t->u.var, &v))) continue;
        iql_literal *l = &q.extra[q.nextra++];
        memset(l, 0, sizeof *l);
        l->kind = IQL_LIT_CMP;
        l->op = IQL_CMP_EQ;
        l->lhs = q.goal.args[i];
        /* the value as a literal term */
        iql_term *c = il_arena_calloc(a, sizeof *c);
        switch (val_type_of(v)) {
        case VT_INT:
        case VT_TS:
            c->kind = IQL_T_INT;
            c->u.ival = val_get_int(v);
            break;
        case VT_FLOAT:
            c->kind = IQL_T_FLOAT;
            c->u.fval = val_get_float(v);
            break;
        case VT_BOOL:
            c->kind = IQL_T_BOOL;
            c->u.bval = val_get_bool(v);
            break;
        case VT_STR: {
            size_t n;
            const char *p = val_get_str(v, &n);
            c->kind = IQL_T_STRING;
            c->u.str.ptr = il_arena_strndup(a, p, n);
            c->u.str.len = n;
            break;
        }
        default:
            q.nextra--;
            continue;
        }
        l->rhs = c;
    }
    kg_query_opts o = {0};
    il_result *r = kg_query(s, &q, o);
    bool found = false;
    if (r->kind == IL_RESULT_ERROR) {
        *err = il_arena_strdup(a, r->lines.n ? r->lines.v[0] : "query failed");
    } else if (r->kind == IL_RESULT_TABLE && r->nrows > 0 && r->width >= at->nargs) {
        memcpy(row, r->cells.v, at->nargs * sizeof *row);
        found = true;
    }
    il_result_free(r);
    return found;
}

static const char *cmp_text(iql_cmp_op op) {
    switch (op) {
    case IQL_CMP_EQ:
        return "==";
    case IQL_CMP_NE:
        return "!=";
    case IQL_CMP_LT:
        return "<";
    case IQL_CMP_LE:
        return "<=";
    case IQL_CMP_GT:
        return ">";
    case IQL_CMP_GE:
        return ">=";
    }
    return "?";
}

/* Decides a comparison whose sides are bound: numbers numerically, other values of one
 * type by the value order, values of different types only by `!=`. */
static bool holds(const iql_literal *l, const env *e, bool *known) {
    val_t x, y;
    *known = term_value(l->lhs, e, &x) && term_value(l->rhs, e, &y);
    if (!*known) return true;
    int c = val_cmp_sort(x, y);
    bool numeric = val_is_numeric(x) && val_is_numeric(y);
    if (!numeric && val_type_of(x) != val_type_of(y)) return l->op == IQL_CMP_NE;
    return exec_order_holds(l->op, c);
}

/* What stopped a clause, for the proof tree's `blocker` (its `reason` is the text). */
typedef struct blocker {
    const char *type;
    int32_t lit;    /* the body literal, -1 for the head */
    il_buf text;    /* the literal with its bound values */
    bool has_sides; /* a comparison: lhs, rhs */
    val_t lhs, rhs;
    uint32_t nmatch; /* a negation: the tuple that exists */
    val_t match[REL_MAX_ARITY];
} blocker;

/* The blocker of one clause for the target values, into `out` and `bk`; false when none. */
static bool clause_blocker(il_session *s, const iql_rule *r, const val_t *vals, uint32_t n,
                           il_arena *a, il_buf *out, blocker *bk) {
    bk->type = "head_mismatch";
    bk->lit = -1;
    if (r->head.nargs != n) {
        il_buf_printf(out, "Head unification failed: Target arity %u does not match head arity %u",
                      n, r->head.nargs);
        return true;
    }
    env e = {.n = 0};
    for (uint32_t i = 0; i < n; i++) {
        const iql_term *t = r->head.args[i];
        if (t->kind == IQL_T_VAR) {
            val_t v;
            if (env_get(&e, t->u.var, &v) && v != vals[i]) {
                il_buf_puts(out, "Head unification failed: conflicting values for ");
                il_buf_puts(out, t->u.var);
                return true;
            }
            env_set(&e, t->u.var, vals[i]);
        } else if (t->kind != IQL_T_PLACEHOLDER) {
            val_t v;
            if (term_value(t, &e, &v) && v != vals[i]) {
                il_buf_puts(out, "Head unification failed: constant does not match");
                return true;
            }
        }
    }
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        if (l->kind == IQL_LIT_CMP) {
            if (l->op == IQL_CMP_EQ && l->lhs->kind == IQL_T_VAR) {
                val_t v;
                if (!env_get(&e, l->lhs->u.var, &v) && term_value(l->rhs, &e, &v)) {
                    env_set(&e, l->lhs->u.var, v);
                    continue;
                }
            }
            bool known;
            if (holds(l, &e, &known) || !known) continue;
            val_t x, y;
            term_value(l->lhs, &e, &x);
            term_value(l->rhs, &e, &y);
            bk->type = "comparison_failed";
            bk->lit = (int32_t)i;
            bk->has_sides = true;
            bk->lhs = x;
            bk->rhs = y;
            iql_fmt_literal(l, &bk->text);
            il_buf lx, ly;
            il_buf_init(&lx);
            il_buf_init(&ly);
            val_fmt_display(x, &lx);
            val_fmt_display(y, &ly);
            il_buf_printf(out, "Comparison %s %s %s failed: %s vs %s", il_buf_str(&lx),
                          cmp_text(l->op), il_buf_str(&ly), il_buf_str(&lx), il_buf_str(&ly));
            il_buf_free(&lx);
            il_buf_free(&ly);
            return true;
        }
        val_t row[REL_MAX_ARITY];
        const char *err = NULL;
        bool found = l->atom.nargs <= REL_MAX_ARITY && first_match(s, &l->atom, &e, a, row, &err);
        bk->lit = (int32_t)i;
        fmt_bound_atom(&l->atom, &e, &bk->text);
        if (err) {
            bk->type = "error";
            il_buf_puts(out, err);
            return true;
        }
        if (l->kind == IQL_LIT_NEG) {
            if (!found) {
                il_buf_clear(&bk->text);
                continue;
            }
            bk->type = "negation_exists";
            bk->nmatch = l->atom.nargs;
            memcpy(bk->match, row, l->atom.nargs * sizeof *row);
            il_buf_puts(out, "Negated ");
            fmt_bound_atom(&l->atom, &e, out);
            il_buf_puts(out, " exists");
            return true;
        }
        if (!found) {
            bk->type = "missing_tuple";
            il_buf_printf(out, "Body predicate %u (", i);
            fmt_bound_atom(&l->atom, &e, out);
            il_buf_printf(out, ") failed: No matching tuples in %s", l->atom.rel);
            return true;
        }
        il_buf_clear(&bk->text);
        for (uint32_t j = 0; j < l->atom.nargs; j++)
            if (l->atom.args[j]->kind == IQL_T_VAR) env_set(&e, l->atom.args[j]->u.var, row[j]);
    }
    bk->type = "none";
    bk->lit = -1;
    return false;
}

/* One `why_not` node of the proof tree: the target and what stopped one clause (protocol-
 * later.md 1.13). `clause` is NULL when no rule produces the relation. */
static void json_node(il_buf *j, uint32_t id, const iql_atom *goal, const val_t *vals,
                      const iql_rule *clause, uint32_t index, const blocker *bk,
                      const char *reason) {
    if (id) il_buf_putc(j, ',');
    il_buf_printf(j, "\"w%u\":{\"kind\":\"why_not\",\"conclusion\":{\"pred\":", id);
    il_json_str(j, goal->rel, strlen(goal->rel));
    il_buf_puts(j, ",\"args\":[");
    for (uint32_t i = 0; i < goal->nargs; i++) {
        if (i) il_buf_putc(j, ',');
        val_fmt_json(vals[i], j);
    }
    il_buf_puts(j, "]},\"why_not\":{\"rule_name\":");
    il_json_str(j, goal->rel, strlen(goal->rel));
    if (clause) {
        il_buf t;
        il_buf_init(&t);
        iql_fmt_rule(clause, &t);
        il_buf_printf(j, ",\"clause_index\":%u,\"clause_text\":", index);
        il_json_str(j, t.data, t.len);
        il_buf_free(&t);
    }
    il_buf_puts(j, ",\"blocker\":{\"type\":");
    il_json_str(j, bk->type, strlen(bk->type));
    if (reason && *reason) {
        il_buf_puts(j, ",\"reason\":");
        il_json_str(j, reason, strlen(reason));
    }
    const iql_literal *l = clause && bk->lit >= 0 ? &clause->body[bk->lit] : NULL;
    if (l && bk->has_sides) {
        il_buf_printf(j, ",\"predicate_index\":%d,\"comparison_text\":", bk->lit);
        il_json_str(j, bk->text.data ? bk->text.data : "", bk->text.len);
        il_buf_puts(j, ",\"lhs_value\":");
        val_fmt_json(bk->lhs, j);
        il_buf_puts(j, ",\"rhs_value\":");
        val_fmt_json(bk->rhs, j);
    } else if (l) {
        il_buf_printf(j, ",\"predicate_index\":%d,\"predicate_text\":", bk->lit);
        il_json_str(j, bk->text.data ? bk->text.data : "", bk->text.len);
        il_buf_puts(j, ",\"relation\":");
        il_json_str(j, l->atom.rel, strlen(l->atom.rel));
        if (bk->nmatch) {
            il_buf_puts(j, ",\"matching_tuple\":[");
            for (uint32_t i = 0; i < bk->nmatch; i++) {
                if (i) il_buf_putc(j, ',');
                val_fmt_json(bk->match[i], j);
            }
            il_buf_putc(j, ']');
        }
    }
    il_buf_puts(j, "}}}");
}

static void add_row(il_result *r, const char *text) {
    il_vec_push(r->cells, val_str(text, strlen(text)));
    r->nrows++;
}

il_result *kg_why_not(il_session *s, const iql_meta *m, il_arena *a) {
    const char *text = m->text;
    size_t len = strlen(text);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t')) len--;
    const char *open = memchr(text, '(', len);
    if (!open)
        return res_error("Why-not error: Expected format: relation(val1, val2, ...), got: %s",
                         text);
    if (text[len - 1] != ')')
        return res_error("Why-not error: Missing closing parenthesis in: %s", text);
    /* the target parsed as the goal of a query (with the statement): its arguments must be
       values */
    const iql_stmt *inner = m->inner;
    bool ok = inner && inner->kind == IQL_STMT_QUERY && inner->u.query.nextra == 0;
    if (!ok) return res_error("Why-not error: Invalid format: %s", text);
    const iql_atom *goal = &inner->u.query.goal;
    val_t vals[REL_MAX_ARITY];
    if (goal->nargs > REL_MAX_ARITY) return res_error("Why-not error: Invalid format: %s", text);
    for (uint32_t i = 0; i < goal->nargs; i++) {
        if (!plan_term_is_const(goal->args[i]))
            return res_error("Why-not error: Invalid format: %s", text);
        vals[i] = plan_const_value(goal->args[i]);
    }
    il_result *r = res_new(IL_RESULT_TABLE);
    r->width = 1;
    res_add_col(r, "explanation");
    il_buf line;
    il_buf_init(&line);
    il_buf_printf(&line, "%s(", goal->rel);
    for (uint32_t i = 0; i < goal->nargs; i++) {
        if (i) il_buf_puts(&line, ", ");
        val_fmt_display(vals[i], &line);
    }
    il_buf_puts(&line, ") was NOT derived:");
    add_row(r, il_buf_str(&line));
    uint64_t t0 = exec_clock_ns(), eval0 = s->eval_ns;
    /* the proof tree: one why_not node per clause, each a root */
    il_buf nodes, roots;
    il_buf_init(&nodes);
    il_buf_init(&roots);
    kg_rule *rule = kg_rule_find(s->kg, goal->rel);
    if (!rule || rule->clauses.n == 0) {
        add_row(r, "  No rules produce this relation.");
        blocker bk = {.type = "no_rules", .lit = -1};
        json_node(&nodes, 0, goal, vals, NULL, 0, &bk, "No rules produce this relation.");
        il_buf_puts(&roots, "\"w0\"");
    }
    for (uint32_t c = 0; rule && c < rule->clauses.n; c++) {
        const iql_rule *cl = rule->clauses.v[c];
        il_buf blocker_text;
        il_buf_init(&blocker_text);
        blocker bk;
        memset(&bk, 0, sizeof bk);
        il_buf_init(&bk.text);
        bool blocked = clause_blocker(s, cl, vals, goal->nargs, a, &blocker_text, &bk);
        json_node(&nodes, c, goal, vals, cl, c, &bk, il_buf_str(&blocker_text));
        il_buf_printf(&roots, c ? ",\"w%u\"" : "\"w%u\"", c);
        il_buf_free(&bk.text);
        il_buf *blocker = &blocker_text;
        add_row(r, "");
        il_buf_clear(&line);
        il_buf_printf(&line, "  Rule: %s (clause %u)", goal->rel, c);
        add_row(r, il_buf_str(&line));
        il_buf_clear(&line);
        il_buf_puts(&line, "    ");
        iql_fmt_rule(cl, &line);
        add_row(r, il_buf_str(&line));
        if (blocked) {
            il_buf_clear(&line);
            il_buf_printf(&line, "    Blocker: %s", il_buf_str(blocker));
            add_row(r, il_buf_str(&line));
        }
        il_buf_free(&blocker_text);
    }
    il_buf_free(&line);
    if (!(s->guard && s->guard->stop)) {
        il_buf j;
        il_buf_init(&j);
        il_buf_puts(&j, "[{\"version\":1,\"query\":");
        il_json_str(&j, text, len);
        il_buf_puts(&j, ",\"roots\":[");
        il_buf_put(&j, roots.data, roots.len);
        il_buf_puts(&j, "],\"nodes\":{");
        il_buf_put(&j, nodes.data, nodes.len);
        il_buf_puts(&j, "}}]");
        r->proof_json = il_buf_take(&j);
    }
    il_buf_free(&nodes);
    il_buf_free(&roots);
    /* the evaluations of its queries are counted as evaluation */
    uint64_t spent = exec_clock_ns() - t0, evaluated = s->eval_ns - eval0;
    s->prove_ns += spent > evaluated ? spent - evaluated : 0;
    return r;
}
