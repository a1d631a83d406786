/* Prepared statements (il_prepare): a program split and parsed once, what an embedder
 * needs to authorize and route each statement read off the trees, and each statement run
 * from its tree. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "iql/parser.h"
#include "iql/script.h"
#include "kg/kg.h"

typedef struct prep_stmt {
    const char *text; /* in the arena, NUL-terminated */
    size_t len;
    il_statement_kind kind;
    const char *err; /* INVALID: why; UNTERMINATED: the parse error to report */
    uint64_t parse_ns;
    iql_stmt st; /* when parsed */
} prep_stmt;

struct il_prepared {
    il_arena arena; /* the texts and the trees */
    prep_stmt *v;
    size_t n;
    /* A one-statement program (a write, most requests) and its tree, without allocations
       beyond the prepared program itself. */
    prep_stmt v_small[1];
    _Alignas(16) char first[768];
};

static const char UNTERMINATED[] = "unterminated statement (unbalanced delimiters)";

static il_statement_kind kind_of(const iql_stmt *st) {
    switch (st->kind) {
    case IQL_STMT_META:
        return IL_STATEMENT_META;
    case IQL_STMT_TYPE_DECL:
        return IL_STATEMENT_TYPE_DECL;
    case IQL_STMT_UPDATE:
        return IL_STATEMENT_UPDATE;
    case IQL_STMT_PERSIST_RULE:
        return IL_STATEMENT_RULE;
    case IQL_STMT_SCHEMA:
        return IL_STATEMENT_SCHEMA;
    case IQL_STMT_SESSION_SCHEMA:
        return IL_STATEMENT_SESSION_SCHEMA;
    case IQL_STMT_INSERT:
        return IL_STATEMENT_INSERT;
    case IQL_STMT_DROP_RULE:
        return IL_STATEMENT_DROP_RULE;
    case IQL_STMT_DELETE:
        return IL_STATEMENT_DELETE;
    case IQL_STMT_COND_DELETE:
        return IL_STATEMENT_COND_DELETE;
    case IQL_STMT_QUERY:
        return IL_STATEMENT_QUERY;
    case IQL_STMT_SESSION_RULE:
        return IL_STATEMENT_SESSION_RULE;
    case IQL_STMT_SESSION_FACT:
        return IL_STATEMENT_SESSION_FACT;
    }
    return IL_STATEMENT_INVALID;
}

static il_meta_command meta_of(iql_meta_kind k) {
    switch (k) {
    case IQL_META_KG_SHOW:
        return IL_META_KG_SHOW;
    case IQL_META_KG_LIST:
        return IL_META_KG_LIST;
    case IQL_META_KG_CREATE:
        return IL_META_KG_CREATE;
    case IQL_META_KG_USE:
        return IL_META_KG_USE;
    case IQL_META_KG_DROP:
        return IL_META_KG_DROP;
    case IQL_META_KG_ACL_LIST:
        return IL_META_KG_ACL_LIST;
    case IQL_META_KG_ACL_GRANT:
        return IL_META_KG_ACL_GRANT;
    case IQL_META_KG_ACL_REVOKE:
        return IL_META_KG_ACL_REVOKE;
    case IQL_META_REL_LIST:
        return IL_META_REL_LIST;
    case IQL_META_REL_SHOW:
        return IL_META_REL_SHOW;
    case IQL_META_REL_DROP:
        return IL_META_REL_DROP;
    case IQL_META_RULE_LIST:
        return IL_META_RULE_LIST;
    case IQL_META_RULE_SHOW:
        return IL_META_RULE_SHOW;
    case IQL_META_RULE_DEF:
        return IL_META_RULE_DEF;
    case IQL_META_RULE_DROP:
        return IL_META_RULE_DROP;
    case IQL_META_RULE_DROP_PREFIX:
        return IL_META_RULE_DROP_PREFIX;
    case IQL_META_RULE_REMOVE:
        return IL_META_RULE_REMOVE;
    case IQL_META_RULE_CLEAR:
        return IL_META_RULE_CLEAR;
    case IQL_META_RULE_EDIT:
        return IL_META_RULE_EDIT;
    case IQL_META_SESSION_LIST:
        return IL_META_SESSION_LIST;
    case IQL_META_SESSION_CLEAR:
        return IL_META_SESSION_CLEAR;
    case IQL_META_SESSION_DROP_INDEX:
        return IL_META_SESSION_DROP_INDEX;
    case IQL_META_SESSION_DROP_NAME:
        return IL_META_SESSION_DROP_NAME;
    case IQL_META_CLEAR_PREFIX:
        return IL_META_CLEAR_PREFIX;
    case IQL_META_COMPACT:
        return IL_META_COMPACT;
    case IQL_META_BACKUP:
        return IL_META_BACKUP;
    case IQL_META_BACKUP_STATUS:
        return IL_META_BACKUP_STATUS;
    case IQL_META_STATUS:
        return IL_META_STATUS;
    case IQL_META_DEBUG:
        return IL_META_DEBUG;
    case IQL_META_WHY:
        return IL_META_WHY;
    case IQL_META_WHY_FULL:
        return IL_META_WHY_FULL;
    case IQL_META_WHY_NOT:
        return IL_META_WHY_NOT;
    case IQL_META_INDEX_LIST:
        return IL_META_INDEX_LIST;
    case IQL_META_INDEX_CREATE:
        return IL_META_INDEX_CREATE;
    case IQL_META_INDEX_DROP:
        return IL_META_INDEX_DROP;
    case IQL_META_INDEX_STATS:
        return IL_META_INDEX_STATS;
    case IQL_META_INDEX_REBUILD:
        return IL_META_INDEX_REBUILD;
    case IQL_META_HELP:
        return IL_META_HELP;
    case IQL_META_QUIT:
        return IL_META_QUIT;
    case IQL_META_LOAD:
        return IL_META_LOAD;
    case IQL_META_USER:
        return IL_META_USER;
    case IQL_META_APIKEY:
        return IL_META_APIKEY;
    case IQL_META_AGENT:
        return IL_META_AGENT;
    }
    return IL_META_NONE;
}

il_prepared *il_prepare(const char *text, size_t len) {
    il_prepared *p = malloc(sizeof *p);
    if (!p) abort();
    il_arena_init_with(&p->arena, p->first, sizeof p->first);
    p->v = p->v_small;
    p->n = 0;
    size_t cap = sizeof p->v_small / sizeof p->v_small[0];
    iql_script sc;
    iql_script_init(&sc, text, len);
    iql_script_item it;
    while (iql_script_next(&sc, &it)) {
        if (p->n == cap) {
            cap = 2 * cap < 4 ? 4 : 2 * cap;
            bool small = p->v == p->v_small;
            prep_stmt *v = realloc(small ? NULL : p->v, cap * sizeof *p->v);
            if (!v) abort();
            if (small) memcpy(v, p->v_small, p->n * sizeof *v);
            p->v = v;
        }
        prep_stmt *ps = &p->v[p->n++];
        memset(ps, 0, sizeof *ps);
        /* every byte, NUL included: the parser decides what a NUL means */
        char *t = il_arena_alloc(&p->arena, it.len + 1);
        memcpy(t, it.text, it.len);
        t[it.len] = 0;
        ps->text = t;
        ps->len = it.len;
        if (it.unterminated) {
            ps->kind = IL_STATEMENT_UNTERMINATED;
            ps->err = UNTERMINATED;
        } else {
            uint64_t t0 = exec_clock_ns();
            bool ok = iql_parse(&p->arena, t, it.len, &ps->st, &ps->err);
            ps->parse_ns = exec_clock_ns() - t0;
            ps->kind = ok ? kind_of(&ps->st) : IL_STATEMENT_INVALID;
            if (!ok && !ps->err) ps->err = "Parse error";
        }
    }
    iql_script_free(&sc);
    return p;
}

void il_prepared_free(il_prepared *p) {
    if (!p) return;
    il_arena_destroy(&p->arena);
    if (p->v != p->v_small) free(p->v);
    free(p);
}

size_t il_prepared_count(const il_prepared *p) {
    return p->n;
}

const char *il_prepared_text(const il_prepared *p, size_t i, size_t *len) {
    if (len) *len = p->v[i].len;
    return p->v[i].text;
}

il_statement_kind il_prepared_kind(const il_prepared *p, size_t i) {
    return p->v[i].kind;
}

static const iql_meta *meta(const il_prepared *p, size_t i) {
    return p->v[i].kind == IL_STATEMENT_META ? &p->v[i].st.u.meta : NULL;
}

il_meta_command il_prepared_meta(const il_prepared *p, size_t i) {
    const iql_meta *m = meta(p, i);
    return m ? meta_of(m->kind) : IL_META_NONE;
}

const char *il_prepared_arg(const il_prepared *p, size_t i, unsigned k) {
    const iql_meta *m = meta(p, i);
    if (!m) return NULL;
    return k == 0 ? m->arg : k == 1 ? m->arg2 : k == 2 ? m->arg3 : NULL;
}

const char *il_prepared_graph(const il_prepared *p, size_t i) {
    switch (il_prepared_meta(p, i)) {
    case IL_META_KG_CREATE:
    case IL_META_KG_USE:
    case IL_META_KG_DROP:
    case IL_META_KG_ACL_LIST:
    case IL_META_KG_ACL_GRANT:
    case IL_META_KG_ACL_REVOKE:
        return meta(p, i)->arg;
    default:
        return NULL;
    }
}

const char *il_prepared_meta_text(const il_prepared *p, size_t i) {
    const iql_meta *m = meta(p, i);
    return m ? m->text : NULL;
}

const char *il_prepared_error(const il_prepared *p, size_t i) {
    return p->v[i].kind == IL_STATEMENT_INVALID ? p->v[i].err : NULL;
}

il_txn_part il_prepared_txn_part(const il_prepared *p, size_t i) {
    il_statement_kind k = p->v[i].kind;
    if (k == IL_STATEMENT_INVALID || k == IL_STATEMENT_UNTERMINATED) return IL_TXN_READS;
    return kg_stmt_txn_part(&p->v[i].st);
}

static void atoms(const iql_literal *body, uint32_t n, il_relation_fn fn, void *ctx) {
    for (uint32_t k = 0; k < n; k++)
        if (body[k].kind != IQL_LIT_CMP) fn(ctx, body[k].atom.rel, false);
}

void il_prepared_relations(const il_prepared *p, size_t i, il_relation_fn fn, void *ctx) {
    const prep_stmt *ps = &p->v[i];
    if (ps->kind == IL_STATEMENT_INVALID || ps->kind == IL_STATEMENT_UNTERMINATED) return;
    const iql_stmt *st = &ps->st;
    switch (st->kind) {
    case IQL_STMT_QUERY:
        fn(ctx, st->u.query.goal.rel, false);
        atoms(st->u.query.extra, st->u.query.nextra, fn, ctx);
        break;
    case IQL_STMT_INSERT:
    case IQL_STMT_DELETE:
        fn(ctx, st->u.facts.rel, true);
        break;
    case IQL_STMT_PERSIST_RULE:
    case IQL_STMT_COND_DELETE:
        fn(ctx, st->u.rule.head.rel, true);
        atoms(st->u.rule.body, st->u.rule.nbody, fn, ctx);
        break;
    case IQL_STMT_SESSION_RULE:
        atoms(st->u.rule.body, st->u.rule.nbody, fn, ctx);
        break;
    case IQL_STMT_UPDATE:
        for (uint32_t k = 0; k < st->u.update.ndels; k++) fn(ctx, st->u.update.dels[k].rel, true);
        for (uint32_t k = 0; k < st->u.update.nins; k++) fn(ctx, st->u.update.ins[k].rel, true);
        atoms(st->u.update.body, st->u.update.nbody, fn, ctx);
        break;
    case IQL_STMT_SCHEMA:
        fn(ctx, st->u.schema.rel, true);
        break;
    case IQL_STMT_DROP_RULE:
        fn(ctx, st->u.drop_name, true);
        break;
    case IQL_STMT_META:
    case IQL_STMT_TYPE_DECL:
    case IQL_STMT_SESSION_SCHEMA:
    case IQL_STMT_SESSION_FACT:
        break;
    }
}

static il_result *run(il_session *s, const il_prepared *p, size_t i, bool stored, size_t max) {
    const prep_stmt *ps = &p->v[i];
    bool parsed = ps->kind != IL_STATEMENT_INVALID && ps->kind != IL_STATEMENT_UNTERMINATED;
    return kg_execute_parsed(s, ps->text, ps->len, parsed ? &ps->st : NULL, ps->err, ps->parse_ns,
                             stored, max);
}

il_result *il_execute_prepared(il_session *s, const il_prepared *p, size_t i) {
    return run(s, p, i, false, 0);
}

il_result *il_query_stored_prepared(il_session *s, const il_prepared *p, size_t i,
                                    size_t max_rows) {
    return run(s, p, i, true, max_rows);
}

uint64_t il_statements_parsed(void) {
    return iql_parse_count();
}

bool il_prepared_pinnable(const il_prepared *p, size_t i) {
    const prep_stmt *ps = &p->v[i];
    if (ps->kind == IL_STATEMENT_INVALID || ps->kind == IL_STATEMENT_UNTERMINATED) return true;
    /* a query that would make a view makes it on the pin (kg_pin_note_query) */
    return kg_stmt_reads_only(&ps->st);
}
