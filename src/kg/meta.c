/* Meta commands run by the engine (iql-language.md section 4): knowledge graphs,
 * relations, persistent rules, the session, prefix clears, status. The
 * client-only ones (.help, .quit, .load) are answered with IL_STMT_CLIENT_ONLY. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "iql/print.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/store.h"
#include "value/print.h"

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void session_reset(il_session *s) {
    sess_clear(s, NULL, NULL);
}

/* ---- knowledge graphs ---- */

static bool valid_kg_name(const char *n, il_buf *why) {
    size_t len = strlen(n);
    if (len > 128) {
        il_buf_printf(
            why, "Invalid relation name: Knowledge graph name too long: %zu bytes (max 128)", len);
        return false;
    }
    if (len == 0 || strchr(n, '/') || strchr(n, '\\') || strstr(n, "..") || strcmp(n, ".") == 0) {
        il_buf_printf(why, "Invalid relation name: %s", n);
        return false;
    }
    return true;
}

static il_result *kg_switch(il_session *s, kg_graph *g, il_result *r) {
    s->kg = g;
    session_reset(s);
    r->cls = IL_STMT_KG_SWITCH;
    return r;
}

static il_result *meta_kg(il_session *s, const iql_meta *m) {
    il_engine *e = s->e;
    switch (m->kind) {
    case IQL_META_KG_SHOW:
        return res_message("Current knowledge graph: %s", s->kg->name);
    case IQL_META_KG_LIST: {
        /* on a pin, the graphs as of the pin (a write beside it may create or drop one) */
        uint32_t n;
        const char **names = kg_graph_names(s, &n);
        if (n == 0) {
            free(names);
            return res_message("No knowledge graphs found.");
        }
        il_result *r = res_message("Knowledge Graphs:");
        for (uint32_t i = 0; i < n; i++) {
            char line[512];
            snprintf(line, sizeof line, "  %s%s", names[i],
                     strcmp(names[i], s->kg->name) == 0 ? " *" : "");
            res_add_line(r, line);
        }
        free(names);
        return r;
    }
    case IQL_META_KG_CREATE: {
        const char *n = m->arg;
        if (strcmp(n, "_internal") == 0)
            return res_error("Access denied: '_internal' is a system knowledge graph");
        il_buf why;
        il_buf_init(&why);
        if (!valid_kg_name(n, &why)) {
            il_result *r = res_error("Create failed: %s", il_buf_str(&why));
            il_buf_free(&why);
            return r;
        }
        il_buf_free(&why);
        if (kg_graph_find(e, n))
            return res_error("Create failed: Knowledge graph already exists: %s", n);
        if (e->graphs.n >= 1000)
            return res_error("Create failed: Too many knowledge graphs (max 1000)");
        kg_graph *g = kg_graph_create(e, n);
        kg_rec_kg_create(e, n);
        kg_change_note(e, IL_CHANGE_GRAPH, n, NULL, "created");
        il_result *r = res_message("Knowledge graph '%s' created.", n);
        char line[512];
        snprintf(line, sizeof line, "Switched to knowledge graph: %s", n);
        res_add_line(r, line);
        return kg_switch(s, g, r);
    }
    case IQL_META_KG_USE: {
        kg_graph *g = kg_graph_find(e, m->arg);
        if (!g || strcmp(m->arg, "_internal") == 0)
            return res_error("Knowledge graph '%s' not found: Knowledge graph not found: %s",
                             m->arg, m->arg);
        return kg_switch(s, g, res_message("Switched to knowledge graph: %s", m->arg));
    }
    case IQL_META_KG_DROP: {
        const char *n = m->arg;
        if (strcmp(n, s->kg->name) == 0)
            return res_error("Cannot drop current knowledge graph. Switch to another first.");
        if (strcmp(n, "default") == 0)
            return res_error("Drop failed: Cannot drop the default knowledge graph");
        kg_graph *g = kg_graph_find(e, n);
        if (!g) return res_error("Drop failed: Knowledge graph not found: %s", n);
        /* under pins_mu: a pinned session's unpin may run meanwhile (pin.c) */
        pthread_mutex_lock(&e->pins_mu);
        for (uint32_t i = 0; i < e->sessions.n; i++) {
            il_session *o = e->sessions.v[i];
            if (o->pinned_live == g) {
                /* its pinned query still reads its session state */
                o->pinned_live = kg_graph_find(e, "default");
                o->reset_at_unpin = true;
            } else if (o->kg == g) {
                o->kg = kg_graph_find(e, "default");
                session_reset(o);
            }
        }
        pthread_mutex_unlock(&e->pins_mu);
        kg_graph_drop(e, g);
        kg_rec_kg_drop(e, n);
        kg_change_note(e, IL_CHANGE_GRAPH, n, NULL, "dropped");
        return res_message("Knowledge graph '%s' dropped.", n);
    }
    case IQL_META_KG_ACL_LIST:
        return res_message("No ACL entries for '%s'. Admins have implicit owner access.",
                           m->arg ? m->arg : s->kg->name);
    default:
        return res_error("Access control is not available in this mode.");
    }
}

/* ---- relations ---- */

static void type_text(const iql_type *t, il_buf *b) {
    switch (t->kind) {
    case IQL_TY_INT:
        il_buf_puts(b, "int");
        break;
    case IQL_TY_FLOAT:
        il_buf_puts(b, "float");
        break;
    case IQL_TY_STRING:
        il_buf_puts(b, "string");
        break;
    case IQL_TY_BOOL:
        il_buf_puts(b, "bool");
        break;
    case IQL_TY_VECTOR:
        if (t->dim)
            il_buf_printf(b, "vector(%u)", t->dim);
        else
            il_buf_puts(b, "vector");
        break;
    case IQL_TY_NAMED:
        il_buf_puts(b, t->name ? t->name : "any");
        break;
    default:
        il_buf_puts(b, "any");
        break;
    }
}

static int cmp_rel(const void *a, const void *b) {
    const kg_relation *x = *(const kg_relation *const *)a, *y = *(const kg_relation *const *)b;
    return strcmp(x->name, y->name);
}

static il_result *meta_rel_list(il_session *s) {
    kg_graph *g = s->kg;
    kg_relation **rels = malloc((g->rels.n + 1) * sizeof *rels);
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->rels.n; i++)
        if (g->rels.v[i]->data || g->rels.v[i]->schema) rels[n++] = g->rels.v[i];
    if (n == 0) {
        free(rels);
        return res_message("No relations in current knowledge graph.");
    }
    qsort(rels, n, sizeof *rels, cmp_rel);
    il_result *r = res_message("Relations:");
    il_buf b;
    il_buf_init(&b);
    for (uint32_t i = 0; i < n; i++) {
        kg_relation *kr = rels[i];
        uint32_t arity = kr->data ? rel_arity(kr->data) : kr->schema->ncols;
        il_buf_clear(&b);
        il_buf_printf(&b, "  %s (arity: %u, columns: [", kr->name, arity);
        for (uint32_t c = 0; c < arity; c++) {
            if (c) il_buf_puts(&b, ", ");
            if (kr->schema && c < kr->schema->ncols) {
                il_buf_printf(&b, "%s: ", kr->schema->cols[c].name);
                type_text(&kr->schema->cols[c].type, &b);
            } else {
                il_buf_printf(&b, "col%u: any", c);
            }
        }
        il_buf_printf(&b, "], tuples: %zu)", kr->data ? rel_count(kr->data) : (size_t)0);
        res_add_line(r, il_buf_str(&b));
    }
    il_buf_free(&b);
    free(rels);
    return r;
}

static iql_term *new_var(il_arena *a, const char *name) {
    iql_term *t = il_arena_calloc(a, sizeof *t);
    t->kind = IQL_T_VAR;
    t->u.var = il_arena_strdup(a, name);
    return t;
}

/* Runs ?rel(V1, ..., Vn) for the given variable names. */
static il_result *query_all(il_session *s, const char *rel, const char *const *vars, uint32_t n,
                            il_arena *a, bool with_session) {
    iql_query q;
    memset(&q, 0, sizeof q);
    q.goal.rel = rel;
    q.goal.nargs = n;
    q.goal.args = il_arena_alloc(a, (n + 1) * sizeof(iql_term *));
    for (uint32_t i = 0; i < n; i++) q.goal.args[i] = new_var(a, vars[i]);
    q.limit = -1;
    kg_query_opts o = {.with_session = with_session};
    return kg_query(s, &q, o);
}

static il_result *meta_rel_show(il_session *s, const char *name, il_arena *a) {
    kg_relation *kr = kg_rel_find(s->kg, name);
    if (!kr || (!kr->data && !kr->schema)) return res_message("Relation '%s' not found.", name);
    if (!kr->data) return res_message("Relation '%s' is empty.", name);
    uint32_t n = rel_arity(kr->data);
    const char **vars = il_arena_alloc(a, (n + 1) * sizeof *vars);
    for (uint32_t i = 0; i < n; i++) {
        char v[32];
        if (i / 26)
            snprintf(v, sizeof v, "%c%u", 'A' + i % 26, i / 26);
        else
            snprintf(v, sizeof v, "%c", 'A' + i % 26);
        vars[i] = il_arena_strdup(a, v);
    }
    il_result *r = query_all(s, name, vars, n, a, false);
    if (r->kind == IL_RESULT_TABLE) {
        r->cls = IL_STMT_REL_SHOW;
        r->title = strdup(name);
    }
    return r;
}

/* ---- persistent rules ---- */

static int cmp_rule(const void *a, const void *b) {
    const kg_rule *x = *(const kg_rule *const *)a, *y = *(const kg_rule *const *)b;
    return strcmp(x->name, y->name);
}

static il_result *meta_rule(il_session *s, const iql_meta *m, il_arena *a) {
    kg_graph *g = s->kg;
    switch (m->kind) {
    case IQL_META_RULE_LIST: {
        if (g->rules.n == 0) return res_message("No rules defined.");
        kg_rule **rules = malloc(g->rules.n * sizeof *rules);
        memcpy(rules, g->rules.v, g->rules.n * sizeof *rules);
        qsort(rules, g->rules.n, sizeof *rules, cmp_rule);
        il_result *r = res_message("Rules:");
        for (uint32_t i = 0; i < g->rules.n; i++) {
            char line[512];
            snprintf(line, sizeof line, "  %s (%u clause(s))", rules[i]->name, rules[i]->clauses.n);
            res_add_line(r, line);
        }
        free(rules);
        return r;
    }
    case IQL_META_RULE_SHOW: {
        const char *vars[2] = {"X", "Y"};
        return query_all(s, m->arg, vars, 2, a, false);
    }
    case IQL_META_RULE_DEF: {
        kg_rule *r = kg_rule_find(g, m->arg);
        if (!r) return res_message("Rule '%s' not found.", m->arg);
        il_result *res = res_message("Rule: %s", m->arg);
        res_add_line(res, "Clauses:");
        il_buf b;
        il_buf_init(&b);
        for (uint32_t i = 0; i < r->clauses.n; i++) {
            il_buf_clear(&b);
            il_buf_printf(&b, "  %u. ", i + 1);
            iql_fmt_rule(r->clauses.v[i], &b);
            res_add_line(res, il_buf_str(&b));
        }
        il_buf_free(&b);
        res_add_line(res, "");
        return res;
    }
    case IQL_META_RULE_DROP: {
        kg_rule *r = kg_rule_find(g, m->arg);
        if (!r)
            return res_error("Rule '%s' not found: Failed to drop rule: Rule '%s' does not exist",
                             m->arg, m->arg);
        kg_rule_drop(g, r);
        kg_rec_rule_drop(g, m->arg);
        kg_change_note(s->e, IL_CHANGE_RULE, g->name, m->arg, "dropped");
        return res_message("Rule '%s' dropped.", m->arg);
    }
    case IQL_META_RULE_DROP_PREFIX: {
        const char **names = malloc((g->rules.n + 1) * sizeof *names);
        uint32_t n = 0;
        size_t plen = strlen(m->arg);
        for (uint32_t i = 0; i < g->rules.n; i++)
            if (strncmp(g->rules.v[i]->name, m->arg, plen) == 0)
                names[n++] = strdup(g->rules.v[i]->name);
        if (n == 0) {
            free(names);
            return res_message("No rules matching prefix '%s'.", m->arg);
        }
        qsort(names, n, sizeof *names, cmp_names);
        il_buf b;
        il_buf_init(&b);
        il_buf_printf(&b, "Dropped %u rule(s) with prefix '%s': ", n, m->arg);
        for (uint32_t i = 0; i < n; i++) {
            il_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
            kg_rule_drop(g, kg_rule_find(g, names[i]));
            kg_rec_rule_drop(g, names[i]);
            kg_change_note(s->e, IL_CHANGE_RULE, g->name, names[i], "dropped");
            free((char *)names[i]);
        }
        free(names);
        il_result *r = res_message("%s", il_buf_str(&b));
        il_buf_free(&b);
        return r;
    }
    case IQL_META_RULE_REMOVE: {
        kg_rule *r = kg_rule_find(g, m->arg);
        if (!r)
            return res_message("Error: Failed to remove rule clause: Rule '%s' does not exist",
                               m->arg);
        if (m->index < 1 || (uint64_t)m->index > r->clauses.n)
            return res_message("Error: Failed to remove rule clause: Clause index %lld out of "
                               "bounds. Rule '%s' has %u clause(s).",
                               (long long)m->index, m->arg, r->clauses.n);
        uint32_t i = (uint32_t)(m->index - 1);
        kg_undo_clause_removed(g, r, r->clauses.v[i], i);
        memmove(&r->clauses.v[i], &r->clauses.v[i + 1],
                (r->clauses.n - i - 1) * sizeof(iql_rule *));
        r->clauses.n--;
        kg_rule_changed(r);
        g->version++;
        kg_rec_rule_remove(g, m->arg, i + 1);
        /* also when that was the last clause and the rule went with it */
        kg_change_note(s->e, IL_CHANGE_RULE, g->name, m->arg, "removed");
        if (r->clauses.n == 0) {
            il_result *res = res_message("Rule '%s' deleted (last clause removed).", m->arg);
            kg_rule_drop(g, r);
            return res;
        }
        return res_message("Clause %lld removed from rule '%s'.", (long long)m->index, m->arg);
    }
    case IQL_META_RULE_CLEAR: {
        kg_rule *r = kg_rule_find(g, m->arg);
        if (!r) return res_message("Error: Failed to clear rule: Rule '%s' does not exist", m->arg);
        if (r->clauses.n) kg_change_note(s->e, IL_CHANGE_RULE, g->name, m->arg, "removed");
        kg_undo_rule_cleared(g, r);
        r->clauses.n = 0;
        kg_rule_changed(r);
        g->version++;
        kg_rec_rule_clear(g, m->arg);
        return res_message("Rule '%s' cleared.", m->arg);
    }
    case IQL_META_RULE_EDIT:
        return res_message("Rule editing is not supported in server mode.");
    default:
        return res_error("Unsupported rule command");
    }
}

/* ---- the session ---- */

static int cmp_facts(const void *a, const void *b) {
    const sess_facts *x = *(const sess_facts *const *)a, *y = *(const sess_facts *const *)b;
    return strcmp(x->rel, y->rel);
}

static il_result *meta_session(il_session *s, const iql_meta *m) {
    switch (m->kind) {
    case IQL_META_SESSION_LIST: {
        size_t nf = sess_fact_count(s);
        if (nf == 0 && s->rules.n == 0) return res_message("No session data defined.");
        il_result *r = res_new(IL_RESULT_MESSAGE);
        il_buf b;
        il_buf_init(&b);
        if (nf) {
            il_buf_printf(&b, "Session facts (%zu):", nf);
            res_add_line(r, il_buf_str(&b));
            sess_facts **fs = malloc(s->facts.n * sizeof *fs);
            memcpy(fs, s->facts.v, s->facts.n * sizeof *fs);
            qsort(fs, s->facts.n, sizeof *fs, cmp_facts);
            for (uint32_t i = 0; i < s->facts.n; i++) {
                sess_facts *f = fs[i];
                for (uint32_t t = 0; t < f->vals.n; t += sess_fact_stride(f)) {
                    il_buf_clear(&b);
                    il_buf_printf(&b, "  %s((", f->rel);
                    for (uint32_t j = 0; j < f->arity; j++) {
                        if (j) il_buf_puts(&b, ", ");
                        val_fmt_display(f->vals.v[t + j], &b);
                    }
                    il_buf_puts(&b, "))");
                    res_add_line(r, il_buf_str(&b));
                }
            }
            free(fs);
        }
        if (s->rules.n) {
            il_buf_clear(&b);
            il_buf_printf(&b, "Session rules (%u):", s->rules.n);
            res_add_line(r, il_buf_str(&b));
            for (uint32_t i = 0; i < s->rules.n; i++) {
                il_buf_clear(&b);
                il_buf_printf(&b, "  %u. ", i + 1);
                iql_fmt_rule(s->rules.v[i], &b);
                res_add_line(r, il_buf_str(&b));
            }
        }
        il_buf_free(&b);
        return r;
    }
    case IQL_META_SESSION_CLEAR: {
        size_t nf, nr;
        sess_clear(s, &nf, &nr);
        il_result *r = res_message("Cleared %zu session fact(s), %zu session rule(s).", nf, nr);
        r->cls = IL_STMT_SESSION_CLEAR;
        return r;
    }
    case IQL_META_SESSION_DROP_INDEX: {
        if (m->index < 1 || (uint64_t)m->index > s->rules.n)
            return res_error("Rule index %lld out of bounds.", (long long)m->index);
        uint32_t i = (uint32_t)(m->index - 1);
        il_buf b;
        il_buf_init(&b);
        il_buf_printf(&b, "Removed rule %lld: ", (long long)m->index);
        iql_fmt_rule(s->rules.v[i], &b);
        memmove(&s->rules.v[i], &s->rules.v[i + 1], (s->rules.n - i - 1) * sizeof(iql_rule *));
        s->rules.n--;
        il_result *r = res_message("%s", il_buf_str(&b));
        il_buf_free(&b);
        return r;
    }
    case IQL_META_SESSION_DROP_NAME: {
        uint32_t k = 0, n = 0;
        for (uint32_t i = 0; i < s->rules.n; i++) {
            if (strcmp(s->rules.v[i]->head.rel, m->arg) == 0)
                k++;
            else
                s->rules.v[n++] = s->rules.v[i];
        }
        s->rules.n = n;
        if (!k) return res_message("No session rules found for relation '%s'.", m->arg);
        return res_message("Dropped %u session rule(s) for '%s'.", k, m->arg);
    }
    default:
        return res_error("Unsupported session command");
    }
}

static il_result *meta_clear_prefix(il_session *s, const char *prefix) {
    kg_graph *g = s->kg;
    kg_relation **rels = malloc((g->rels.n + 1) * sizeof *rels);
    uint32_t n = 0;
    size_t plen = strlen(prefix);
    for (uint32_t i = 0; i < g->rels.n; i++)
        if (strncmp(g->rels.v[i]->name, prefix, plen) == 0 && g->rels.v[i]->data)
            rels[n++] = g->rels.v[i];
    if (n == 0) {
        free(rels);
        return res_message("No relations matching prefix '%s'.", prefix);
    }
    qsort(rels, n, sizeof *rels, cmp_rel);
    il_buf list;
    il_buf_init(&list);
    size_t total = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t c = rel_count(rels[i]->data);
        if (!c) continue;
        il_buf_printf(&list, "%s%s (%zu)", k ? ", " : "", rels[i]->name, c);
        total += c;
        k++;
        kg_delta_note_all_deleted(g, rels[i]); /* the commit's delta */
        kg_rec_rel_clear(g, rels[i]->name);
        rel_clear(rels[i]->data);
    }
    il_result *r = res_message("Cleared %zu fact(s) from %u relation(s) with prefix '%s': %s",
                               total, k, prefix, il_buf_str(&list));
    il_buf_free(&list);
    free(rels);
    return r;
}

il_result *kg_exec_meta(il_session *s, const iql_meta *m, il_arena *a) {
    switch (m->kind) {
    case IQL_META_KG_SHOW:
    case IQL_META_KG_LIST:
    case IQL_META_KG_CREATE:
    case IQL_META_KG_USE:
    case IQL_META_KG_DROP:
    case IQL_META_KG_ACL_LIST:
    case IQL_META_KG_ACL_GRANT:
    case IQL_META_KG_ACL_REVOKE:
        return meta_kg(s, m);
    case IQL_META_REL_LIST:
        return meta_rel_list(s);
    case IQL_META_REL_SHOW:
        return meta_rel_show(s, m->arg, a);
    case IQL_META_REL_DROP: {
        /* what `.rel` lists: facts, or a schema declared before any fact */
        kg_relation *kr = kg_rel_find(s->kg, m->arg);
        if (!kr || (!kr->data && !kr->schema))
            return res_message("Error: Relation '%s' not found", m->arg);
        if (kr->data) {
            kg_delta_note_all_deleted(s->kg, kr); /* the commit's delta */
            kg_rel_drop_data(s->kg, kr);
        }
        kg_undo_schema(s->kg, kr, kr->schema);
        kr->schema = NULL;
        kg_rec_rel_drop(s->kg, m->arg);
        kg_change_note(s->e, IL_CHANGE_SCHEMA, s->kg->name, m->arg, "dropped");
        /* the relation goes with the rules that derive it */
        kg_rule *rule = kg_rule_find(s->kg, m->arg);
        if (rule) {
            kg_rule_drop(s->kg, rule);
            kg_rec_rule_drop(s->kg, m->arg);
            kg_change_note(s->e, IL_CHANGE_RULE, s->kg->name, m->arg, "dropped");
        }
        return res_message("Relation '%s' dropped.", m->arg);
    }
    case IQL_META_RULE_LIST:
    case IQL_META_RULE_SHOW:
    case IQL_META_RULE_DEF:
    case IQL_META_RULE_DROP:
    case IQL_META_RULE_DROP_PREFIX:
    case IQL_META_RULE_REMOVE:
    case IQL_META_RULE_CLEAR:
    case IQL_META_RULE_EDIT:
        return meta_rule(s, m, a);
    case IQL_META_SESSION_LIST:
    case IQL_META_SESSION_CLEAR:
    case IQL_META_SESSION_DROP_INDEX:
    case IQL_META_SESSION_DROP_NAME:
        return meta_session(s, m);
    case IQL_META_CLEAR_PREFIX:
        return meta_clear_prefix(s, m->arg);
    case IQL_META_COMPACT: {
        /* a checkpoint: the log it covers can go, and a restart reads the image */
        char *err = NULL;
        if (s->e->store && !store_checkpoint(s->e->store, &err)) {
            il_result *r = res_error("Compaction error: %s", err ? err : "checkpoint failed");
            free(err);
            return r;
        }
        return res_message("Compaction complete.");
    }
    case IQL_META_BACKUP:
    case IQL_META_BACKUP_STATUS: {
        /* an online export (src/store/backup.h): captured here, written in the background */
        return m->kind == IQL_META_BACKUP ? il_backup_start(s->e, m->arg) : il_backup_poll(s->e);
    }
    case IQL_META_STATUS: {
        il_result *r = res_message("Server Status");
        char line[128];
        res_add_line(r, "  Health: healthy");
        res_add_line(r, "  Version: " IL_ENGINE_VERSION);
        snprintf(line, sizeof line, "  Uptime: %lld seconds",
                 (long long)(time(NULL) - s->e->started));
        res_add_line(r, line);
        snprintf(line, sizeof line, "  Total queries: %llu",
                 (unsigned long long)__atomic_load_n(&s->e->queries, __ATOMIC_RELAXED));
        res_add_line(r, line);
        uint32_t ngraphs;
        free(kg_graph_names(s, &ngraphs)); /* on a pin, as of the pin */
        snprintf(line, sizeof line, "  Knowledge graphs: %u", ngraphs);
        res_add_line(r, line);
        return r;
    }
    case IQL_META_WHY:
    case IQL_META_WHY_FULL:
    case IQL_META_WHY_NOT: {
        il_intern_scope *previous = kg_strings_enter(s);
        il_result *r = m->kind == IQL_META_WHY_NOT ? kg_why_not(s, m, a)
                                                   : kg_why(s, m, a, m->kind == IQL_META_WHY_FULL);
        kg_strings_leave(s, previous);
        return r;
    }
    case IQL_META_DEBUG:
        return kg_debug(s, m, a);
    case IQL_META_INDEX_LIST:
    case IQL_META_INDEX_CREATE:
    case IQL_META_INDEX_DROP:
    case IQL_META_INDEX_STATS:
    case IQL_META_INDEX_REBUILD:
        return kg_index_meta(s, m);
    case IQL_META_HELP:
    case IQL_META_QUIT:
    case IQL_META_LOAD: {
        il_result *r = res_new(IL_RESULT_MESSAGE);
        r->cls = IL_STMT_CLIENT_ONLY;
        return r;
    }
    default:
        return res_error("This command is not available yet.");
    }
}
