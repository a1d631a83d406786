/* Queries: `?goal, literals` becomes a rule whose head lists the output columns, is
 * planned with demand over the graph's rules (and the session's, for `?` queries), run,
 * sorted (value order, then `:asc`/`:desc`), cut by offset and limit, and given the
 * reference's column headers (iql-language.md 2.6, 3.8, 6.5). All of it runs under the
 * statement's guard (exec/guard.h), which may stop it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strcopy.h"
#include "base/checked.h"
#include "base/meter.h"
#include "exec/eval.h"
#include "exec/stable_sort.h"
#include "iql/parser.h"
#include "iql/vars.h"
#include "plan/explain.h"
#include "iql/print.h"
#include "exec/tuplesort.h"
#include "kg/kg.h"
#include "kg/prov_delta.h"
#include "plan/build.h"
#include "plan/params.h"
#include "views/read_policy.h"
#include "value/print.h"

enum { MAX_RESULT_ROWS = 100000 };

typedef struct stored_ctx {
    il_session *s;
    bool with_session;
    bool facts_apart;       /* with the session's rules, but its facts left to the caller */
    bool maintained;        /* maintained rules read as stored relations (read_policy.h) */
    IL_VEC(rel_t *) merged; /* stored facts merged with session facts, owned */
    IL_VEC(const char *) merged_names;
} stored_ctx;

typedef IL_VEC(const iql_rule *) rule_list;

static void *index_lookup(void *ctx, const char *name) {
    stored_ctx *c = ctx;
    return kg_index_find(c->s->kg, name);
}

static const rel_t *stored_lookup(void *ctx, const char *name) {
    stored_ctx *c = ctx;
    if (c->maintained) {
        const rel_t *rows = kg_maintained_rows(c->s->kg, name);
        if (rows) return rows;
    }
    for (uint32_t i = 0; i < c->merged_names.n; i++)
        if (strcmp(c->merged_names.v[i], name) == 0) return c->merged.v[i];
    kg_relation *r = kg_rel_find(c->s->kg, name);
    const rel_t *data = r ? r->data : NULL;
    sess_facts *f = c->with_session && !c->facts_apart ? sess_facts_find(c->s, name) : NULL;
    if (!f || (data && rel_arity(data) != f->arity)) return data;
    rel_t *m = rel_new(f->arity);
    if (data) {
        rel_cursor cur;
        rel_seek(data, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, NULL))) rel_insert(m, t);
    }
    for (uint32_t i = 0; i < f->vals.n; i += sess_fact_stride(f)) rel_insert(m, &f->vals.v[i]);
    il_vec_push(c->merged, m);
    il_vec_push(c->merged_names, name);
    return m;
}

static bool facts_apart(void *ctx, const char *name, uint32_t arity) {
    stored_ctx *c = ctx;
    sess_facts *f = c->facts_apart ? sess_facts_find(c->s, name) : NULL;
    return f && f->arity == arity && rel_count(f->set);
}

static void stored_ctx_free(stored_ctx *c) {
    for (uint32_t i = 0; i < c->merged.n; i++) rel_free(c->merged.v[i]);
    il_vec_free(c->merged);
    il_vec_free(c->merged_names);
}

/* Plans `q` over the graph's rules (but those `c` reads as maintained relations) and, with
   the session, the session's own; `rules` keeps the clauses it was planned over. */
static bool plan_query(plan_program *p, const iql_rule *q, stored_ctx *c, rule_list *rules) {
    kg_graph *g = c->s->kg;
    for (uint32_t i = 0; i < g->rules.n; i++)
        if (!c->maintained || !kg_maintained_rows(g, g->rules.v[i]->name))
            for (uint32_t j = 0; j < g->rules.v[i]->clauses.n; j++)
                il_vec_push(*rules, g->rules.v[i]->clauses.v[j]);
    if (c->with_session)
        for (uint32_t i = 0; i < c->s->rules.n; i++) il_vec_push(*rules, c->s->rules.v[i]);
    plan_source src = {.rules = rules->v,
                       .nrules = rules->n,
                       .nsession = c->with_session ? c->s->rules.n : 0,
                       .stored = stored_lookup,
                       .ctx = c,
                       .index = index_lookup,
                       .index_search = kg_index_search,
                       .facts_apart = facts_apart};
    return plan_build(p, &src, q);
}

/* A new program for q, over the graph's rules (and the session's, with ctx's session). */
static plan_program *compile(const iql_rule *q, stored_ctx *ctx) {
    rule_list rules = {0};
    plan_program *p = malloc(sizeof *p);
    plan_program_init(p);
    plan_query(p, q, ctx, &rules);
    il_vec_free(rules);
    return p;
}

static void program_free(plan_program *p) {
    plan_program_free(p);
    free(p);
}

static const char *take_rows(plan_program *p, val_t **rows, size_t *nrows, uint32_t *arity);

/* Runs p and hands over its rows, sorted; returns the error, or NULL. p is left to be
   reset. */
static const char *run_program(plan_program *p, exec_guard *guard, val_t **rows, size_t *nrows,
                               uint32_t *arity) {
    static _Thread_local char errbuf[1024];
    const char *err = NULL;
    if (p->error) {
        il_str_copy(errbuf, sizeof errbuf, p->error);
        return errbuf;
    }
    exec_ctx x = {.guard = guard};
    if (!exec_run(p, &x)) {
        il_str_copy(errbuf, sizeof errbuf, x.error);
        err = errbuf;
    } else {
        err = take_rows(p, rows, nrows, arity);
    }
    if (guard && guard->stop) err = il_stop_message(guard->stop);
    return err;
}

/* Hands over the query predicate's rows of a program that ran, sorted; the stop's text
   when sorting was stopped. */
static const char *take_rows(plan_program *p, val_t **rows, size_t *nrows, uint32_t *arity) {
    const char *err = NULL;
    plan_pred *qp = &p->preds.v[p->query_pred];
    if (qp->rows.n && qp->arity && !tuple_sort(qp->rows.tuples, qp->rows.n, qp->arity)) {
        err = EXEC_STOPPED;
    } else {
        *arity = qp->arity;
        if (qp->rows.n && !qp->arity) {
            /* no columns (a conditional delete or update whose targets are constants):
               one empty row when the body holds, in a block of one value so that the
               callers index rows alike */
            *rows = il_mem_alloc(sizeof **rows);
            *nrows = 1;
        } else if (qp->rows.n) {
            /* hand the set's storage over, in word order (often the value order) */
            *rows = qp->rows.tuples;
            *nrows = qp->rows.n;
            qp->rows.tuples = NULL;
            qp->rows.n = qp->rows.cap = 0;
        }
    }
    return err;
}

/* The text's key, the maintained prefix first, into the empty b. */
static const char *text_key_of(il_buf *b, const char *prefix, const iql_rule *q) {
    il_buf_puts(b, prefix);
    iql_fmt_rule_key(q, b);
    return il_buf_str(b);
}

static bool values_equal(const val_t *a, const val_t *b, uint32_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}

static bool values_all_differ(const val_t *a, const val_t *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == b[i]) return false;
    return true;
}

/* The second query of a shape, with other values than the first one's (whose program e
 * holds): q's program, compared with that one when every value differs, otherwise with
 * the program of the shape's rule with other values. When they differ only in the
 * parameters, q's program becomes the shape's; otherwise the shape is marked as kept by
 * text and q's program is kept by its text. Returns q's program. */
static plan_program *decide_shape(kg_graph *g, kg_plan_entry *e, const iql_rule *q, kg_shape *shape,
                                  il_arena *a, stored_ctx *ctx, const char *text_key) {
    plan_program *p = compile(q, ctx), *made = NULL;
    const plan_program *other = e->prog;
    const val_t *other_values = e->values;
    if (!values_all_differ(shape->values, e->values, shape->n)) {
        kg_shape_others(q, a, shape);
        other = made = compile(&shape->other_rule, ctx);
        other_values = shape->others;
    }
    plan_params params;
    bool shaped = plan_params_find(p, other, shape->values, other_values, shape->n, &params);
    if (made) program_free(made);
    if (shaped) {
        kg_plan_decide(g, e, p, &params);
    } else {
        kg_plan_decide(g, e, NULL, NULL);
        kg_plan_store(g, text_key, p, il_intern_scope_share());
    }
    return p;
}

#if IL_CHECKED_BUILD
/* Checked builds: a shape's program, bound to q's values, answered what q's own program
   answers (both ran to the end), or the process stops here. */
static void check_shape_rows(const iql_rule *q, stored_ctx *ctx, const val_t *rows, size_t nrows,
                             uint32_t arity) {
    plan_program *p = compile(q, ctx);
    val_t *want = NULL;
    size_t nwant = 0;
    uint32_t warity = 0;
    /* a program without columns answers one row of no value, or none */
    if (!run_program(p, NULL, &want, &nwant, &warity) &&
        (nwant != nrows || warity != arity ||
         (nrows && arity && memcmp(want, rows, nrows * arity * sizeof *rows) != 0))) {
        il_buf b;
        il_buf_init(&b);
        iql_fmt_rule(q, &b);
        fprintf(stderr, "plan cache: the program of the shape of %s gave %zu rows, its own %zu\n",
                il_buf_str(&b), nrows, nwant);
        abort();
    }
    il_mem_free(want);
    plan_program_reset(p);
    program_free(p);
}
#endif

const char *kg_query_rows(il_session *s, const iql_rule *q, bool with_session, val_t **rows,
                          size_t *nrows, uint32_t *arity) {
    *rows = NULL;
    *nrows = 0;
    *arity = 0;
    exec_guard *guard = s->guard;
    /* stopped in an earlier evaluation of the statement (`.why_not` runs several): the
       rest would be thrown away; or to stop before it begins (a query too small for the
       evaluator's periodic checks still answers to them) */
    if (guard && exec_guard_check(guard)) return il_stop_message(guard->stop);
    /* the merged relations of session facts below count as the query's memory */
    exec_guard *outer = exec_guard_enter(guard);
    kg_graph *g = s->kg;
    /* Programs over the graph alone are cached by query shape, or by text when the query
       has no parameters or its shape's programs depend on their values; a session's own
       rules and facts make a program of that session's moment. */
    bool session_part = with_session && (s->rules.n || s->facts.n);
    /* A maintained rule is read as the relation of its rows; that program differs from
       the evaluating one, so it is cached under a key of its own. */
    bool maintained = !session_part && kg_maintained_active(g);
    stored_ctx ctx = {.s = s, .with_session = with_session, .maintained = maintained};
    const char *prefix = maintained ? "[maintained] " : "";
    il_buf key, text_key; /* the shape's key, and the text's (made when first needed) */
    il_buf_init(&key);
    il_buf_init(&text_key);
    il_arena sa;
    il_arena_init(&sa);
    kg_shape shape;
    plan_program *p = NULL;
    bool reused = false; /* p is a shape's cached program, bound to q's values */
    if (!session_part) {
        bool by_text = true;
        if (kg_shape_of(q, &sa, &shape)) {
            il_buf_puts(&key, prefix);
            iql_fmt_rule_key(&shape.key_rule, &key);
            kg_plan_entry *e = kg_plan_lookup(g, il_buf_str(&key));
            if (!e) {
                /* met for the first time: kept with its values until the next query of
                   the shape tells whether its program can take others */
                p = compile(q, &ctx);
                e = kg_plan_store(g, il_buf_str(&key), p, il_intern_scope_share());
                e->values = malloc(shape.n * sizeof *e->values);
                memcpy(e->values, shape.values, shape.n * sizeof *e->values);
            } else if (e->prog && !e->values) {
                p = e->prog;
                plan_params_bind(&e->params, shape.values);
                reused = true;
            } else if (e->prog && values_equal(e->values, shape.values, shape.n)) {
                p = e->prog; /* the same query again */
            } else if (e->prog) {
                p = decide_shape(g, e, q, &shape, &sa, &ctx, text_key_of(&text_key, prefix, q));
            }
            by_text = !p; /* a shape whose programs are kept by text */
        }
        if (by_text) {
            kg_plan_entry *e = kg_plan_lookup(g, text_key_of(&text_key, prefix, q));
            if (e) p = e->prog;
        }
    }
    if (!p) {
        p = compile(q, &ctx);
        /* its constants may be the query's own strings (base/intern.h), which the cached
           program then holds too */
        if (!session_part) kg_plan_store(g, il_buf_str(&text_key), p, il_intern_scope_share());
    }
    uint64_t t0 = exec_clock_ns();
    const char *err = run_program(p, guard, rows, nrows, arity);
    s->eval_ns += exec_clock_ns() - t0;
    plan_program_reset(p);
#if IL_CHECKED_BUILD
    if (reused && !err) check_shape_rows(q, &ctx, *rows, *nrows, *arity);
#endif
    (void)reused;
    if (session_part) program_free(p);
    il_buf_free(&key);
    il_buf_free(&text_key);
    il_arena_destroy(&sa);
    stored_ctx_free(&ctx);
    exec_guard_leave(outer);
    __atomic_fetch_add(&s->e->queries, 1, __ATOMIC_RELAXED); /* pinned readers too */
    return err;
}

int kg_words_cmp(const val_t *a, const val_t *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

bool kg_rows_have(const val_t *rows, size_t n, uint32_t w, const val_t *row) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = kg_words_cmp(&rows[mid * w], row, w);
        if (c == 0) return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The delta's query rows (eph, in word order) that the graph's rows (*rows, in word
   order) lack are the ephemeral ones: they go to the split and are merged into *rows,
   which stay in word order. A row of no columns is the one row there is. */
static void add_new_rows(val_t **rows, size_t *nrows, uint32_t w, tupleset *eph, kg_split *split) {
    if (!w) {
        if (*nrows) return;
        *rows = il_mem_alloc(sizeof **rows);
        *nrows = 1;
        split->rows = il_mem_alloc(sizeof **rows);
        split->nrows = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < eph->n; i++) {
        const val_t *t = &eph->tuples[i * w];
        if (kg_rows_have(*rows, *nrows, w, t)) continue;
        memmove(&eph->tuples[n * w], t, w * sizeof *t);
        n++;
    }
    if (!n) return;
    val_t *all = il_mem_alloc((*nrows + n) * w * sizeof *all);
    size_t i = 0, j = 0, k = 0;
    while (i < *nrows || j < n) {
        bool left =
            j == n || (i < *nrows && kg_words_cmp(&(*rows)[i * w], &eph->tuples[j * w], w) < 0);
        memcpy(&all[k++ * w], left ? &(*rows)[i++ * w] : &eph->tuples[j++ * w], w * sizeof *all);
    }
    il_mem_free(*rows);
    *rows = all;
    *nrows += n;
    split->rows = eph->tuples;
    split->nrows = n;
    eph->tuples = NULL;
    eph->n = 0;
}

/* The query's answer when its stratum was evaluated again (answer, in word order): the
   rows of the graph's answer (*rows, in word order) that it lacks are gone, those it adds
   are the ephemeral ones, going to the split; *rows becomes the answer. */
static void take_answer(val_t **rows, size_t *nrows, uint32_t w, tupleset *answer,
                        kg_split *split) {
    if (!w) {
        bool graph_has = *nrows > 0;
        il_mem_free(*rows);
        *rows = NULL;
        *nrows = 0;
        if (!answer->n) return;
        *rows = il_mem_alloc(sizeof **rows);
        *nrows = 1;
        if (graph_has) return;
        split->rows = il_mem_alloc(sizeof **rows);
        split->nrows = 1;
        return;
    }
    val_t *eph = il_mem_alloc((answer->n ? answer->n : 1) * w * sizeof *eph);
    size_t n = 0;
    for (size_t i = 0; i < answer->n; i++) {
        const val_t *t = &answer->tuples[i * w];
        if (!kg_rows_have(*rows, *nrows, w, t)) memcpy(&eph[n++ * w], t, w * sizeof *t);
    }
    il_mem_free(*rows);
    *rows = answer->tuples;
    *nrows = answer->n;
    answer->tuples = NULL;
    answer->n = 0;
    if (n) {
        split->rows = eph;
        split->nrows = n;
    } else {
        il_mem_free(eph);
    }
}

const char *kg_query_rows_delta(il_session *s, const iql_rule *q, val_t **rows, size_t *nrows,
                                uint32_t *arity, kg_split *split) {
    static _Thread_local char errbuf[1024];
    *rows = NULL;
    *nrows = 0;
    *arity = 0;
    split->kind = KG_SPLIT_PERSISTENT;
    exec_guard *guard = s->guard;
    if (guard && exec_guard_check(guard)) return il_stop_message(guard->stop);
    exec_guard *outer = exec_guard_enter(guard);
    /* the session's rules planned in, its facts left for the delta */
    stored_ctx ctx = {.s = s, .with_session = true, .facts_apart = true};
    plan_program *p = compile(q, &ctx);
    const char *err = NULL;
    if (prov_delta_sound(p, s)) {
        uint64_t t0 = exec_clock_ns();
        exec_ctx x = {.guard = guard, .skip_session = true};
        plan_pred *qp = &p->preds.v[p->query_pred];
        tupleset eph;
        tupleset_init(&eph, qp->arity);
        bool whole = false;
        if (!exec_run(p, &x) || (err = prov_delta_run(p, s, &x, &eph, &whole))) {
            il_str_copy(errbuf, sizeof errbuf, err ? err : x.error);
            err = errbuf;
        } else {
            uint32_t w = qp->arity;
            err = take_rows(p, rows, nrows, arity);
            *arity = w;
            split->kind = KG_SPLIT_EPHEMERAL;
            if (!err && eph.n && w && !tuple_sort(eph.tuples, eph.n, w)) err = EXEC_STOPPED;
            if (!err && whole)
                take_answer(rows, nrows, w, &eph, split);
            else if (!err && eph.n)
                add_new_rows(rows, nrows, w, &eph, split);
        }
        tupleset_free(&eph);
        if (guard && guard->stop) err = il_stop_message(guard->stop);
        if (err) {
            il_mem_free(*rows);
            *rows = NULL;
            *nrows = 0;
        }
        s->eval_ns += exec_clock_ns() - t0;
        plan_program_reset(p);
        __atomic_fetch_add(&s->e->queries, 1, __ATOMIC_RELAXED);
    }
    program_free(p);
    stored_ctx_free(&ctx);
    exec_guard_leave(outer);
    return err;
}

/* ---- sorting ---- */

typedef struct sort_ctx {
    uint32_t width;
    const uint32_t *cols; /* :asc/:desc columns */
    const bool *desc;
    uint32_t ncols;
} sort_ctx;

static _Thread_local const sort_ctx *g_sort;

static int cmp_rows_value(const void *a, const void *b) {
    const val_t *x = a, *y = b;
    for (uint32_t i = 0; i < g_sort->width; i++) {
        int c = val_cmp(x[i], y[i]);
        if (c) return c;
    }
    return 0;
}

/* Ties fall back to the value order, which is the prior order. */
static int cmp_rows_annotated(const void *a, const void *b) {
    const val_t *x = a, *y = b;
    for (uint32_t i = 0; i < g_sort->ncols; i++) {
        uint32_t c = g_sort->cols[i];
        int r = val_cmp_sort(x[c], y[c]);
        if (r) return g_sort->desc[i] ? -r : r;
    }
    return cmp_rows_value(a, b);
}

/* ---- the query rule ---- */

static iql_term *mk_var(il_arena *a, const char *name) {
    iql_term *t = il_arena_calloc(a, sizeof *t);
    t->kind = IQL_T_VAR;
    t->u.var = il_arena_strdup(a, name);
    return t;
}

typedef IL_VEC(const char *) name_list;

static bool name_in(const name_list *l, const char *n) {
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], n) == 0) return true;
    return false;
}

static bool add_new_var(const char *var, void *ctx) {
    name_list *out = ctx;
    if (!name_in(out, var)) il_vec_push(*out, var);
    return true;
}

static void collect_vars(const iql_term *t, name_list *out) {
    iql_term_each_var(t, false, add_new_var, out);
}

/* The header text of a goal constant (6.5). */
static void const_header(const iql_term *t, il_buf *b) {
    switch (t->kind) {
    case IQL_T_INT:
        il_buf_printf(b, "%lld", (long long)t->u.ival);
        break;
    case IQL_T_FLOAT:
        fmt_f64_display(t->u.fval, b);
        break;
    case IQL_T_BOOL:
        il_buf_puts(b, t->u.bval ? "true" : "false");
        break;
    case IQL_T_STRING:
        for (size_t i = 0; i < t->u.str.len; i++) {
            char ch = t->u.str.ptr[i];
            if (ch == '\\' || ch == '"') il_buf_putc(b, '\\');
            il_buf_putc(b, ch);
        }
        break;
    default:
        break;
    }
}

static uint32_t known_arity(il_session *s, const char *rel, bool with_session, bool *known) {
    *known = true;
    kg_rule *r = kg_rule_find(s->kg, rel);
    if (r && r->clauses.n) return kg_head_arity(&r->clauses.v[0]->head);
    if (with_session)
        for (uint32_t i = 0; i < s->rules.n; i++)
            if (strcmp(s->rules.v[i]->head.rel, rel) == 0)
                return kg_head_arity(&s->rules.v[i]->head);
    kg_relation *kr = kg_rel_find(s->kg, rel);
    if (kr && kr->data) return rel_arity(kr->data);
    if (with_session) {
        sess_facts *f = sess_facts_find(s, rel);
        if (f) return f->arity;
    }
    *known = false;
    return 0;
}

static const iql_schema *schema_of(il_session *s, const char *rel) {
    const iql_schema *sc = sess_schema_find(s, rel);
    if (sc) return sc;
    kg_relation *kr = kg_rel_find(s->kg, rel);
    return kr ? kr->schema : NULL;
}

/* The rule that answers a query: head = the output columns (goal arguments, then the
 * new variables of the other literals), body = the goal and the literals, goal
 * constants as equalities (so they match numerically and the row shows the stored
 * value). Fills the column headers and tells whether the arity-mismatch quirk applied.
 * Shared with maintained views (src/views), which must answer exactly the same rule. */
void kg_query_shape(il_session *s, const iql_query *q, kg_query_opts opts, il_arena *arena,
                    query_shape *out) {
    const iql_atom *goal = &q->goal;
    uint32_t ng = goal->nargs;
    iql_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.head.rel = "__query__";
    bool known;
    uint32_t karity = known_arity(s, goal->rel, opts.with_session, &known);
    /* the head takes the goal's columns, or the relation's when the quirk below applies */
    uint32_t cap = (karity > ng ? karity : ng) + 8;
    for (uint32_t i = 0; i < q->nextra; i++) {
        const iql_literal *l = &q->extra[i];
        cap += l->kind == IQL_LIT_CMP ? 8 : l->atom.nargs * 4;
    }
    rule.head.args = il_arena_alloc(arena, cap * sizeof(iql_term *));
    rule.body = il_arena_alloc(arena, (q->nextra + ng + 2) * sizeof *rule.body);
    iql_literal *gl = &rule.body[rule.nbody++];
    memset(gl, 0, sizeof *gl);
    gl->kind = IQL_LIT_ATOM;
    gl->atom.rel = goal->rel;
    gl->atom.nargs = ng;
    gl->atom.args = il_arena_alloc(arena, (ng + 1) * sizeof(iql_term *));
    char **headers = il_arena_alloc(arena, cap * sizeof(char *));
    il_buf hb;
    il_buf_init(&hb);

    bool quirk_all = false; /* arity mismatch with distinct variables: all stored rows */
    if (known && karity != ng) {
        bool distinct_vars = q->nextra == 0;
        for (uint32_t i = 0; i < ng && distinct_vars; i++) {
            if (goal->args[i]->kind != IQL_T_VAR) distinct_vars = false;
            for (uint32_t j = 0; j < i && distinct_vars; j++)
                if (strcmp(goal->args[i]->u.var, goal->args[j]->u.var) == 0) distinct_vars = false;
        }
        quirk_all = distinct_vars && karity > 0;
    }
    if (quirk_all) {
        gl->atom.nargs = karity;
        gl->atom.args = il_arena_alloc(arena, (karity + 1) * sizeof(iql_term *));
        for (uint32_t i = 0; i < karity; i++) {
            char name[32];
            snprintf(name, sizeof name, "col%u", i);
            gl->atom.args[i] = mk_var(arena, name);
            rule.head.args[rule.head.nargs] = gl->atom.args[i];
            headers[rule.head.nargs++] = il_arena_strdup(arena, name);
        }
    } else {
        /* a search as the goal keeps its arguments: they are its parameters, and only its
           variables are columns */
        bool search_goal = strcmp(goal->rel, "hnsw_nearest") == 0;
        for (uint32_t i = 0; i < ng; i++) {
            const iql_term *t = goal->args[i];
            char name[32];
            iql_term *arg;
            il_buf_clear(&hb);
            if (search_goal) {
                gl->atom.args[i] = (iql_term *)t;
                if (t->kind != IQL_T_VAR) continue;
                rule.head.args[rule.head.nargs] = (iql_term *)t;
                headers[rule.head.nargs++] = il_arena_strdup(arena, t->u.var);
                continue;
            }
            switch (t->kind) {
            case IQL_T_VAR:
                arg = (iql_term *)t;
                il_buf_puts(&hb, t->u.var);
                break;
            case IQL_T_PLACEHOLDER:
                snprintf(name, sizeof name, "_p%u", i);
                arg = mk_var(arena, name);
                il_buf_puts(&hb, opts.raw_headers ? name : "_");
                break;
            case IQL_T_INT:
            case IQL_T_FLOAT:
            case IQL_T_STRING:
            case IQL_T_BOOL: {
                snprintf(name, sizeof name, "_c%u", i);
                arg = mk_var(arena, name);
                iql_literal *c = &rule.body[rule.nbody++];
                memset(c, 0, sizeof *c);
                c->kind = IQL_LIT_CMP;
                c->op = IQL_CMP_EQ;
                c->lhs = arg;
                c->rhs = (iql_term *)t;
                if (opts.raw_headers)
                    il_buf_puts(&hb, name);
                else
                    const_header(t, &hb);
                break;
            }
            case IQL_T_VECTOR:
                snprintf(name, sizeof name, "_v%u", i);
                arg = mk_var(arena, name);
                il_buf_puts(&hb, name);
                break;
            default:
                snprintf(name, sizeof name, "_t%u", i);
                arg = mk_var(arena, name);
                il_buf_puts(&hb, name);
                break;
            }
            gl->atom.args[i] = arg;
            rule.head.args[rule.head.nargs] = arg;
            headers[rule.head.nargs++] = il_arena_strdup(arena, il_buf_str(&hb));
        }
        name_list seen = {0};
        for (uint32_t i = 0; i < ng; i++)
            if (gl->atom.args[i]->kind == IQL_T_VAR) il_vec_push(seen, gl->atom.args[i]->u.var);
        for (uint32_t i = 0; i < q->nextra; i++) {
            const iql_literal *l = &q->extra[i];
            rule.body[rule.nbody++] = *l;
            name_list found = {0};
            if (l->kind == IQL_LIT_ATOM) {
                for (uint32_t j = 0; j < l->atom.nargs; j++) collect_vars(l->atom.args[j], &found);
            } else if (l->kind == IQL_LIT_CMP) {
                collect_vars(l->lhs, &found);
                collect_vars(l->rhs, &found);
            }
            for (uint32_t j = 0; j < found.n; j++) {
                if (name_in(&seen, found.v[j])) continue;
                il_vec_push(seen, found.v[j]);
                rule.head.args[rule.head.nargs] = mk_var(arena, found.v[j]);
                headers[rule.head.nargs++] = il_arena_strdup(arena, found.v[j]);
            }
            il_vec_free(found);
        }
        il_vec_free(seen);
    }
    il_buf_free(&hb);
    out->rule = rule;
    out->headers = headers;
    out->quirk_all = quirk_all;
}

il_result *kg_query(il_session *s, const iql_query *q, kg_query_opts opts) {
    il_arena a;
    il_arena_init(&a);
    query_shape shape;
    kg_query_shape(s, q, opts, &a, &shape);
    iql_rule rule = shape.rule;
    char **headers = shape.headers;
    bool quirk_all = shape.quirk_all;
    const iql_atom *goal = &q->goal;

    if (rule.head.nargs > REL_MAX_ARITY) {
        il_arena_destroy(&a);
        return res_error("Query execution failed: the query has %u columns; at most %d are "
                         "supported",
                         rule.head.nargs, REL_MAX_ARITY);
    }
    val_t *rows;
    size_t nrows;
    uint32_t arity;
    /* a query on a session with facts or rules of its own tells its rows apart */
    bool classify = opts.provenance && opts.with_session && (s->rules.n || s->facts.n);
    kg_split split = {0};
    const char *err = classify ? kg_query_rows_split(s, &rule, &rows, &nrows, &arity, &split)
                               : kg_query_rows(s, &rule, opts.with_session, &rows, &nrows, &arity);
    if (err) {
        kg_split_free(&split);
        il_arena_destroy(&a);
        return res_error("Query execution failed: %s", err);
    }
    /* sorting and cutting the rows is the query's work too: its guard may stop it */
    exec_guard *outer = exec_guard_enter(s->guard);
    uint32_t w = arity ? arity : 1;
    sort_ctx sc = {.width = arity};
    g_sort = &sc;
    /* Rows come out of the result index in word order, which is the value order for the
       common case (non-negative integers, interned strings in insertion order aside), so
       check before sorting. */
    bool sorted = true;
    for (size_t i = 1; i < nrows && sorted; i++)
        sorted = cmp_rows_value(&rows[(i - 1) * w], &rows[i * w]) <= 0;
    bool done = sorted || exec_stable_sort(rows, nrows, w * sizeof *rows, cmp_rows_value);
    if (done && q->nsort && !quirk_all) {
        uint32_t *cols = il_arena_alloc(&a, q->nsort * sizeof *cols);
        bool *desc = il_arena_alloc(&a, q->nsort * sizeof *desc);
        uint32_t nc = 0;
        for (uint32_t i = 0; i < q->nsort; i++) {
            for (uint32_t j = 0; j < rule.head.nargs; j++) {
                const iql_term *h = rule.head.args[j];
                if (h->kind == IQL_T_VAR && strcmp(h->u.var, q->sort[i].var) == 0) {
                    cols[nc] = j;
                    desc[nc++] = q->sort[i].dir == IQL_SORT_DESC;
                    break;
                }
            }
        }
        sc.cols = cols;
        sc.desc = desc;
        sc.ncols = nc;
        if (nc && nrows > 1)
            done = exec_stable_sort(rows, nrows, w * sizeof *rows, cmp_rows_annotated);
    }
    g_sort = NULL;
    if (!done) {
        kg_split_free(&split);
        il_mem_free(rows);
        exec_guard_leave(outer);
        il_arena_destroy(&a);
        return res_error("Query execution failed: %s", il_stop_message(s->guard->stop));
    }
    il_result *r = res_new(IL_RESULT_TABLE);
    r->cls = IL_STMT_QUERY;
    size_t first = q->offset > 0 ? (size_t)q->offset : 0;
    if (first > nrows) first = nrows;
    size_t count = nrows - first;
    if (q->limit >= 0 && (size_t)q->limit < count) count = (size_t)q->limit;
    /* A zero-column row is an answer too: "yes" to a propositional query. */
    r->total_rows = count;
    size_t max_rows = opts.max_rows ? opts.max_rows : MAX_RESULT_ROWS;
    if (count > max_rows) count = max_rows;
    r->width = arity;
    r->nrows = count;
    if (count && arity) {
        /* the result's rows count as the statement's memory until it ends */
        il_meter_charge(count * arity * sizeof *rows);
        il_vec_reserve(r->cells, (uint32_t)(count * arity));
        memcpy(r->cells.v, &rows[first * w], count * arity * sizeof *rows);
        r->cells.n = (uint32_t)(count * arity);
    }
    il_mem_free(rows);
    exec_guard_leave(outer);
    /* headers: a schema of exactly this arity wins, then the query head, then colN */
    const iql_schema *sc_decl = schema_of(s, goal->rel);
    if (sc_decl && sc_decl->ncols == arity && !opts.raw_headers) {
        for (uint32_t i = 0; i < arity; i++) res_add_col(r, sc_decl->cols[i].name);
    } else if (rule.head.nargs == arity) {
        for (uint32_t i = 0; i < arity; i++) res_add_col(r, headers[i]);
    } else {
        for (uint32_t i = 0; i < arity; i++) {
            char name[32];
            snprintf(name, sizeof name, "col%u", i);
            res_add_col(r, name);
        }
    }
    if (classify) kg_provenance(r, &split);
    kg_split_free(&split);
    il_arena_destroy(&a);
    return r;
}

/* ---- .debug ---- */

static void section(il_buf *b, const char *title) {
    il_buf_puts(b, "┌---------------------------------------------------------┐\n");
    il_buf_printf(b, "| %-55s |\n", title);
    il_buf_puts(b, "`---------------------------------------------------------┘\n");
}

il_result *kg_debug(il_session *s, const iql_meta *m, il_arena *a) {
    if (!m->inner) return res_error("Debug error: %s", m->inner_err);
    iql_stmt st = *m->inner;
    if (st.kind != IQL_STMT_QUERY) return res_error("Debug error: expected a query (?...)");
    kg_query_opts opts = {.with_session = true};
    query_shape shape;
    kg_query_shape(s, &st.u.query, opts, a, &shape);
    rule_list rules = {0};
    stored_ctx ctx = {.s = s, .with_session = true};
    plan_program p;
    plan_program_init(&p);
    bool ok = plan_query(&p, &shape.rule, &ctx, &rules);
    il_buf b;
    il_buf_init(&b);
    static const char *const rule_line =
        "═══════════════════════════════════════════════════════════\n";
    il_buf_puts(&b, "Query Plan:\n");
    il_buf_puts(&b, rule_line);
    il_buf_puts(&b, "                    PIPELINE TRACE\n");
    il_buf_puts(&b, rule_line);
    section(&b, "PARSING");
    il_buf_printf(&b, "  Rules parsed: %u\n", rules.n + 1);
    for (uint32_t i = 0; i < rules.n; i++) {
        il_buf_printf(&b, "  Rule %u: ", i + 1);
        iql_fmt_rule(rules.v[i], &b);
        il_buf_putc(&b, '\n');
    }
    il_buf_printf(&b, "  Rule %u: ", rules.n + 1);
    iql_fmt_rule(&shape.rule, &b);
    il_buf_putc(&b, '\n');
    section(&b, "DEMAND REWRITE AND JOIN ORDER");
    if (ok)
        plan_explain(&p, &b);
    else
        il_buf_printf(&b, "  Error: %s\n", p.error);
    il_buf_puts(&b, rule_line);
    il_buf_puts(&b, "Optimization passes:\n");
    il_buf_puts(&b, "  - Demand transformation (magic sets, sideways information passing)\n");
    il_buf_puts(&b, "  - Join ordering (bound atoms first, then estimated rows)\n");
    il_buf_puts(&b, "  - Stratification (strongly connected components, dependencies first)\n");
    il_buf_puts(&b, "  - Semi-naive variants for recursive strata");
    il_result *r = res_message("%s", il_buf_str(&b));
    il_buf_free(&b);
    plan_program_free(&p);
    stored_ctx_free(&ctx);
    il_vec_free(rules);
    return r;
}
