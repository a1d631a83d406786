/* Statement execution: inserts, deletes (single, bulk, conditional), atomic updates,
 * persistent and session rules, session facts, schemas and type declarations, queries.
 * Each statement either applies completely or reports an error and changes nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "iql/parser.h"
#include "iql/print.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "plan/build.h"
#include "store/store.h"
#include "value/print.h"
#include "views/read_policy.h"
#include "views/view.h"

enum { MAX_INSERT_TUPLES = 10000, MAX_STRING_BYTES = 65536 };

/* Converts a term of an insert or delete to a value; NULL or the reason it cannot. */
static const char *term_value(const iql_term *t, val_t *out, il_buf *msg) {
    switch (t->kind) {
    case IQL_T_VAR:
        il_buf_printf(msg, "Cannot insert variable '%s' - use constants only", t->u.var);
        return il_buf_str(msg);
    case IQL_T_PLACEHOLDER:
        return "Cannot insert placeholder '_' - use constants only";
    case IQL_T_ARITH:
        return "Cannot insert arithmetic expression - use constants only";
    case IQL_T_AGG:
        return "Cannot insert aggregate - use constants only";
    case IQL_T_CALL:
        return "Cannot insert function call - use constants only";
    case IQL_T_STRING:
        if (t->u.str.len > MAX_STRING_BYTES) {
            il_buf_printf(msg, "String value too long: %zu bytes (max %d)", t->u.str.len,
                          MAX_STRING_BYTES);
            return il_buf_str(msg);
        }
        break;
    case IQL_T_VECTOR:
        for (uint32_t i = 0; i < t->u.vec.n; i++) {
            double d = t->u.vec.elems[i];
            if (isfinite(d) && !isfinite((float)d)) {
                il_buf_puts(msg, "Vector element ");
                fmt_f64_display(d, msg);
                il_buf_puts(msg, " overflows f32 range");
                return il_buf_str(msg);
            }
        }
        break;
    default:
        break;
    }
    *out = plan_const_value(t);
    return NULL;
}

/* Converts every tuple; tuples live in one array, `arity[i]` values each. */
typedef struct tuples {
    val_t *vals;
    uint32_t *arity;
    uint32_t *offset;
    uint32_t n;
} tuples;

static const char *convert_tuples(const iql_facts *f, tuples *out, bool skip_bad, il_buf *msg,
                                  il_arena *a) {
    size_t total = 0;
    for (uint32_t i = 0; i < f->ntuples; i++) total += f->tuples[i].n;
    out->vals = il_arena_alloc(a, (total + 1) * sizeof(val_t));
    out->arity = il_arena_alloc(a, (f->ntuples + 1) * sizeof(uint32_t));
    out->offset = il_arena_alloc(a, (f->ntuples + 1) * sizeof(uint32_t));
    out->n = 0;
    uint32_t pos = 0;
    for (uint32_t i = 0; i < f->ntuples; i++) {
        const iql_tuple *t = &f->tuples[i];
        /* an empty tuple of a batch is skipped; a single `+flag()` has no columns */
        if (t->n == 0 && f->bulk) continue;
        const char *err = NULL;
        for (uint32_t j = 0; j < t->n && !err; j++)
            err = term_value(t->terms[j], &out->vals[pos + j], msg);
        if (err) {
            if (skip_bad) {
                il_buf_clear(msg);
                continue;
            }
            return err;
        }
        out->arity[out->n] = t->n;
        out->offset[out->n++] = pos;
        pos += t->n;
    }
    return NULL;
}

/* Converts every tuple; on failure the error result, its text after `prefix`. */
static il_result *convert_or_error(const iql_facts *f, tuples *out, bool skip_bad,
                                   const char *prefix, il_arena *a) {
    il_buf msg;
    il_buf_init(&msg);
    const char *err = convert_tuples(f, out, skip_bad, &msg, a);
    il_result *r = err ? res_error("%s%s", prefix, err) : NULL;
    il_buf_free(&msg);
    return r;
}

static bool value_has_type(val_t v, const iql_type *ty) {
    val_type t = val_type_of(v);
    switch (ty->kind) {
    case IQL_TY_INT:
        return t == VT_INT;
    case IQL_TY_FLOAT:
        return t == VT_FLOAT || t == VT_INT;
    case IQL_TY_STRING:
        return t == VT_STR;
    case IQL_TY_BOOL:
        return t == VT_BOOL;
    case IQL_TY_VECTOR: {
        if (t != VT_VEC && t != VT_VEC_I8) return false;
        if (!ty->dim) return true;
        uint32_t n = 0;
        if (t == VT_VEC)
            val_get_vec_f32(v, &n);
        else
            val_get_vec_i8(v, &n);
        return n == ty->dim;
    }
    default:
        return true;
    }
}

static bool is_view(il_session *s, const char *rel) {
    kg_rule *r = kg_rule_find(s->kg, rel);
    return r && r->clauses.n > 0;
}

static il_result *exec_insert(il_session *s, const iql_facts *f, il_arena *a) {
    tuples t;
    il_result *bad = convert_or_error(f, &t, false, "", a);
    if (bad) return bad;
    const char *rel = f->rel;
    if (t.n > MAX_INSERT_TUPLES)
        return res_error("Insert rejected for '%s': %u tuples exceeds max %d", rel, t.n,
                         MAX_INSERT_TUPLES);
    kg_relation *kr = kg_rel_find(s->kg, rel);
    if (kr && kr->schema) {
        const iql_schema *sc = kr->schema;
        uint32_t bad = 0;
        for (uint32_t i = 0; i < t.n; i++) {
            bool ok = t.arity[i] == sc->ncols;
            for (uint32_t j = 0; ok && j < t.arity[i]; j++)
                ok = value_has_type(t.vals[t.offset[i] + j], &sc->cols[j].type);
            if (!ok) bad++;
        }
        if (bad)
            return res_error("Insert rejected for '%s': Insert rejected for '%s': batch of %u "
                             "tuples had type/arity errors",
                             rel, rel, t.n);
    }
    if (t.n == 0) return res_count_message("Inserted ", 0, " fact(s) into '", rel, "'.");
    if (is_view(s, rel))
        return res_error("Cannot insert into '%s': it is a derived relation (view). Use a base "
                         "relation or drop the rule first with '.rule drop %s'.",
                         rel, rel);
    for (uint32_t i = 1; i < t.n; i++)
        if (t.arity[i] != t.arity[0])
            return res_error("Arity mismatch in insert batch: expected %u, got %u", t.arity[0],
                             t.arity[i]);
    if (kr && kr->data && rel_arity(kr->data) != t.arity[0])
        return res_error("Arity mismatch for relation '%s': existing arity is %u, but trying to "
                         "insert tuples with arity %u",
                         rel, rel_arity(kr->data), t.arity[0]);
    if (!kr) kr = kg_rel_get(s->kg, rel);
    kg_rel_data(s->kg, kr, t.arity[0]);
    uint32_t added = 0;
    for (uint32_t i = 0; i < t.n; i++)
        if (rel_insert(kr->data, &t.vals[t.offset[i]])) {
            added++;
            kg_delta_note(s->kg, rel, &t.vals[t.offset[i]], t.arity[0],
                          +1); /* the commit's delta */
        }
    return res_count_message("Inserted ", added, " fact(s) into '", rel, "'.");
}

static il_result *exec_delete(il_session *s, const iql_facts *f, il_arena *a) {
    tuples t;
    il_result *bad = convert_or_error(f, &t, f->bulk, "Delete error: ", a);
    if (bad) return bad;
    kg_relation *kr = kg_rel_find(s->kg, f->rel);
    uint32_t deleted = 0;
    for (uint32_t i = 0; i < t.n; i++)
        if (kr && kr->data && rel_arity(kr->data) == t.arity[i] &&
            rel_delete(kr->data, &t.vals[t.offset[i]])) {
            deleted++;
            kg_delta_note(s->kg, f->rel, &t.vals[t.offset[i]], t.arity[i],
                          -1); /* the commit's delta */
        }
    if (f->bulk) return res_count_message("Deleted ", deleted, " fact(s) from '", f->rel, "'.");
    return res_count_message("Deleted ", deleted, " facts from '", f->rel, "'.");
}

/* ---- rule-shaped queries over the stored data: conditional delete and update ---- */

typedef IL_VEC(const char *) names;

static void atom_vars(const iql_atom *at, names *out) {
    for (uint32_t i = 0; i < at->nargs; i++) {
        const iql_term *t = at->args[i];
        if (t->kind != IQL_T_VAR) continue;
        bool have = false;
        for (uint32_t j = 0; j < out->n && !have; j++) have = strcmp(out->v[j], t->u.var) == 0;
        if (!have) il_vec_push(*out, t->u.var);
    }
}

static iql_rule head_over(const char *name, const names *vars, il_arena *a) {
    iql_rule q;
    memset(&q, 0, sizeof q);
    q.head.rel = name;
    q.head.nargs = vars->n;
    q.head.args = il_arena_alloc(a, (vars->n + 1) * sizeof(iql_term *));
    for (uint32_t i = 0; i < vars->n; i++) {
        iql_term *t = il_arena_calloc(a, sizeof *t);
        t->kind = IQL_T_VAR;
        t->u.var = vars->v[i];
        q.head.args[i] = t;
    }
    return q;
}

/* Builds the tuple of an atom from a result row; false when a term cannot be a value. */
static bool atom_tuple(const iql_atom *at, const names *vars, const val_t *row, val_t *out) {
    for (uint32_t i = 0; i < at->nargs; i++) {
        const iql_term *t = at->args[i];
        switch (t->kind) {
        case IQL_T_VAR: {
            uint32_t j = 0;
            while (j < vars->n && strcmp(vars->v[j], t->u.var) != 0) j++;
            if (j == vars->n) return false;
            out[i] = row[j];
            break;
        }
        case IQL_T_INT:
        case IQL_T_FLOAT:
        case IQL_T_STRING:
        case IQL_T_BOOL:
            out[i] = plan_const_value(t);
            break;
        default:
            return false;
        }
    }
    return true;
}

static il_result *exec_cond_delete(il_session *s, const iql_rule *r, il_arena *a) {
    names vars = {0};
    atom_vars(&r->head, &vars);
    iql_rule q = head_over("__cond_del_query__", &vars, a);
    q.nbody = r->nbody + 1;
    q.body = il_arena_alloc(a, q.nbody * sizeof *q.body);
    memset(&q.body[0], 0, sizeof q.body[0]);
    q.body[0].kind = IQL_LIT_ATOM;
    q.body[0].atom = r->head;
    if (r->nbody) memcpy(&q.body[1], r->body, r->nbody * sizeof *r->body);
    val_t *rows;
    size_t nrows;
    uint32_t arity;
    const char *err = kg_query_rows(s, &q, false, &rows, &nrows, &arity);
    if (err) {
        il_vec_free(vars);
        return res_error("Query execution failed: %s", err);
    }
    kg_relation *kr = kg_rel_find(s->kg, r->head.rel);
    uint32_t deleted = 0;
    val_t t[REL_MAX_ARITY];
    for (size_t i = 0; i < nrows && kr && kr->data; i++) {
        if (r->head.nargs > REL_MAX_ARITY || rel_arity(kr->data) != r->head.nargs) break;
        if (atom_tuple(&r->head, &vars, &rows[i * arity], t) && rel_delete(kr->data, t)) {
            deleted++;
            kg_delta_note(s->kg, r->head.rel, t, r->head.nargs, -1); /* the commit's delta */
        }
    }
    il_mem_free(rows);
    il_vec_free(vars);
    return res_message("Conditional delete: %u fact(s) deleted from '%s'.", deleted, r->head.rel);
}

static il_result *exec_update(il_session *s, const iql_update *u, il_arena *a) {
    names vars = {0};
    for (uint32_t i = 0; i < u->ndels; i++) atom_vars(&u->dels[i], &vars);
    for (uint32_t i = 0; i < u->nins; i++) atom_vars(&u->ins[i], &vars);
    iql_rule q = head_over("__upd_query__", &vars, a);
    q.body = u->body;
    q.nbody = u->nbody;
    val_t *rows;
    size_t nrows;
    uint32_t arity;
    const char *err = kg_query_rows(s, &q, false, &rows, &nrows, &arity);
    if (err) {
        il_vec_free(vars);
        return res_error("Query execution failed: %s", err);
    }
    /* Check every insert target first, so the update applies entirely or not at all. */
    for (uint32_t j = 0; j < u->nins && nrows; j++) {
        const iql_atom *at = &u->ins[j];
        if (is_view(s, at->rel)) {
            il_mem_free(rows);
            il_vec_free(vars);
            return res_error("Cannot insert into '%s': it is a derived relation (view). Use a "
                             "base relation or drop the rule first with '.rule drop %s'.",
                             at->rel, at->rel);
        }
        /* the arity a target has, or gets from the first insert into it */
        kg_relation *kr = kg_rel_find(s->kg, at->rel);
        uint32_t want = kr && kr->data ? rel_arity(kr->data) : at->nargs;
        for (uint32_t k = 0; k < j && !(kr && kr->data); k++)
            if (strcmp(u->ins[k].rel, at->rel) == 0) {
                want = u->ins[k].nargs;
                break;
            }
        if (want != at->nargs) {
            il_mem_free(rows);
            il_vec_free(vars);
            return res_error("Arity mismatch for relation '%s': existing arity is %u, but trying "
                             "to insert tuples with arity %u",
                             at->rel, want, at->nargs);
        }
    }
    /* A relation both deleted from and inserted into may get a tuple removed and added
       back: the change hook must see the net change. */
    for (uint32_t j = 0; j < u->nins && nrows; j++)
        for (uint32_t k = 0; k < u->ndels; k++)
            if (strcmp(u->ins[j].rel, u->dels[k].rel) == 0)
                kg_change_net_facts(s->kg, u->ins[j].rel, u->ins[j].nargs);
    uint32_t deleted = 0, inserted = 0;
    val_t t[REL_MAX_ARITY];
    for (size_t i = 0; i < nrows; i++) {
        const val_t *row = &rows[i * arity];
        for (uint32_t j = 0; j < u->ndels; j++) {
            const iql_atom *at = &u->dels[j];
            kg_relation *kr = kg_rel_find(s->kg, at->rel);
            if (!kr || !kr->data || rel_arity(kr->data) != at->nargs) continue;
            if (atom_tuple(at, &vars, row, t) && rel_delete(kr->data, t)) {
                deleted++;
                kg_delta_note(s->kg, at->rel, t, at->nargs, -1); /* the commit's delta */
            }
        }
        for (uint32_t j = 0; j < u->nins; j++) {
            const iql_atom *at = &u->ins[j];
            if (at->nargs == 0 || at->nargs > REL_MAX_ARITY || !atom_tuple(at, &vars, row, t))
                continue;
            kg_relation *kr = kg_rel_get(s->kg, at->rel);
            kg_rel_data(s->kg, kr, at->nargs);
            if (rel_insert(kr->data, t)) {
                inserted++;
                kg_delta_note(s->kg, at->rel, t, at->nargs, +1); /* the commit's delta */
            }
        }
    }
    il_mem_free(rows);
    il_vec_free(vars);
    return res_message("Update: %u deleted, %u inserted.", deleted, inserted);
}

/* ---- rules ---- */

static const iql_term *first_agg(const iql_rule *r) {
    for (uint32_t i = 0; i < r->head.nargs; i++)
        if (r->head.args[i]->kind == IQL_T_AGG) return r->head.args[i];
    return NULL;
}

static bool is_ranking(const iql_term *g) {
    iql_agg_kind k = g->u.agg.kind;
    return k == IQL_AGG_TOP_K || k == IQL_AGG_TOP_K_THRESHOLD || k == IQL_AGG_WITHIN_RADIUS;
}

static bool same_agg(const iql_term *x, const iql_term *y) {
    if (x->u.agg.kind != y->u.agg.kind) return false;
    if (!is_ranking(x)) return true;
    return x->u.agg.k == y->u.agg.k && x->u.agg.order == y->u.agg.order &&
           fabs(x->u.agg.param - y->u.agg.param) <= 2.220446049250313e-16;
}

/* The "Conflicting aggregation" error between an existing clause and a new one of the
 * same rule (persistent or session, whose messages differ), or NULL when they agree. */
static il_result *agg_conflict_error(const iql_rule *old, const iql_rule *nu, const char *name,
                                     bool session) {
    const iql_term *a = first_agg(old), *b = first_agg(nu);
    if (!a || !b || (!is_ranking(a) && !is_ranking(b)) || same_agg(a, b)) return NULL;
    il_buf bn, bo;
    il_buf_init(&bn);
    il_buf_init(&bo);
    iql_fmt_agg_name(b, &bn);
    iql_fmt_agg_name(a, &bo);
    il_result *res =
        session ? res_error("Conflicting aggregation: cannot add clause with '%s' to session rule "
                            "'%s' which already has a clause with '%s'. Use '.session drop %s' "
                            "to remove the existing rule first.",
                            il_buf_str(&bn), name, il_buf_str(&bo), name)
                : res_error("Failed to register rule: Conflicting aggregation: cannot add clause "
                            "with '%s' to rule '%s' which already has a clause with '%s'. Drop "
                            "the rule first with '.rule drop %s' and re-create it.",
                            il_buf_str(&bn), name, il_buf_str(&bo), name);
    il_buf_free(&bn);
    il_buf_free(&bo);
    return res;
}

/* Registering the same clause twice keeps one copy. */
static bool has_clause(const kg_rule *kr, const iql_rule *r) {
    il_buf a, b;
    il_buf_init(&a);
    il_buf_init(&b);
    iql_fmt_rule(r, &a);
    bool found = false;
    for (uint32_t i = 0; i < kr->clauses.n && !found; i++) {
        il_buf_clear(&b);
        iql_fmt_rule(kr->clauses.v[i], &b);
        found = strcmp(il_buf_str(&a), il_buf_str(&b)) == 0;
    }
    il_buf_free(&a);
    il_buf_free(&b);
    return found;
}

static il_result *exec_persistent_rule(il_session *s, const iql_rule *r, il_arena *a) {
    const char *name = r->head.rel;
    const char *err = kg_validate_rule(r, a);
    if (!err) err = kg_check_stratification(s->kg, r, a);
    if (err) return res_error("Failed to register rule: %s", err);
    kg_rule *existing = kg_rule_find(s->kg, name);
    if (existing && existing->clauses.n) {
        const iql_rule *first = existing->clauses.v[0];
        if (first->head.nargs != r->head.nargs)
            return res_error("Failed to register rule: Arity mismatch: rule '%s' has %u "
                             "argument(s) but new clause has %u. Drop the rule first with "
                             "'.rule drop %s' and re-create it.",
                             name, first->head.nargs, r->head.nargs, name);
        for (uint32_t i = 0; i < existing->clauses.n; i++) {
            il_result *res = agg_conflict_error(existing->clauses.v[i], r, name, false);
            if (res) return res;
        }
    }
    kg_rule *kr = kg_rule_get(s->kg, name);
    if (!has_clause(kr, r)) {
        kg_rule_add_clause(s->kg, kr, r);
        kg_rec_rule_add(s->kg, s->text, s->text_len, r);
        kg_change_note(s->e, IL_CHANGE_RULE, s->kg->name, name, "registered");
    }
    return res_message("Rule '%s' registered.", name);
}

static il_result *exec_session_rule(il_session *s, const iql_rule *r, il_arena *a) {
    const char *name = r->head.rel;
    const char *bare = name[0] == '~' ? name + 1 : name;
    if (strncmp(bare, "__", 2) == 0)
        return res_error("Session rule '%s' uses reserved '__' prefix. Choose a different "
                         "relation name.",
                         bare);
    const char *err = kg_validate_rule(r, a);
    if (err) return res_error("%s", err);
    uint32_t arity = kg_head_arity(&r->head);
    for (uint32_t i = 0; i < s->rules.n; i++) {
        const iql_rule *old = s->rules.v[i];
        if (strcmp(old->head.rel, name) != 0) continue;
        uint32_t old_arity = kg_head_arity(&old->head);
        if (old_arity != arity)
            return res_error("Arity mismatch: session rule '%s' has %u argument(s) but new clause "
                             "has %u. Use '.session drop %s' to remove the existing rule first.",
                             name, old_arity, arity, name);
        il_result *res = agg_conflict_error(old, r, name, true);
        if (res) return res;
    }
    iql_rule *c = il_arena_alloc(&s->rules_arena, sizeof *c);
    iql_rule_clone(&s->rules_arena, c, r);
    il_vec_push(s->rules, c);
    il_result *res = res_message("Session rule added for '%s'.", name);
    res->cls = IL_STMT_SESSION_RULE;
    res->rule_head = strdup(name);
    res->rule_arity = arity;
    return res;
}

static il_result *exec_session_fact(il_session *s, const iql_facts *f, il_arena *a) {
    if (f->ntuples == 0) return res_error("Fact must have at least one argument");
    tuples t;
    il_result *bad = convert_or_error(f, &t, false, "", a);
    if (bad) return bad;
    for (uint32_t i = 0; i < t.n; i++) sess_fact_add(s, f->rel, &t.vals[t.offset[i]], t.arity[i]);
    il_result *r =
        res_message("Session fact added for '%s'. (Use +%s(...) to persist)", f->rel, f->rel);
    r->cls = IL_STMT_SESSION_FACT;
    return r;
}

iql_schema *kg_schema_copy(il_arena *a, const iql_schema *sc) {
    iql_schema *c = il_arena_alloc(a, sizeof *c);
    c->rel = il_arena_strdup(a, sc->rel);
    c->ncols = sc->ncols;
    c->cols = il_arena_alloc(a, (sc->ncols + 1) * sizeof *c->cols);
    for (uint32_t i = 0; i < sc->ncols; i++) {
        c->cols[i].name = il_arena_strdup(a, sc->cols[i].name);
        c->cols[i].type = sc->cols[i].type;
        if (sc->cols[i].type.name) c->cols[i].type.name = il_arena_strdup(a, sc->cols[i].type.name);
    }
    return c;
}

static bool same_type(const iql_type *a, const iql_type *b) {
    if (a->kind != b->kind || a->dim != b->dim) return false;
    return a->name && b->name ? strcmp(a->name, b->name) == 0 : a->name == b->name;
}

static bool same_schema(const iql_schema *a, const iql_schema *b) {
    if (a->ncols != b->ncols) return false;
    for (uint32_t i = 0; i < a->ncols; i++)
        if (strcmp(a->cols[i].name, b->cols[i].name) != 0 ||
            !same_type(&a->cols[i].type, &b->cols[i].type))
            return false;
    return true;
}

static il_result *exec_schema(il_session *s, const iql_schema *sc, bool persistent) {
    if (persistent) {
        kg_relation *kr = kg_rel_get(s->kg, sc->rel);
        /* declaring the schema a relation already has changes nothing to report */
        if (!kr->schema || !same_schema(kr->schema, sc))
            kg_change_note(s->e, IL_CHANGE_SCHEMA, s->kg->name, sc->rel, "created");
        kg_undo_schema(s->kg, kr, kr->schema);
        kr->schema = kg_schema_copy(&s->kg->arena, sc);
        kg_rec_schema(s->kg, sc);
    } else {
        il_vec_push(s->schemas, kg_schema_copy(&s->rules_arena, sc));
    }
    return res_message("Schema for '%s' registered with %u columns (%s)", sc->rel, sc->ncols,
                       persistent ? "persistent" : "session");
}

/* ---- width limit: tuples are stored inline, at most REL_MAX_ARITY values ---- */

static const iql_atom *wide_atom(const iql_atom *at) {
    return at->nargs > REL_MAX_ARITY ? at : NULL;
}

static const iql_atom *wide_body(const iql_literal *body, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (body[i].kind != IQL_LIT_CMP && wide_atom(&body[i].atom)) return &body[i].atom;
    return NULL;
}

static il_result *too_wide(const char *rel, uint32_t n) {
    return res_error("Relation '%s' has %u columns; at most %d are supported", rel, n,
                     REL_MAX_ARITY);
}

static il_result *check_width(const iql_stmt *st) {
    const iql_atom *w = NULL;
    switch (st->kind) {
    case IQL_STMT_PERSIST_RULE:
    case IQL_STMT_SESSION_RULE:
    case IQL_STMT_COND_DELETE:
        w = wide_atom(&st->u.rule.head);
        if (!w && kg_head_arity(&st->u.rule.head) > REL_MAX_ARITY)
            return too_wide(st->u.rule.head.rel, kg_head_arity(&st->u.rule.head));
        if (!w) w = wide_body(st->u.rule.body, st->u.rule.nbody);
        break;
    case IQL_STMT_QUERY:
        w = wide_atom(&st->u.query.goal);
        if (!w) w = wide_body(st->u.query.extra, st->u.query.nextra);
        break;
    case IQL_STMT_UPDATE:
        for (uint32_t i = 0; i < st->u.update.ndels && !w; i++)
            w = wide_atom(&st->u.update.dels[i]);
        for (uint32_t i = 0; i < st->u.update.nins && !w; i++) w = wide_atom(&st->u.update.ins[i]);
        if (!w) w = wide_body(st->u.update.body, st->u.update.nbody);
        break;
    case IQL_STMT_INSERT:
    case IQL_STMT_DELETE:
    case IQL_STMT_SESSION_FACT:
        for (uint32_t i = 0; i < st->u.facts.ntuples; i++)
            if (st->u.facts.tuples[i].n > REL_MAX_ARITY)
                return too_wide(st->u.facts.rel, st->u.facts.tuples[i].n);
        break;
    case IQL_STMT_SCHEMA:
    case IQL_STMT_SESSION_SCHEMA:
        if (st->u.schema.ncols > REL_MAX_ARITY)
            return too_wide(st->u.schema.rel, st->u.schema.ncols);
        break;
    default:
        break;
    }
    return w ? too_wide(w->rel, w->nargs) : NULL;
}

/* A read that makes its rule maintained computes the view first, as the read's own
 * evaluation (under its guard), and then reads the maintained rows: the first read costs
 * what evaluating costs. A read the guard stops leaves the rule undecided and answers
 * with the stop (kg_query sees it). A read inside a transaction never starts maintenance:
 * it sees state that may be rolled back, and the views catch up with the transaction's
 * writes only when it commits. A pinned read makes the view on its pin, for the live graph
 * to adopt (kg_pin_note_query). */
static il_result *exec_query(il_session *s, const iql_query *q, kg_query_opts o) {
    /* outside the query's string scope: the view keeps what it interns */
    bool go = !(s->guard && s->guard->stop);
    if (go && !s->kg->pin && !s->e->txn) read_policy_note_query(s, q);
    if (go && s->kg->pin) kg_pin_note_query(s, q);
    il_intern_scope *previous = kg_strings_enter(s);
    il_result *r = kg_query(s, q, o);
    kg_strings_leave(s, previous);
    return r;
}

/* A query or rule with warnings (kg_lint) runs as before; its result carries them. */
static il_result *exec_stmt_linted(il_session *s, const iql_stmt *st, il_arena *a);

static il_result *exec_stmt(il_session *s, const iql_stmt *st, il_arena *a) {
    char *warnings = NULL;
    if (st->kind == IQL_STMT_QUERY)
        warnings = kg_lint(s, NULL, &st->u.query.goal, st->u.query.extra, st->u.query.nextra);
    else if (st->kind == IQL_STMT_PERSIST_RULE || st->kind == IQL_STMT_SESSION_RULE)
        warnings = kg_lint(s, &st->u.rule.head, NULL, st->u.rule.body, st->u.rule.nbody);
    il_result *r = exec_stmt_linted(s, st, a);
    if (warnings && r->kind != IL_RESULT_ERROR && r->kind != IL_RESULT_PARSE_ERROR)
        kg_lint_attach(r, warnings);
    else
        free(warnings);
    return r;
}

static il_result *exec_stmt_linted(il_session *s, const iql_stmt *st, il_arena *a) {
    il_result *wide = check_width(st);
    if (wide) return wide;
    switch (st->kind) {
    case IQL_STMT_META:
        return kg_exec_meta(s, &st->u.meta, a);
    case IQL_STMT_TYPE_DECL:
        return res_message("Type '%s' declared.", st->u.type_decl.name);
    case IQL_STMT_UPDATE:
        return exec_update(s, &st->u.update, a);
    case IQL_STMT_PERSIST_RULE:
        return exec_persistent_rule(s, &st->u.rule, a);
    case IQL_STMT_SCHEMA:
        return exec_schema(s, &st->u.schema, true);
    case IQL_STMT_SESSION_SCHEMA:
        return exec_schema(s, &st->u.schema, false);
    case IQL_STMT_INSERT:
        return exec_insert(s, &st->u.facts, a);
    case IQL_STMT_DROP_RULE: {
        kg_rule *r = kg_rule_find(s->kg, st->u.drop_name);
        if (!r) return res_message("'%s' not found as rule.", st->u.drop_name);
        kg_rule_drop(s->kg, r);
        kg_rec_rule_drop(s->kg, st->u.drop_name);
        kg_change_note(s->e, IL_CHANGE_RULE, s->kg->name, st->u.drop_name, "dropped");
        return res_message("Rule '%s' dropped.", st->u.drop_name);
    }
    case IQL_STMT_DELETE:
        return exec_delete(s, &st->u.facts, a);
    case IQL_STMT_COND_DELETE:
        return exec_cond_delete(s, &st->u.rule, a);
    case IQL_STMT_QUERY: {
        kg_query_opts o = {.with_session = true, .provenance = true};
        return exec_query(s, &st->u.query, o);
    }
    case IQL_STMT_SESSION_RULE:
        return exec_session_rule(s, &st->u.rule, a);
    case IQL_STMT_SESSION_FACT:
        return exec_session_fact(s, &st->u.facts, a);
    }
    return res_error("Unsupported statement");
}

/* Nothing to commit: a query changes no stored state, so the log, the views and the change
 * hook have nothing to do. */
il_result *kg_exec_stored_query(il_session *s, const iql_stmt *st, size_t max_rows) {
    if (st->kind != IQL_STMT_QUERY) return res_error("Not a query: expected one `?` query");
    il_result *wide = check_width(st);
    if (wide) return wide;
    kg_query_opts o = {.with_session = false, .max_rows = max_rows};
    return exec_query(s, &st->u.query, o);
}

/* Statements that cannot change stored state, allowed after the log failed. */
static bool read_only(const iql_stmt *st) {
    if (st->kind == IQL_STMT_QUERY || st->kind == IQL_STMT_SESSION_RULE ||
        st->kind == IQL_STMT_SESSION_FACT || st->kind == IQL_STMT_SESSION_SCHEMA ||
        st->kind == IQL_STMT_TYPE_DECL)
        return true;
    if (st->kind != IQL_STMT_META) return false;
    switch (st->u.meta.kind) {
    case IQL_META_KG_CREATE:
    case IQL_META_KG_DROP:
    case IQL_META_REL_DROP:
    case IQL_META_RULE_DROP:
    case IQL_META_RULE_DROP_PREFIX:
    case IQL_META_RULE_REMOVE:
    case IQL_META_RULE_CLEAR:
    case IQL_META_CLEAR_PREFIX:
    case IQL_META_COMPACT:
        return false;
    default:
        return true;
    }
}

il_result *kg_exec_stmt(il_session *s, const iql_stmt *st, il_arena *a) {
    /* A pinned session reads its pinned copy beside writers: none of the engine's commit
       state below is its to touch. */
    if (s->kg->pin) {
        if (!kg_stmt_reads_only(st))
            return res_error("Only queries, explanations and listings run on a pinned "
                             "session (il_session_pin)");
        return exec_stmt(s, st, a);
    }
    kg_graph *written = s->kg; /* the graph a write changes (`.kg create` switches) */
    store *log = s->e->store;
    /* After a failed sync the memory may be ahead of the disk; accepting more writes
       would acknowledge what a restart cannot bring back, until the state in memory is
       rewritten into a checkpoint (between statements only: a transaction's changes so
       far must not be in it). */
    if (store_failed(log) && !read_only(st)) {
        char *err = NULL;
        if (!kg_txn_unchanged(s->e) || !store_repair(log, &err)) {
            il_result *r = res_error("%s", err ? err
                                               : "Storage error: the write-ahead log failed "
                                                 "earlier; writes are refused until the state "
                                                 "is rewritten into a checkpoint");
            free(err);
            return r;
        }
    }
    const char *refused = kg_txn_refusal(s, st);
    if (refused) return res_error("%s", refused);
    /* With a log, a statement that can be undone runs as a transaction of its own, so
       that when its record cannot be written (a full disk) it is taken back: nobody ever
       sees a write that is not in the log, and writing goes on once the log can be. */
    bool own = log && !s->e->txn && kg_stmt_txn_part(st) == IL_TXN_WRITES;
    if (own) kg_txn_begin_statement(s);
    il_result *r = exec_stmt(s, st, a);
    if (own) {
        if (r->kind == IL_RESULT_ERROR || r->kind == IL_RESULT_PARSE_ERROR) {
            il_txn_rollback(s);
            return r;
        }
        char *err = NULL;
        bool undone;
        if (!il_txn_commit_or_undo(s, &undone, &err)) {
            il_result_free(r);
            r = res_error("%s", err ? err : "Storage error: write failed");
        }
        free(err);
        return r;
    }
    /* Inside a transaction everything below happens once, when it commits (txn.c). */
    if (s->e->txn) return r;
    /* One record for the whole statement, durable before its result is returned and
       before any other session runs a statement (one thread per engine). */
    char *err = NULL;
    if (!kg_rec_commit(s->e, false, NULL, &err)) {
        il_result_free(r);
        r = res_error("%s", err ? err : "Storage error: write failed");
        free(err);
    }
    /* Maintained views catch up with the statement's delta (or rebuild after a change of
       rules); graphs without views are skipped at once. Then the vector indexes. */
    kg_views_commit(s->e);
    kg_indexes_commit(s->e);
    /* Readers that could not wait read the revision before it up to here (nobody was
       told of it yet), then wait for it. The statement changed only the graph it began
       on (a graph it dropped withdrew its own; one it made has none); reads change
       nothing, and leave every publication up. */
    if (!kg_stmt_reads_only(st)) kg_unpublish_written(s->e, written);
    /* Last, so that whoever the hook tells can already see the change everywhere. A
       statement that failed, its log record included, reports nothing. */
    kg_changes_end(s->e, r->kind != IL_RESULT_ERROR && r->kind != IL_RESULT_PARSE_ERROR);
    kg_delta_reset(s->e);
    return r;
}
