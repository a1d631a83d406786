/* Transactions (il_txn_begin): several statements of one session committed as one log
 * record and one change report, or undone. While one is open the commit's delta (kg.h)
 * holds every stored tuple changed, and the catalog records how to undo each change of
 * its structure (relations, schemas, rules) with the delta's length then, so that a
 * rollback undoes both backwards in the order they happened; maintained views are not
 * maintained until the commit (queries in the transaction evaluate from the stored
 * facts, since a pending base delta makes the views' rows not current), so a rollback
 * only has to put the stored state back and forget the pending delta. Also the
 * precondition scope of a set of relations (il_graph_scope). */
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/store.h"
#include "views/read_policy.h"
#include "views/view.h"

typedef enum undo_kind {
    U_REL_CREATED,  /* a catalog entry created */
    U_DATA_CREATED, /* a relation's stored facts created (its arity fixed) */
    U_SCHEMA,       /* a relation's schema replaced; the old one kept */
    U_RULE_CREATED,
    U_CLAUSE_ADDED,
    U_RULE_DROPPED,   /* the rule detached from the catalog and kept */
    U_CLAUSE_REMOVED, /* a clause taken out of a rule and kept */
    U_RULE_CLEARED,   /* a rule's clauses emptied; the list is saved */
} undo_kind;

typedef struct undo {
    undo_kind kind;
    uint32_t delta_at; /* the delta's length when it happened: later tuples undo first */
    kg_graph *g;
    kg_relation *rel;
    kg_rule *rule;
    iql_schema *schema; /* U_SCHEMA: the schema before */
    iql_rule *clause;   /* U_CLAUSE_REMOVED */
    iql_rule **clauses; /* U_RULE_CLEARED: the clauses before (malloc'ed) */
    uint32_t index;     /* U_RULE_DROPPED, U_CLAUSE_REMOVED: the place it had */
    size_t count;       /* U_RULE_CLEARED: clauses */
} undo;

struct kg_txn {
    il_session *s;
    bool statement; /* one statement's own (kg_txn_begin_statement) */
    IL_VEC(undo) undos;
    /* The session's own state only grows inside a transaction (.session commands cannot
       join one): its sizes at the start are enough to undo it. */
    uint32_t sess_rules, sess_schemas, sess_facts;
    uint32_t *sess_fact_vals; /* vals.n of each of the first sess_facts relations */
};

static struct kg_txn *txn_of(const kg_graph *g) {
    return g->e->txn;
}

static undo *push(struct kg_txn *t, undo_kind kind, kg_graph *g) {
    undo u;
    memset(&u, 0, sizeof u);
    u.kind = kind;
    u.g = g;
    u.delta_at = kg_delta_len(g->e);
    il_vec_push(t->undos, u);
    return &t->undos.v[t->undos.n - 1];
}

/* ---- recording ---- */

void kg_undo_rel_created(kg_graph *g, kg_relation *r) {
    if (txn_of(g)) push(txn_of(g), U_REL_CREATED, g)->rel = r;
}

void kg_undo_data_created(kg_graph *g, kg_relation *r) {
    if (txn_of(g)) push(txn_of(g), U_DATA_CREATED, g)->rel = r;
}

void kg_undo_schema(kg_graph *g, kg_relation *r, iql_schema *old) {
    if (!txn_of(g)) return;
    undo *u = push(txn_of(g), U_SCHEMA, g);
    u->rel = r;
    u->schema = old;
}

void kg_undo_rule_created(kg_graph *g, kg_rule *r) {
    if (txn_of(g)) push(txn_of(g), U_RULE_CREATED, g)->rule = r;
}

void kg_undo_clause_added(kg_graph *g, kg_rule *r) {
    if (txn_of(g)) push(txn_of(g), U_CLAUSE_ADDED, g)->rule = r;
}

bool kg_undo_rule_dropped(kg_graph *g, kg_rule *r, uint32_t index) {
    if (!txn_of(g)) return false;
    undo *u = push(txn_of(g), U_RULE_DROPPED, g);
    u->rule = r;
    u->index = index;
    return true;
}

void kg_undo_clause_removed(kg_graph *g, kg_rule *r, iql_rule *clause, uint32_t index) {
    if (!txn_of(g)) return;
    undo *u = push(txn_of(g), U_CLAUSE_REMOVED, g);
    u->rule = r;
    u->clause = clause;
    u->index = index;
}

void kg_undo_rule_cleared(kg_graph *g, kg_rule *r) {
    if (!txn_of(g) || !r->clauses.n) return;
    undo *u = push(txn_of(g), U_RULE_CLEARED, g);
    u->rule = r;
    u->count = r->clauses.n;
    u->clauses = malloc(r->clauses.n * sizeof *u->clauses);
    memcpy(u->clauses, r->clauses.v, r->clauses.n * sizeof *u->clauses);
}

/* ---- undoing ---- */

static void rel_unlink(kg_graph *g, kg_relation *r) {
    for (uint32_t i = 0; i < g->rels.n; i++) {
        if (g->rels.v[i] != r) continue;
        memmove(&g->rels.v[i], &g->rels.v[i + 1], (g->rels.n - i - 1) * sizeof *g->rels.v);
        g->rels.n--;
        break;
    }
    if (il_strmap_get(&g->rel_names, r->name) == r) il_strmap_del(&g->rel_names, r->name);
    if (r->data) rel_free(r->data);
    free(r->name);
    free(r);
}

static void rule_unlink(kg_graph *g, kg_rule *r) {
    for (uint32_t i = 0; i < g->rules.n; i++) {
        if (g->rules.v[i] != r) continue;
        memmove(&g->rules.v[i], &g->rules.v[i + 1], (g->rules.n - i - 1) * sizeof *g->rules.v);
        g->rules.n--;
        break;
    }
    if (il_strmap_get(&g->rule_names, r->name) == r) il_strmap_del(&g->rule_names, r->name);
}

/* Puts p at index i of a vector of pointers. */
#define VEC_INSERT(vec, i, p)                                                                      \
    do {                                                                                           \
        il_vec_push(vec, p);                                                                       \
        memmove(&(vec).v[(i) + 1], &(vec).v[i], ((vec).n - 1 - (i)) * sizeof *(vec).v);            \
        (vec).v[i] = (p);                                                                          \
    } while (0)

/* Undoes one change. Changes of rules or of which relations hold facts move the graph's
 * version: plans built inside the transaction must not be taken for the restored state,
 * and views over such a graph rebuild. */
static void undo_one(undo *u) {
    kg_graph *g = u->g;
    switch (u->kind) {
    case U_DATA_CREATED:
        kg_rel_drop_data(g, u->rel);
        break;
    case U_REL_CREATED:
        rel_unlink(g, u->rel);
        break;
    case U_SCHEMA:
        u->rel->schema = u->schema;
        break;
    case U_RULE_CREATED:
        rule_unlink(g, u->rule);
        kg_rule_free(u->rule);
        g->version++;
        break;
    case U_CLAUSE_ADDED:
        if (u->rule->clauses.n) u->rule->clauses.n--;
        kg_rule_changed(u->rule);
        g->version++;
        break;
    case U_RULE_DROPPED:
        VEC_INSERT(g->rules, u->index, u->rule);
        il_strmap_put(&g->rule_names, u->rule->name, u->rule);
        u->rule = NULL; /* the catalog's again */
        g->version++;
        break;
    case U_CLAUSE_REMOVED:
        VEC_INSERT(u->rule->clauses, u->index, u->clause);
        kg_rule_changed(u->rule);
        g->version++;
        break;
    case U_RULE_CLEARED:
        u->rule->clauses.n = 0;
        for (size_t k = 0; k < u->count; k++) il_vec_push(u->rule->clauses, u->clauses[k]);
        kg_rule_changed(u->rule);
        g->version++;
        break;
    }
}

static void session_restore(struct kg_txn *t) {
    il_session *s = t->s;
    s->rules.n = t->sess_rules;
    s->schemas.n = t->sess_schemas;
    while (s->facts.n > t->sess_facts) {
        sess_facts *f = s->facts.v[--s->facts.n];
        free(f->rel);
        il_vec_free(f->vals);
        rel_free(f->set);
        free(f);
    }
    for (uint32_t i = 0; i < s->facts.n; i++) {
        sess_facts *f = s->facts.v[i];
        for (uint32_t at = t->sess_fact_vals[i]; at < f->vals.n; at += sess_fact_stride(f))
            rel_delete(f->set, &f->vals.v[at]);
        f->vals.n = t->sess_fact_vals[i];
    }
}

/* Frees the transaction; with `committed`, the rules it dropped go for good. */
static void txn_free(il_engine *e, bool committed) {
    struct kg_txn *t = e->txn;
    for (uint32_t i = 0; i < t->undos.n; i++) {
        undo *u = &t->undos.v[i];
        if (u->kind == U_RULE_DROPPED && u->rule && committed) kg_rule_free(u->rule);
        free(u->clauses);
    }
    il_vec_free(t->undos);
    free(t->sess_fact_vals);
    free(t);
    e->txn = NULL;
}

/* ---- the API ---- */

il_txn_part kg_stmt_txn_part(const iql_stmt *st) {
    switch (st->kind) {
    case IQL_STMT_QUERY:
    case IQL_STMT_SESSION_RULE:
    case IQL_STMT_SESSION_FACT:
    case IQL_STMT_SESSION_SCHEMA:
    case IQL_STMT_TYPE_DECL:
        return IL_TXN_READS;
    case IQL_STMT_INSERT:
    case IQL_STMT_DELETE:
    case IQL_STMT_COND_DELETE:
    case IQL_STMT_UPDATE:
    case IQL_STMT_PERSIST_RULE:
    case IQL_STMT_SCHEMA:
    case IQL_STMT_DROP_RULE:
        return IL_TXN_WRITES;
    case IQL_STMT_META:
        break;
    }
    switch (st->u.meta.kind) {
    case IQL_META_RULE_DROP:
    case IQL_META_RULE_DROP_PREFIX:
    case IQL_META_RULE_REMOVE:
    case IQL_META_RULE_CLEAR:
    case IQL_META_CLEAR_PREFIX:
        return IL_TXN_WRITES;
    default:
        return IL_TXN_OUTSIDE;
    }
}

il_txn_part il_statement_txn_part(const char *text, size_t len) {
    il_arena a;
    il_arena_init(&a);
    iql_stmt st;
    const char *err = NULL;
    il_txn_part p = iql_parse(&a, text, len, &st, &err) ? kg_stmt_txn_part(&st) : IL_TXN_READS;
    il_arena_destroy(&a);
    return p;
}

const char *kg_txn_refusal(il_session *s, const iql_stmt *st) {
    struct kg_txn *t = s->e->txn;
    if (!t) return NULL;
    if (t->s != s) return "Another session's transaction is open; try again when it ends";
    if (kg_stmt_txn_part(st) == IL_TXN_OUTSIDE)
        return "This command cannot run inside a transaction: run it as a program of its own";
    return NULL;
}

bool il_txn_begin(il_session *s) {
    il_engine *e = s->e;
    if (e->txn) return false;
    struct kg_txn *t = calloc(1, sizeof *t);
    t->s = s;
    t->sess_rules = s->rules.n;
    t->sess_schemas = s->schemas.n;
    t->sess_facts = s->facts.n;
    t->sess_fact_vals = malloc((s->facts.n + 1) * sizeof *t->sess_fact_vals);
    for (uint32_t i = 0; i < s->facts.n; i++) t->sess_fact_vals[i] = s->facts.v[i]->vals.n;
    /* readers that cannot wait for the whole transaction read the revision before it */
    if (!s->pinned_live) kg_publish(s);
    e->txn = t;
    return true;
}

void kg_txn_begin_statement(il_session *s) {
    if (il_txn_begin(s)) s->e->txn->statement = true;
}

bool kg_txn_nets_changes(const il_engine *e) {
    return e->txn && !e->txn->statement;
}

bool kg_txn_unchanged(const il_engine *e) {
    return !e->txn || (!e->txn->undos.n && !kg_delta_len(e));
}

bool il_txn_commit(il_session *s, char **err) {
    bool undone;
    return il_txn_commit_or_undo(s, &undone, err);
}

bool il_txn_commit_or_undo(il_session *s, bool *undone, char **err) {
    il_engine *e = s->e;
    if (err) *err = NULL;
    *undone = false;
    if (!e->txn || e->txn->s != s) return true;
    /* One record for the whole transaction, then the views and the hook, as for one
       statement (kg_exec_stmt); a record the log did not take is undone instead. */
    bool written = true;
    bool ok = kg_rec_commit(e, true, &written, err);
    if (!written) {
        il_txn_rollback(s);
        *undone = true;
        return false;
    }
    txn_free(e, true);
    kg_views_commit(e);
    kg_indexes_commit(e);
    kg_unpublish_written(e, s->kg); /* as after a statement (kg_exec_stmt) */
    kg_changes_end(e, ok);
    kg_delta_reset(e);
    return ok;
}

void il_txn_rollback(il_session *s) {
    il_engine *e = s->e;
    struct kg_txn *t = e->txn;
    if (!t || t->s != s) return;
    /* the delta inverted, backwards, with the changes of structure in their places */
    for (uint32_t i = t->undos.n; i-- > 0;) {
        kg_delta_undo_to(e, t->undos.v[i].delta_at);
        undo_one(&t->undos.v[i]);
    }
    kg_delta_undo_to(e, 0);
    session_restore(t);
    txn_free(e, false);
    kg_changes_end(e, false);
    /* The stored state is what the views last saw: the delta is forgotten, and views of
       a graph whose version moved rebuild (to the same rows). */
    kg_delta_reset(e);
    kg_views_commit(e);
    /* what was published before it is the state again, but its readers are told nothing
       moved only until the graph's next commit anyway */
    kg_unpublish_written(e, s->kg);
}

/* ---- precondition scopes ---- */

typedef IL_VEC(const char *) name_set;

static bool has(const name_set *set, const char *name) {
    for (uint32_t i = 0; i < set->n; i++)
        if (strcmp(set->v[i], name) == 0) return true;
    return false;
}

static bool add(name_set *set, const char *name) {
    if (has(set, name)) return false;
    il_vec_push(*set, name);
    return true;
}

static bool reads_any(const kg_rule *r, const name_set *set) {
    for (uint32_t c = 0; c < r->clauses.n; c++) {
        const iql_rule *cl = r->clauses.v[c];
        for (uint32_t k = 0; k < cl->nbody; k++)
            if (cl->body[k].kind != IQL_LIT_CMP && has(set, cl->body[k].atom.rel)) return true;
    }
    return false;
}

size_t il_graph_scope(il_session *s, const char *const *names, size_t n, il_name_fn fn, void *ctx) {
    kg_graph *g = s->kg;
    for (size_t i = 0; i < n; i++) {
        kg_relation *r = kg_rel_find(g, names[i]);
        kg_rule *rule = kg_rule_find(g, names[i]);
        if (!(r && (r->data || r->schema)) && !(rule && rule->clauses.n)) return i;
    }
    name_set set = {0};
    for (size_t i = 0; i < n; i++) add(&set, names[i]);
    /* downwards: the rules that read the scope, until none is added */
    for (bool grew = true; grew;) {
        grew = false;
        for (uint32_t i = 0; i < g->rules.n; i++)
            if (!has(&set, g->rules.v[i]->name) && reads_any(g->rules.v[i], &set))
                grew |= add(&set, g->rules.v[i]->name);
    }
    /* upwards: what the derived relations of the scope read (the set grows as it is
       walked, so this reaches the closure) */
    for (uint32_t i = 0; i < set.n; i++) {
        kg_rule *r = kg_rule_find(g, set.v[i]);
        for (uint32_t c = 0; r && c < r->clauses.n; c++) {
            const iql_rule *cl = r->clauses.v[c];
            for (uint32_t k = 0; k < cl->nbody; k++)
                if (cl->body[k].kind != IQL_LIT_CMP) add(&set, cl->body[k].atom.rel);
        }
    }
    for (uint32_t i = 0; i < set.n; i++) fn(ctx, set.v[i]);
    il_vec_free(set);
    return n;
}
