/* The embedding API (include/inputlayer.h): engines, sessions, statement execution.
 * An engine opened on a data directory recovers its stored state from the log there
 * (src/store) before it is handed out. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/intern.h"
#include "iql/parser.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/backup.h"
#include "store/store.h"
#include "views/family.h"

il_engine *il_engine_open(const char *data_dir, char **err) {
    return il_engine_open_recover(data_dir, IL_RECOVER_STRICT, err);
}

il_engine *il_engine_open_recover(const char *data_dir, il_recover_mode mode, char **err) {
    if (err) *err = NULL;
    il_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->started = time(NULL);
    pthread_mutex_init(&e->pins_mu, NULL);
    il_engine_set_eval_threads(e, 0);
    e->families = view_families_new();
    kg_graph_create(e, "default");
    if (data_dir && *data_dir) {
        /* e->store stays NULL during recovery, so replaying logs nothing again */
        store *st = kg_store_open(e, data_dir, 0, mode == IL_RECOVER_SALVAGE, err);
        if (!st) {
            il_engine_close(e);
            return NULL;
        }
        e->store = st;
        /* vector indexes are definitions in the log; their graphs come from the facts */
        for (uint32_t i = 0; i < e->graphs.n; i++) kg_indexes_build(e->graphs.v[i]);
    }
    kg_graphs_relist(e);
    return e;
}

void il_engine_set_eval_threads(il_engine *e, unsigned n) {
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > IL_EVAL_THREADS_MAX ? IL_EVAL_THREADS_MAX : (unsigned)cpus;
    }
    e->eval_threads = n > IL_EVAL_THREADS_MAX ? IL_EVAL_THREADS_MAX : n;
}

unsigned il_engine_eval_threads(const il_engine *e) {
    return e->eval_threads;
}

bool il_engine_set_durability(il_engine *e, il_durability mode, unsigned batch_ms) {
    if (!e->store) return false;
    store_set_durability(e->store, mode, batch_ms);
    return true;
}

bool il_engine_set_checkpoint_bytes(il_engine *e, uint64_t bytes) {
    if (!e->store) return false;
    store_set_checkpoint_bytes(e->store, bytes);
    return true;
}

bool il_engine_set_log_segment_bytes(il_engine *e, uint64_t bytes) {
    if (!e->store) return false;
    store_set_segment_bytes(e->store, bytes);
    return true;
}

bool il_engine_set_backup(il_engine *e, const char *dir, il_backup_capture_fn capture, void *ctx) {
    if (!e->store) return false;
    store_set_backup(e->store, dir, capture, ctx);
    return true;
}

/* The result of `.backup` and `.backup status` (meta.c runs them through these). */
static il_result *backup_result(store_backup_reply *rep) {
    il_result *r =
        rep->ok ? res_message("%s", rep->lines[0]) : res_error("Backup error: %s", rep->lines[0]);
    if (rep->ok && rep->lines[1]) res_add_line(r, rep->lines[1]);
    store_backup_reply_free(rep);
    return r;
}

il_result *il_backup_start(il_engine *e, const char *name) {
    store_backup_reply rep;
    store_backup_start(e->store, name, &rep);
    return backup_result(&rep);
}

il_result *il_backup_poll(il_engine *e) {
    store_backup_reply rep;
    store_backup_status(e->store, &rep);
    return backup_result(&rep);
}

bool il_backup_make_dirs(const char *path) {
    return backup_make_dirs(path, NULL);
}

bool il_engine_sync(il_engine *e, char **err) {
    if (err) *err = NULL;
    return !e->store || store_sync(e->store, err);
}

const char *il_engine_storage_problem(il_engine *e) {
    return e->store ? store_problem(e->store) : NULL;
}

bool il_engine_set_group_commit(il_engine *e, bool on) {
    if (!e->store) return false;
    store_set_group_commit(e->store, on);
    return true;
}

uint64_t il_engine_log_written(il_engine *e) {
    return e->store ? store_written_lsn(e->store) : 0;
}

uint64_t il_engine_log_durable(il_engine *e) {
    return e->store ? store_durable_lsn(e->store) : 0;
}

uint64_t il_engine_log_syncs(il_engine *e) {
    return e->store ? store_syncs(e->store) : 0;
}

void il_engine_close(il_engine *e) {
    if (!e) return;
    view_families_free(e->families); /* their views, before the graphs they read */
    while (e->sessions.n) il_session_close(e->sessions.v[e->sessions.n - 1]);
    kg_pins_collect(e);
    while (e->graphs.n) kg_graph_drop(e, e->graphs.v[e->graphs.n - 1]);
    il_vec_free(e->graphs);
    kg_graphs_unlist(e);
    il_vec_free(e->sessions);
    kg_changes_end(e, false);
    il_vec_free(e->changes);
    store_close(e->store);
    kg_rec_free(e);
    kg_delta_free(e);
    il_vec_free(e->pins);
    pthread_mutex_destroy(&e->pins_mu);
    free(e);
}

il_session *il_session_open(il_engine *e) {
    il_session *s = calloc(1, sizeof *s);
    s->e = e;
    s->kg = kg_graph_find(e, "default");
    il_arena_init(&s->rules_arena);
    il_vec_push(e->sessions, s);
    return s;
}

void il_session_close(il_session *s) {
    if (!s) return;
    il_engine *e = s->e;
    il_session_unpin(s); /* a pinned reader's caller may close it before unpinning */
    kg_pins_collect(e);  /* what the unpin left of s goes before s */
    il_txn_rollback(s);  /* a transaction left open commits nothing */
    for (uint32_t i = 0; i < e->sessions.n; i++) {
        if (e->sessions.v[i] != s) continue;
        e->sessions.v[i] = e->sessions.v[--e->sessions.n];
        break;
    }
    sess_clear(s, NULL, NULL);
    il_arena_destroy(&s->rules_arena);
    free(s);
}

const char *il_session_graph(const il_session *s) {
    /* while pinned, the pinned copy's: the same name, and one that no writer changes; read
       by other threads where statements are serialized while an unpin swaps it (pin.c) */
    return __atomic_load_n(&s->kg, __ATOMIC_ACQUIRE)->name;
}

bool il_engine_has_graph(il_engine *e, const char *name) {
    return kg_graph_find(e, name) != NULL;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t il_engine_graphs(il_engine *e, il_name_fn fn, void *ctx) {
    uint32_t n = e->graphs.n;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    for (uint32_t i = 0; i < n; i++) names[i] = e->graphs.v[i]->name;
    qsort(names, n, sizeof *names, cmp_names);
    for (uint32_t i = 0; fn && i < n; i++) fn(ctx, names[i]);
    free(names);
    return n;
}

bool kg_stmt_reads_only(const iql_stmt *st) {
    if (st->kind == IQL_STMT_QUERY) return true;
    if (st->kind != IQL_STMT_META) return false;
    switch (st->u.meta.kind) {
    case IQL_META_WHY:
    case IQL_META_WHY_FULL:
    case IQL_META_WHY_NOT:
    /* listings of the session's own graph (a pin's copy has its catalog) and session,
       and of the engine's graphs (a pin holds their list as of the pin) */
    case IQL_META_KG_SHOW:
    case IQL_META_KG_LIST:
    case IQL_META_STATUS:
    case IQL_META_REL_LIST:
    case IQL_META_REL_SHOW:
    case IQL_META_RULE_LIST:
    case IQL_META_RULE_SHOW:
    case IQL_META_RULE_DEF:
    case IQL_META_SESSION_LIST:
        return true;
    default:
        return false;
    }
}

/* One statement under the session's guard; `stored`: a query over stored state only,
 * cut to max_rows (il_query_stored). `pre`: the statement already parsed (a prepared
 * one), or `pre_err`: why it did not parse; neither: it is parsed here. */
static il_result *statement(il_session *s, const char *text, size_t len, const iql_stmt *pre,
                            const char *pre_err, uint64_t pre_ns, bool stored, size_t max_rows) {
    exec_guard guard;
    if (!s->pinned_live) kg_pins_collect(s->e); /* a pinned session's runs beside others */
    kg_guard_begin(s, &guard);
    il_result *r = NULL;
    /* The strings only a query makes (its constants, compiled from the text, and what its
       functions compute) are held by its result and freed with it; any other statement
       interns for good. */
    il_intern_scope *strings = NULL;
    /* a few clock reads per statement: its start, the end of parsing, its end (and
       kg_query_rows's two around each evaluation) */
    uint64_t t0 = exec_clock_ns(), t1 = t0;
    s->eval_ns = s->prove_ns = 0;
    /* cancelled or out of time before it started (say, while it waited its turn): it
       never runs */
    if (!exec_guard_check(&guard)) {
        /* a statement's temporaries are few and small, mostly */
        _Alignas(16) char first[1024];
        il_arena a;
        il_arena_init_with(&a, first, sizeof first);
        iql_stmt parsed;
        const char *err = pre_err;
        const iql_stmt *st = pre;
        if (!st && !err && iql_parse(&a, text, len, &parsed, &err)) st = &parsed;
        t1 = exec_clock_ns();
        if (!st)
            r = res_parse_error(err ? err : "Parse error");
        else {
            /* their strings can die with their result (a rule a query makes maintained
               is built outside the query's scope) */
            bool reads = kg_stmt_reads_only(st);
            if (reads) strings = il_intern_scope_new();
            /* readers that cannot wait for this write read the revision before it */
            if (!reads && !s->pinned_live) kg_publish(s);
            s->text = text;
            s->text_len = len;
            s->strings = strings;
            /* On a pin, what the statement evaluates (a query, a view it makes, the proofs
               of an explanation, a listing's rows) reads private copies of the snapshots
               that lack an index it needs. */
            kg_graph *g = s->kg;
            kg_pin_enter(g);
            r = stored ? kg_exec_stored_query(s, st, max_rows) : kg_exec_stmt(s, st, &a);
            kg_pin_leave(g);
            s->strings = NULL;
            s->text = NULL;
            /* Inside a transaction the revision before it stays published until it
               ends (txn.c): its statements so far are nobody's to read. (The commit
               path withdrew it already; a write that did not get there did too.) */
            if (!reads && !s->pinned_live && !s->e->txn) kg_unpublish_written(s->e, g);
        }
        il_arena_destroy(&a);
    }
    r = kg_guard_end(s, &guard, r);
    r->strings = strings;
    uint64_t t2 = exec_clock_ns();
    /* a prepared statement's parse is counted as if it had been parsed here */
    r->timing.total_ns = t2 - t0 + pre_ns;
    r->timing.parse_ns = t1 - t0 + pre_ns;
    uint64_t rest = t2 - t1;
    r->timing.eval_ns = s->eval_ns < rest ? s->eval_ns : rest;
    rest -= r->timing.eval_ns;
    r->timing.prove_ns = s->prove_ns < rest ? s->prove_ns : rest;
    r->timing.other_ns = rest - r->timing.prove_ns;
    return r;
}

il_result *il_execute(il_session *s, const char *text, size_t len) {
    return statement(s, text, len, NULL, NULL, 0, false, 0);
}

il_result *il_session_use(il_session *s, const char *graph) {
    /* `.kg use <graph>` as the parser would make it, so that nothing is parsed */
    iql_stmt st;
    memset(&st, 0, sizeof st);
    st.kind = IQL_STMT_META;
    st.u.meta.kind = IQL_META_KG_USE;
    st.u.meta.arg = graph;
    il_buf text;
    il_buf_init(&text);
    il_buf_printf(&text, ".kg use %s", graph);
    il_result *r = statement(s, il_buf_str(&text), text.len, &st, NULL, 0, false, 0);
    il_buf_free(&text);
    return r;
}

il_result *kg_execute_parsed(il_session *s, const char *text, size_t len, const iql_stmt *st,
                             const char *err, uint64_t parse_ns, bool stored, size_t max_rows) {
    return statement(s, text, len, st, err, parse_ns, stored,
                     stored && !max_rows ? SIZE_MAX : max_rows);
}

il_result *il_query_stored(il_session *s, const char *text, size_t len, size_t max_rows) {
    return statement(s, text, len, NULL, NULL, 0, true, max_rows ? max_rows : SIZE_MAX);
}
