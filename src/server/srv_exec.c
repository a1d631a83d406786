/* Running a request's program on the compute pool (or inline for a cheap read), with the
 * engine lock held: the credential and every statement are checked first, then each
 * statement runs under the request's guards (cancel, deadline, memory), and the reply is
 * built: one result, a streamed result, or an error. Frames go to the request's capture;
 * the pipeline sends them in order. Also opens the session after authentication. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strcopy.h"
#include "base/phase.h"
#include "server/server.h"
#include "server/srv_admin.h"
#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_exec.h"
#include "server/srv_pipeline.h"
#include "server/srv_read.h"
#include "server/srv_revision.h"
#include "server/srv_rows.h"
#include "server/srv_subgroup.h"
#include "server/srv_subs.h"

/* ---- replies ---- */

typedef struct reply {
    const il_result *table; /* a TABLE result, or NULL for message lines */
    const char **lines;
    size_t nlines;
    /* A table built by the server (.user list ...): column names and JSON rows. */
    const char *const *cols;
    size_t ncols;
    char *const *rows;
    size_t nrows;
    il_buf errors; /* StatementError objects, comma-separated */
    il_buf ext;    /* extra fields, each starting with ',' */
    uint64_t ms;
} reply;

static void reply_init(reply *r) {
    memset(r, 0, sizeof *r);
    il_buf_init(&r->errors);
    il_buf_init(&r->ext);
}

static void reply_free(reply *r) {
    il_buf_free(&r->errors);
    il_buf_free(&r->ext);
}

/* Rows the result has (a table may be cut to max_result_rows when sent). */
static size_t reply_nrows(const reply *r) {
    return r->cols ? r->nrows : r->table ? il_result_nrows(r->table) : r->nlines;
}

static void write_columns(il_buf *b, const reply *r) {
    if (r->table && !r->cols) {
        srv_rows_table_columns(b, r->table);
        return;
    }
    size_t n = r->cols ? r->ncols : 1;
    il_buf_puts(b, ",\"columns\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) il_buf_putc(b, ',');
        const char *name = r->cols ? r->cols[i] : "message";
        il_json_str(b, name, strlen(name));
    }
    il_buf_putc(b, ']');
}

/* An srv_row_fn over a reply that is not an engine table (srv_rows_encode_table writes
 * those). */
static void write_row(il_buf *b, const void *src, size_t i) {
    const reply *r = src;
    if (r->cols) {
        il_buf_puts(b, r->rows[i]);
    } else {
        il_buf_putc(b, '[');
        il_json_str(b, r->lines[i], strlen(r->lines[i]));
        il_buf_putc(b, ']');
    }
}

/* `row_provenance` of rows [from, to): "unknown" but for a query's table on a session
 * with facts or rules of its own (il_result_row_provenance). */
static void write_provenance(il_buf *b, const reply *r, size_t from, size_t to) {
    if (to == from) return;
    const il_result *t = r->table && !r->cols && il_result_metadata(r->table) ? r->table : NULL;
    il_buf_puts(b, ",\"row_provenance\":[");
    if (!t) {
        /* every row "unknown": as many bytes as the rows themselves, written in one go */
        static const char UNKNOWN[] = ",\"unknown\"";
        size_t each = sizeof UNKNOWN - 1, n = to - from;
        il_buf_reserve(b, n * each + 1);
        char *p = b->data + b->len;
        memcpy(p, UNKNOWN + 1, each - 1);
        p += each - 1;
        for (size_t i = 1; i < n; i++, p += each) memcpy(p, UNKNOWN, each);
        *p++ = ']';
        *p = 0;
        b->len = (size_t)(p - b->data);
        return;
    }
    for (size_t i = from; i < to; i++) {
        if (i > from) il_buf_putc(b, ',');
        il_buf_putc(b, '"');
        il_buf_puts(b, t ? il_result_row_provenance(t, i) : "unknown");
        il_buf_putc(b, '"');
    }
    il_buf_putc(b, ']');
}

/* A string literal, its length known when compiled. */
#define PUT_LIT(b, lit) il_buf_put((b), (lit), sizeof(lit) - 1)

static void timing_stage(il_buf *b, const char *name, size_t len, uint64_t ns, bool first) {
    if (first)
        PUT_LIT(b, "{\"rule_head\":\"");
    else
        PUT_LIT(b, ",{\"rule_head\":\"");
    il_buf_put(b, name, len);
    PUT_LIT(b, "\",\"execution_us\":");
    il_buf_put_u64(b, ns / 1000);
    PUT_LIT(b, ",\"is_recursive\":false,\"workers\":1}");
}

/* `timing_breakdown` (protocol-later.md 1.13) of a query's result: the stages the
 * original names that this engine does not have are 0; its own (parsing aside) are named
 * entries of `rules`, `prove` only for `.why` and `.why_not`. Written without printf or
 * strlen: it goes on every query's reply, and formatting was most of its cost on
 * `cheap_query`. */
static void write_timing(il_buf *b, const il_result *r, uint64_t encode_ns) {
    il_timing t = il_result_timing(r);
    PUT_LIT(b, ",\"timing_breakdown\":{\"total_us\":");
    il_buf_put_u64(b, (t.total_ns + encode_ns) / 1000);
    PUT_LIT(b, ",\"parse_us\":");
    il_buf_put_u64(b, t.parse_ns / 1000);
    PUT_LIT(b, ",\"sip_us\":0,\"magic_sets_us\":0,\"ir_build_us\":0,\"optimize_us\":0,"
               "\"shared_views_us\":0,\"rules\":[");
    timing_stage(b, "plan", 4, t.other_ns, true);
    timing_stage(b, "evaluate", 8, t.eval_ns, false);
    if (il_result_proof_trees(r)) timing_stage(b, "prove", 5, t.prove_ns, false);
    timing_stage(b, "encode", 6, encode_ns, false);
    PUT_LIT(b, "]}");
}

/* Whether a reply carries timing_breakdown: a query's table (`.why` and `.why_not`
 * included), unless storage.performance.timing_mode is off. */
static bool wants_timing(const srv_conn *c, const reply *r) {
    if (!r->table || r->cols || strcmp(c->srv->cfg->timing_mode, "off") == 0) return false;
    return il_result_stmt_class(r->table) == IL_STMT_QUERY || il_result_proof_trees(r->table);
}

static void send_buf(srv_conn *c, il_buf *b) {
    srv_ws_send(c, b->data, b->len);
    il_buf_clear(b);
}

/* Sends a result as one frame, or as result_start/chunk/end when over 1 MiB. A query
 * table over max_result_rows (or the engine's 100000) is cut there and flagged truncated,
 * with total_count the rows it had (the original cut silently, with truncated:false:
 * BUG). */
static void send_reply(srv_conn *c, const char *id, reply *r) {
    size_t nrows = reply_nrows(r);
    size_t total = r->table && !r->cols ? il_result_total_rows(r->table) : nrows;
    int64_t cap = c->srv->cfg->max_result_rows;
    if (r->table && cap > 0 && nrows > (uint64_t)cap) nrows = (size_t)cap;
    const char *truncated = nrows < total ? "true" : "false";
    srv_rows rows;
    char msg[128];
    bool timing = wants_timing(c, r);
    uint64_t encode_ns = timing ? srv_mono_ns() : 0;
    bool encoded = r->table && !r->cols
                       ? srv_rows_encode_table(&rows, r->table, nrows, msg, sizeof msg)
                       : srv_rows_encode(&rows, write_row, r, nrows, msg, sizeof msg);
    if (!encoded) {
        srv_send_error(c, id, "internal", msg);
        return;
    }
    if (timing) encode_ns = srv_mono_ns() - encode_ns;
    il_buf b;
    il_buf_init(&b);
    if (rows.json.len + nrows * 12 + 4096 <= SRV_STREAM_THRESHOLD) {
        /* the whole reply at once: growing it field by field was a third of the cost of
           writing a small one (callgrind, `?edge(1, Y)`) */
        il_buf_reserve(&b, rows.json.len + nrows * 12 + r->ext.len + r->errors.len + 1024);
        srv_json_open(&b, "result", id);
        write_columns(&b, r);
        il_buf_puts(&b, ",\"rows\":");
        srv_rows_put(&b, &rows, 0, nrows);
        il_buf_puts(&b, ",\"row_count\":");
        il_buf_put_u64(&b, nrows);
        il_buf_puts(&b, ",\"total_count\":");
        il_buf_put_u64(&b, total);
        il_buf_puts(&b, ",\"truncated\":");
        il_buf_puts(&b, truncated);
        il_buf_puts(&b, ",\"execution_time_ms\":");
        il_buf_put_u64(&b, (unsigned long long)r->ms);
        il_buf_puts(&b, ",\"errors\":[");
        il_buf_put(&b, r->errors.data, r->errors.len);
        il_buf_putc(&b, ']');
        write_provenance(&b, r, 0, nrows);
        il_buf_put(&b, r->ext.data, r->ext.len);
        if (timing) write_timing(&b, r->table, encode_ns);
        il_buf_putc(&b, '}');
        send_buf(c, &b);
    } else {
        srv_json_open(&b, "result_start", id);
        write_columns(&b, r);
        il_buf_printf(&b,
                      ",\"total_count\":%zu,\"truncated\":%s,\"execution_time_ms\":%llu,"
                      "\"errors\":[",
                      total, truncated, (unsigned long long)r->ms);
        il_buf_put(&b, r->errors.data, r->errors.len);
        il_buf_putc(&b, ']');
        il_buf_put(&b, r->ext.data, r->ext.len);
        if (timing) write_timing(&b, r->table, encode_ns);
        il_buf_putc(&b, '}');
        send_buf(c, &b);
        size_t chunk = 0;
        for (size_t i = 0, j; i < nrows; i = j) {
            j = srv_rows_chunk_end(&rows, i);
            srv_json_open(&b, "result_chunk", id);
            il_buf_puts(&b, ",\"rows\":");
            srv_rows_put(&b, &rows, i, j);
            il_buf_printf(&b, ",\"chunk_index\":%zu", chunk++);
            write_provenance(&b, r, i, j);
            il_buf_putc(&b, '}');
            send_buf(c, &b);
        }
        srv_json_open(&b, "result_end", id);
        il_buf_printf(&b, ",\"row_count\":%zu,\"chunk_count\":%zu}", nrows, chunk);
        send_buf(c, &b);
    }
    il_buf_free(&b);
    srv_rows_free(&rows);
}

/* `proof_trees` of a `.why` result (docs/server.md, "Proof trees"), and `metadata` of a
 * query on a session with facts or rules of its own. */
static void put_proof_trees(il_buf *ext, const il_result *r) {
    const char *meta = il_result_metadata(r);
    if (meta) {
        il_buf_puts(ext, ",\"metadata\":");
        il_buf_puts(ext, meta);
    }
    const char *trees = il_result_proof_trees(r);
    if (!trees) return;
    il_buf_puts(ext, ",\"proof_trees\":");
    il_buf_puts(ext, trees);
}

/* ---- execution ---- */

static const char *class_name(il_stmt_class k) {
    switch (k) {
    case IL_STMT_QUERY:
        return "query";
    case IL_STMT_SESSION_RULE:
        return "session_rule";
    case IL_STMT_SESSION_FACT:
        return "session_fact";
    case IL_STMT_KG_SWITCH:
        return "kg_switch";
    case IL_STMT_SESSION_CLEAR:
        return "session_clear";
    case IL_STMT_REL_SHOW:
        return "rel_show";
    case IL_STMT_CLIENT_ONLY:
        return "client_only";
    case IL_STMT_OTHER:
        break;
    }
    return NULL;
}

const char *srv_exec_error_code(const char *msg) {
    if (strncmp(msg, "Access denied", 13) == 0 || strncmp(msg, "Permission denied", 17) == 0)
        return "access_denied";
    if (strstr(msg, "not found") || strstr(msg, "does not exist")) return "not_found";
    if (strstr(msg, "already exists")) return "conflict";
    if (strncmp(msg, "Storage full", 12) == 0) return "storage_full";
    if (strncmp(msg, "Storage error", 13) == 0) return "internal";
    return "validation";
}

static char *joined_lines(const il_result *r) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < il_result_nlines(r); i++) {
        if (i) il_buf_putc(&b, '\n');
        il_buf_puts(&b, il_result_line(r, i));
    }
    if (!b.data) il_buf_puts(&b, "");
    return il_buf_take(&b);
}

static const char *stop_code(il_stop why) {
    switch (why) {
    case IL_STOP_CANCELLED:
        return "cancelled";
    case IL_STOP_DEADLINE:
        return "deadline_exceeded";
    case IL_STOP_MEMORY:
    case IL_STOP_BUDGET:
        return "resource_exhausted";
    case IL_STOP_SNAPSHOT_TOO_OLD:
        return "snapshot_too_old";
    case IL_STOP_NONE:
        break;
    }
    return "internal";
}

/* Ends the request with one error frame in place of whatever it produced. */
static void stop_request(srv_req *rq, const char *code, const char *msg) {
    rq->stopped = true;
    il_buf_clear(&rq->out.frames);
    srv_send_error(rq->conn, rq->has_id ? rq->id : NULL, code, msg);
}

/* Where a statement's first word starts (after its leading blanks). */
static const char *stmt_start(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static bool is_fact_write(const char *p, size_t k);

static bool is_query(const srv_stmt *st) {
    const char *p = stmt_start(st->text, st->text + st->len);
    return p < st->text + st->len && *p == '?';
}

/* The threads a statement's evaluation may share big recursion out to: on a worker, its
 * own and one per permit nobody else holds or waits for (so a query alone uses the idle
 * cores, and one among others takes no core from them), at most eval_threads; on the
 * I/O thread (inline), that thread alone. */
static unsigned eval_threads(srv_server *s, const srv_req *rq) {
    if (rq->inline_budget_ns) return 1;
    unsigned most = il_engine_eval_threads(s->engine);
    if (most <= 1) return 1;
    unsigned spare = srv_pool_spare_permits(&s->pool, (srv_lane_id)rq->job.node.lane);
    return 1 + spare < most ? 1 + spare : most;
}

il_result *srv_exec_guarded(srv_req *rq, const il_prepared *p, size_t i, bool stored) {
    srv_conn *c = rq->conn;
    srv_server *s = c->srv;
    int commit = __atomic_load_n(&rq->commit, __ATOMIC_SEQ_CST);
    if (commit == SRV_COMMIT_CANCELLED) {
        stop_request(rq, "cancelled", il_stop_message(IL_STOP_CANCELLED));
        return NULL;
    }
    uint64_t now = srv_mono_ns();
    if (commit == SRV_COMMIT_NOT_YET && rq->deadline_ns && now >= rq->deadline_ns) {
        srv_count(s->counters.deadline_exceeded);
        stop_request(rq, "deadline_exceeded", il_stop_message(IL_STOP_DEADLINE));
        return NULL;
    }
    il_limits lim = {
        .cancel = &rq->stop,
        .deadline_ns = rq->deadline_ns,
        .max_memory_bytes = (uint64_t)s->cfg->max_query_memory_bytes,
        .budget = s->query_budget,
    };
    if (rq->inline_budget_ns && (!lim.deadline_ns || rq->inline_budget_ns < lim.deadline_ns))
        lim.deadline_ns = rq->inline_budget_ns;
    lim.threads = eval_threads(s, rq);
    il_session_set_limits(c->session, &lim);
    int64_t cap = s->cfg->max_result_rows;
    il_phase_mark(IL_PHASE_PREPARE);
    il_result *r = stored ? il_query_stored_prepared(c->session, p, i, cap > 0 ? (size_t)cap : 0)
                          : il_execute_prepared(c->session, p, i);
    il_phase_mark(IL_PHASE_STATEMENT);
    il_session_set_limits(c->session, NULL);
    if (il_result_peak_bytes(r) > rq->peak_bytes) rq->peak_bytes = il_result_peak_bytes(r);
    il_stop why = il_result_stop(r);
    if (why != IL_STOP_NONE) {
        bool spill = why == IL_STOP_DEADLINE && rq->inline_budget_ns &&
                     (!rq->deadline_ns || srv_mono_ns() < rq->deadline_ns);
        if (spill) {
            rq->inline_spilled = rq->stopped = true;
        } else {
            if (why == IL_STOP_DEADLINE) srv_count(s->counters.deadline_exceeded);
            if (why == IL_STOP_MEMORY || why == IL_STOP_BUDGET)
                srv_count(s->counters.memory_refused);
            if (why == IL_STOP_SNAPSHOT_TOO_OLD) srv_count(s->counters.snapshot_too_old);
            stop_request(rq, stop_code(why), il_result_nlines(r) ? il_result_line(r, 0) : "");
        }
        il_result_free(r);
        return NULL;
    }
    if (il_result_threads(r) > 1) srv_count(s->counters.statements_threaded);
    if (il_result_kind_of(r) == IL_RESULT_TABLE && il_result_nrows(r) > SRV_INLINE_MAX_ROWS)
        rq->many_rows = true;
    if (rq->inline_budget_ns && rq->many_rows) {
        /* Encoding and sending that many rows would hold the I/O thread as long again as
           the evaluation it was allowed: the table is built again on the pool. */
        rq->inline_spilled = rq->stopped = true;
        il_result_free(r);
        return NULL;
    }
    __atomic_fetch_add(&s->query_count, 1, __ATOMIC_RELAXED);
    return r;
}

/* Whether running the statement begins committing: whether it changes stored facts,
 * schemas or persistent rules, or is a meta command. Queries and the session's own
 * facts, rules and schemas change nothing stored, so a cancel can still stop them. */
static bool begins_committing(const srv_stmt *st) {
    if (is_query(st)) return false;
    return il_prepared_txn_part(st->prep, st->index) != IL_TXN_READS;
}

/* From here the request completes: a cancel is too late. False when a cancel came first
 * (srv_exec_run then answers `cancelled`). */
static bool begin_commit(srv_req *rq) {
    int expected = SRV_COMMIT_NOT_YET;
    return __atomic_compare_exchange_n(&rq->commit, &expected, SRV_COMMIT_BEGUN, false,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ||
           expected == SRV_COMMIT_BEGUN;
}

/* Runs one statement of the program under the request's guards (srv_exec_guarded). In a
 * transaction nothing commits before the transaction does; otherwise, from the first
 * statement that begins committing, a cancel is too late. */
static il_result *run(srv_req *rq, const srv_stmt *st, bool in_txn) {
    srv_conn *c = rq->conn;
    if (!in_txn && begins_committing(st)) begin_commit(rq);
    il_result *r = srv_exec_guarded(rq, st->prep, st->index, false);
    if (!r) return NULL;
    il_stmt_class k = il_result_stmt_class(r);
    bool was = c->dirty;
    if ((k == IL_STMT_SESSION_RULE || k == IL_STMT_SESSION_FACT) &&
        il_result_kind_of(r) == IL_RESULT_MESSAGE)
        c->dirty = true;
    else if (k == IL_STMT_SESSION_CLEAR || k == IL_STMT_KG_SWITCH)
        c->dirty = false;
    if (was != c->dirty)
        __atomic_fetch_add(&c->srv->ndirty, c->dirty ? 1u : (unsigned)-1, __ATOMIC_RELAXED);
    return r;
}

static void save_identities(srv_server *s) {
    char err[512];
    if (!srv_users_save(&s->users, err, sizeof err)) fprintf(stderr, "ERROR: %s\n", err);
}

/* What a successful statement did to the ACLs: a non-admin creator of a graph becomes its
 * owner; a dropped graph's entries go. (The engine moves sessions off a dropped graph;
 * the server reads each session's graph from the engine, so it mirrors nothing.) */
static void after_stmt(srv_conn *c, const srv_stmt *st, const il_result *r) {
    il_result_kind kind = il_result_kind_of(r);
    if (st->effect == SRV_FX_NONE || (kind != IL_RESULT_MESSAGE && kind != IL_RESULT_TABLE)) return;
    srv_server *s = c->srv;
    if (st->effect == SRV_FX_DROP || st->effect == SRV_FX_CREATE) srv_count_graphs(s);
    pthread_mutex_lock(&s->users_lock);
    if (st->effect == SRV_FX_DROP) {
        size_t before = s->users.nacls;
        srv_users_drop_kg(&s->users, st->effect_kg);
        if (s->users.nacls != before) save_identities(s);
    } else if (st->effect == SRV_FX_CREATE && il_result_stmt_class(r) == IL_STMT_KG_SWITCH) {
        srv_user *u = srv_users_find(&s->users, c->user);
        /* A name the store could not read back (control characters) gets no entry. */
        if (u && u->role != SRV_ROLE_ADMIN && srv_name_ok(st->effect_kg, SRV_KG_NAME_MAX)) {
            srv_users_grant(&s->users, st->effect_kg, u->name, SRV_KG_OWNER);
            save_identities(s);
        }
    }
    pthread_mutex_unlock(&s->users_lock);
}

/* `switched_kg`: the session's graph after a `.kg use` or `.kg create` that switched, so
 * that clients follow it (protocol.md, "result"). */
static void put_switched_kg(il_buf *ext, srv_conn *c) {
    const char *kg = il_session_graph(c->session);
    il_buf_puts(ext, ",\"switched_kg\":");
    il_json_str(ext, kg, strlen(kg));
}

static void send_parse_error(srv_conn *c, const char *id, const char *text, const char *cls) {
    il_buf f;
    il_buf_init(&f);
    il_buf_puts(&f, ",\"validation_errors\":[{\"line\":1,\"statement_index\":0,\"error\":");
    il_json_str(&f, text, strlen(text));
    il_buf_puts(&f, "}]");
    if (cls) il_buf_printf(&f, ",\"statement_class\":\"%s\"", cls);
    srv_send_error_fields(c, id, "validation", "Program has 1 parse error(s)", f.data);
    il_buf_free(&f);
}

/* Appends r's lines to lines (room for all of them) at *n. The engine lists every graph
 * for `.kg list`; a non-admin's (srv_stmt.filter_graphs) names only the graphs it may open
 * and its session's: each graph is a line "  <name>", the session's "  <name> *", sorted,
 * so the first line that reads as the session's is it, whatever the other names hold. */
static void put_lines(srv_conn *c, const srv_stmt *st, const il_result *r, const char **lines,
                      size_t *n) {
    size_t k = il_result_nlines(r);
    if (!st->filter_graphs || il_result_kind_of(r) != IL_RESULT_MESSAGE) {
        for (size_t i = 0; i < k; i++) lines[(*n)++] = il_result_line(r, i);
        return;
    }
    const char *current = il_session_graph(c->session);
    size_t clen = strlen(current);
    bool current_seen = false;
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *me = srv_users_find(&s->users, c->user);
    for (size_t i = 0; i < k; i++) {
        const char *line = il_result_line(r, i);
        if (strncmp(line, "  ", 2) != 0) { /* the heading */
            lines[(*n)++] = line;
            continue;
        }
        const char *name = line + 2;
        size_t len = strlen(name);
        if (!current_seen && len == clen + 2 && memcmp(name, current, clen) == 0 &&
            memcmp(name + clen, " *", 2) == 0) {
            current_seen = true;
            lines[(*n)++] = line;
        } else if (me && srv_authz_session(&s->users, me, name)) {
            lines[(*n)++] = line;
        }
    }
    pthread_mutex_unlock(&s->users_lock);
}

static void execute_one(srv_req *rq, const srv_stmt *st, uint64_t t0) {
    srv_conn *c = rq->conn;
    const char *id = rq->has_id ? rq->id : NULL;
    if (st->unterminated) {
        send_parse_error(c, id, "unterminated statement (unbalanced delimiters)", NULL);
        return;
    }
    uint64_t writes_before = rq->job.pinned ? 0 : c->srv->revision_stmt;
    il_result *r = run(rq, st, false);
    if (!r) return;
    after_stmt(c, st, r);
    il_stmt_class k = il_result_stmt_class(r);
    const char *cls = class_name(k);
    il_result_kind kind = il_result_kind_of(r);
    if (kind == IL_RESULT_PARSE_ERROR || kind == IL_RESULT_ERROR) {
        char *msg = joined_lines(r);
        if (kind == IL_RESULT_PARSE_ERROR) {
            send_parse_error(c, id, msg, cls);
        } else {
            char fields[64] = "";
            if (cls) snprintf(fields, sizeof fields, ",\"statement_class\":\"%s\"", cls);
            srv_send_error_fields(c, id, srv_exec_error_code(msg), msg, fields);
        }
        free(msg);
        il_result_free(r);
        return;
    }
    reply rp;
    reply_init(&rp);
    const char **lines = NULL;
    if (kind == IL_RESULT_TABLE) {
        rp.table = r;
    } else {
        lines = malloc((il_result_nlines(r) + 1) * sizeof *lines);
        put_lines(c, st, r, lines, &rp.nlines);
        rp.lines = lines;
    }
    /* Which kind of reply this is: a table whose one column is named `message` is not
     * a message. */
    il_buf_puts(&rp.ext, rp.table ? ",\"result_kind\":\"table\"" : ",\"result_kind\":\"message\"");
    if (cls) {
        il_buf_puts(&rp.ext, ",\"statement_class\":\"");
        il_buf_puts(&rp.ext, cls);
        il_buf_putc(&rp.ext, '"');
    }
    if (k == IL_STMT_SESSION_RULE && kind == IL_RESULT_MESSAGE) {
        uint32_t arity = 0;
        const char *head = il_result_rule_head(r, &arity);
        il_buf_puts(&rp.ext, ",\"rule_head\":");
        il_json_str(&rp.ext, head, strlen(head));
        il_buf_printf(&rp.ext, ",\"rule_arity\":%u", arity);
    }
    if (k == IL_STMT_KG_SWITCH) put_switched_kg(&rp.ext, c);
    put_proof_trees(&rp.ext, r);
    if (k == IL_STMT_REL_SHOW && il_result_title(r)) {
        il_buf_puts(&rp.ext, ",\"title\":");
        il_json_str(&rp.ext, il_result_title(r), strlen(il_result_title(r)));
    }
    if (!rq->job.pinned) srv_revision_put_if_changed(c->srv, writes_before, &rp.ext);
    rp.ms = srv_now_ms() - t0;
    send_reply(c, id, &rp);
    reply_free(&rp);
    free(lines);
    il_result_free(r);
}

/* Checks a statement again against the session's actual knowledge graph when an earlier
 * `.kg use` of the program failed and the graph is not the one the first check assumed. */
static const char *recheck(srv_conn *c, const char *user, srv_stmt *st) {
    const char *kg = il_session_graph(c->session);
    if (strcmp(st->checked_kg, kg) == 0) return NULL;
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *me = srv_users_find(&s->users, user);
    if (me && me->role != SRV_ROLE_ADMIN) {
        srv_authz_state as;
        memset(&as, 0, sizeof as);
        il_str_copy(as.kg, sizeof as.kg, kg);
        srv_authz_stmt(&s->users, me, &as, st);
    }
    pthread_mutex_unlock(&s->users_lock);
    return st->denied;
}

/* The session has session facts or rules again as before the program (metrics). */
static void restore_dirty(srv_conn *c, bool was) {
    if (c->dirty == was) return;
    c->dirty = was;
    __atomic_fetch_add(&c->srv->ndirty, was ? 1u : (unsigned)-1, __ATOMIC_RELAXED);
}

/* A program of several statements that writes nothing stored: each runs in order and
 * failures do not stop it. The last query's table is the reply, else every statement's
 * message lines; failed statements add an `Error: ...` line and an errors[] entry. When
 * every statement can join a transaction (`undoable`: no meta command) the program runs
 * in one, so that a stop (cancel, deadline, memory) also takes back what it added to the
 * session: the stop's error says nothing was applied. */
static void execute_many(srv_req *rq, srv_stmt *sts, size_t n, bool undoable, uint64_t t0) {
    srv_conn *c = rq->conn;
    const char *id = rq->has_id ? rq->id : NULL;
    bool was_dirty = c->dirty;
    /* The engine lock is held for the whole program: no other transaction can be open. */
    bool txn = undoable && il_txn_begin(c->session);
    bool stopped = false;
    reply rp;
    reply_init(&rp);
    il_result *last_table = NULL;
    il_result **keep = NULL; /* results whose lines are referenced */
    size_t nkeep = 0;
    char **owned = NULL;
    size_t nowned = 0;
    const char **lines = NULL;
    size_t nlines = 0;
    bool switched = false;
    uint64_t writes_before = rq->job.pinned ? 0 : c->srv->revision_stmt;
    for (size_t index = 0; index < n; index++) {
        srv_stmt *st = &sts[index];
        il_result *r = NULL;
        char *failure = NULL;
        const char *code = "validation";
        const char *denied = st->unterminated ? NULL : recheck(c, c->user, st);
        if (st->unterminated) {
            failure = strdup("unterminated statement (unbalanced delimiters)");
        } else if (denied) {
            failure = strdup(denied);
            code = "access_denied";
        } else {
            r = run(rq, st, txn);
            if (!r) {
                stopped = true;
                break;
            }
            after_stmt(c, st, r);
            il_result_kind kind = il_result_kind_of(r);
            if (kind == IL_RESULT_ERROR || kind == IL_RESULT_PARSE_ERROR) {
                failure = joined_lines(r);
                if (kind == IL_RESULT_ERROR) code = srv_exec_error_code(failure);
            } else if (il_result_stmt_class(r) == IL_STMT_KG_SWITCH) {
                switched = true;
            }
        }
        if (failure) {
            if (rp.errors.len) il_buf_putc(&rp.errors, ',');
            il_buf_printf(&rp.errors, "{\"index\":%zu,\"code\":\"%s\",\"message\":", index, code);
            il_json_str(&rp.errors, failure, strlen(failure));
            il_buf_putc(&rp.errors, '}');
            il_buf line;
            il_buf_init(&line);
            il_buf_printf(&line, "Error: %s", failure);
            owned = realloc(owned, (nowned + 1) * sizeof *owned);
            owned[nowned++] = il_buf_take(&line);
            lines = realloc(lines, (nlines + 1) * sizeof *lines);
            lines[nlines++] = owned[nowned - 1];
            free(failure);
            if (r) il_result_free(r);
        } else if (il_result_kind_of(r) == IL_RESULT_TABLE) {
            if (last_table) il_result_free(last_table);
            last_table = r;
        } else {
            lines = realloc(lines, (nlines + il_result_nlines(r) + 1) * sizeof *lines);
            put_lines(c, st, r, lines, &nlines);
            keep = realloc(keep, (nkeep + 1) * sizeof *keep);
            keep[nkeep++] = r;
        }
    }
    if (txn && stopped) {
        il_txn_rollback(c->session);
        restore_dirty(c, was_dirty);
    } else if (txn) {
        /* Nothing stored changed, so there is no log record to fail. */
        il_txn_commit(c->session, NULL);
    }
    rp.table = last_table;
    rp.lines = lines;
    rp.nlines = nlines;
    if (last_table) put_proof_trees(&rp.ext, last_table);
    if (switched && !stopped) put_switched_kg(&rp.ext, c);
    if (!rq->job.pinned) srv_revision_put_if_changed(c->srv, writes_before, &rp.ext);
    rp.ms = srv_now_ms() - t0;
    if (!rq->stopped) send_reply(c, id, &rp);
    reply_free(&rp);
    if (last_table) il_result_free(last_table);
    for (size_t i = 0; i < nkeep; i++) il_result_free(keep[i]);
    for (size_t i = 0; i < nowned; i++) free(owned[i]);
    free(keep);
    free(owned);
    free(lines);
}

/* The reply to a writing program that did not commit: its failure message as the one
 * row of a `message` column, and the errors[] entry of the statement that failed. */
static void send_program_failure(srv_conn *c, const char *id, size_t index, const char *code,
                                 const char *msg, uint64_t t0) {
    reply rp;
    reply_init(&rp);
    il_buf_printf(&rp.errors, "{\"index\":%zu,\"code\":\"%s\",\"message\":", index, code);
    il_json_str(&rp.errors, msg, strlen(msg));
    il_buf_putc(&rp.errors, '}');
    rp.lines = &msg;
    rp.nlines = 1;
    il_buf_puts(&rp.ext, ",\"result_kind\":\"message\"");
    rp.ms = srv_now_ms() - t0;
    send_reply(c, id, &rp);
    reply_free(&rp);
}

/* A program of several statements of which some write (protocol-later.md 1.8,
 * "Atomicity"): one engine transaction. It stops at the first failure and rolls back, so
 * that nothing of it is applied; otherwise it commits as one log record, one change report
 * and one revision, and the reply is built as for any program (the last query's table, else
 * every statement's lines). A stop (deadline, cancel, memory) rolls back too; its error was
 * sent. The program begins committing only after its last statement, so until then a
 * cancel rolls it back. */
static void execute_atomic(srv_req *rq, srv_stmt *sts, size_t n, const il_txn_part *parts,
                           uint64_t t0) {
    srv_conn *c = rq->conn;
    const char *id = rq->has_id ? rq->id : NULL;
    size_t nwrites = 0, first = n, last = 0;
    for (size_t i = 0; i < n; i++) {
        if (parts[i] != IL_TXN_WRITES) continue;
        nwrites++;
        if (first == n) first = i;
        last = i;
    }
    bool was_dirty = c->dirty;
    uint64_t writes_before = c->srv->revision_stmt;
    il_result **res = calloc(n, sizeof *res);
    char *failure = NULL;
    const char *code = "validation";
    size_t failed = n;
    bool stopped = false;
    /* The engine lock is held for the whole program: no other transaction can be open. */
    if (!il_txn_begin(c->session)) {
        srv_send_error(c, id, "internal", "A transaction is already open on the engine");
        free(res);
        return;
    }
    for (size_t i = 0; i < n && !failure && !stopped; i++) {
        if (sts[i].unterminated) {
            failure = strdup("unterminated statement (unbalanced delimiters)");
            failed = i;
            break;
        }
        il_result *r = run(rq, &sts[i], true);
        if (!r) {
            stopped = true;
            break;
        }
        il_result_kind kind = il_result_kind_of(r);
        if (kind == IL_RESULT_ERROR || kind == IL_RESULT_PARSE_ERROR) {
            failure = joined_lines(r);
            if (kind == IL_RESULT_ERROR) code = srv_exec_error_code(failure);
            failed = i;
            il_result_free(r);
            break;
        }
        res[i] = r;
    }
    char *err = NULL;
    bool committed = false, undone = false;
    if (!failure && !stopped && !begin_commit(rq)) stopped = true; /* cancelled: rolled back */
    if (failure || stopped) {
        il_txn_rollback(c->session);
        restore_dirty(c, was_dirty);
    } else {
        committed = il_txn_commit_or_undo(c->session, &undone, &err);
        if (undone) {
            /* The log did not take the record (a full disk): nothing was applied. */
            restore_dirty(c, was_dirty);
            failure = err ? err : strdup("Storage error: write failed");
            err = NULL;
            code = srv_exec_error_code(failure);
            failed = last;
        }
    }
    if (failure) {
        il_buf msg;
        il_buf_init(&msg);
        il_buf_puts(&msg, failure);
        size_t others = nwrites - (parts[failed] == IL_TXN_WRITES);
        if (others)
            il_buf_printf(&msg,
                          " (rolled back: none of the program's %zu write statements %zu-%zu "
                          "was applied)",
                          nwrites, first, last);
        send_program_failure(c, id, failed, code, il_buf_str(&msg), t0);
        il_buf_free(&msg);
    } else if (!stopped && !committed) {
        /* The record may or may not be on disk: no rollback claim. */
        il_buf msg;
        il_buf_init(&msg);
        il_buf_printf(&msg, "Storage error: %s; the program's effects may not survive a restart",
                      err ? err : "write failed");
        send_program_failure(c, id, last, "outcome_unknown", il_buf_str(&msg), t0);
        il_buf_free(&msg);
    } else if (!stopped) {
        reply rp;
        reply_init(&rp);
        const char **lines = NULL;
        size_t nlines = 0;
        for (size_t i = 0; i < n; i++) {
            if (il_result_kind_of(res[i]) == IL_RESULT_TABLE) {
                rp.table = res[i];
                continue;
            }
            lines = realloc(lines, (nlines + il_result_nlines(res[i]) + 1) * sizeof *lines);
            put_lines(c, &sts[i], res[i], lines, &nlines);
        }
        rp.lines = lines;
        rp.nlines = nlines;
        if (rp.table) put_proof_trees(&rp.ext, rp.table);
        srv_revision_put_if_changed(c->srv, writes_before, &rp.ext);
        rp.ms = srv_now_ms() - t0;
        send_reply(c, id, &rp);
        reply_free(&rp);
        free(lines);
    }
    free(err);
    free(failure);
    for (size_t i = 0; i < n; i++)
        if (res[i]) il_result_free(res[i]);
    free(res);
}

/* .user / .apikey / .kg acl, answered by the server (execution_time_ms 0, as in the
 * original). A command that ended this connection's own credential gets no reply: the
 * fence withholds it and the connection closes with the notice. */
static void execute_admin(srv_conn *c, const char *id, const srv_stmt *st) {
    srv_admin_reply ar;
    pthread_mutex_lock(&c->srv->users_lock);
    srv_admin_run(c, st, &ar);
    pthread_mutex_unlock(&c->srv->users_lock);
    if (ar.error_code) {
        srv_send_error(c, id, ar.error_code, ar.message);
    } else {
        reply rp;
        reply_init(&rp);
        if (ar.ncols) {
            rp.cols = ar.cols;
            rp.ncols = ar.ncols;
            rp.rows = ar.rows;
            rp.nrows = ar.nrows;
            il_buf_puts(&rp.ext, ",\"result_kind\":\"table\"");
        } else {
            rp.lines = (const char **)ar.lines;
            rp.nlines = ar.nlines;
            il_buf_puts(&rp.ext, ",\"result_kind\":\"message\"");
        }
        send_reply(c, id, &rp);
        reply_free(&rp);
    }
    srv_admin_reply_free(&ar);
}

bool srv_exec_credential_ok(srv_req *rq) {
    srv_server *s = rq->conn->srv;
    enum srv_notice why;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *me = srv_auth_current(rq->conn, &why);
    pthread_mutex_unlock(&s->users_lock);
    if (!me) {
        rq->close_credential = true;
        rq->close_why = why;
    }
    return me != NULL;
}

/* The newest change of a precondition's scope after the expected revision. */
typedef struct scope_check {
    srv_server *srv;
    const char *kg;
    uint64_t after;
    uint64_t at;       /* the revision of the newest change found (0: none) */
    char changed[200]; /* what changed then */
} scope_check;

static void check_scope_rel(void *ctx, const char *rel) {
    scope_check *x = ctx;
    uint64_t at = srv_revision_of_rel(x->srv, x->kg, rel);
    if (at <= x->after || at <= x->at) return;
    x->at = at;
    snprintf(x->changed, sizeof x->changed, "relation '%s'", rel);
}

/* execute.expect_revision: the program runs only while nothing in scope changed after
 * that revision of this engine run. The scope is the whole graph, or with
 * expect_relations those relations, the relations derived from them through persistent
 * rules and what those are derived from (il_graph_scope), plus the persistent rules.
 * Checked with the engine lock held, as is the program after it: nothing can commit in
 * between. */
static bool expectation_holds(srv_req *rq) {
    srv_conn *c = rq->conn;
    const char *kg = il_session_graph(c->session);
    uint64_t now = srv_revision(c->srv, kg);
    char msg[400];
    const char *code = "precondition_failed";
    scope_check x = {c->srv, kg, rq->expect_revision, 0, ""};
    size_t unknown = rq->nexpect_rels;
    if (rq->nexpect_rels)
        unknown = il_graph_scope(c->session, (const char *const *)rq->expect_rels, rq->nexpect_rels,
                                 check_scope_rel, &x);
    if (unknown < rq->nexpect_rels) {
        code = "validation";
        snprintf(msg, sizeof msg,
                 "expect_relations: '%.100s' is not a relation, rule or schema of knowledge "
                 "graph '%s'",
                 rq->expect_rels[unknown], kg);
    } else if (!rq->expect_epoch_ok) {
        snprintf(msg, sizeof msg,
                 "Precondition failed: expect_epoch is not this engine run's stream_epoch %s",
                 c->srv->epoch);
    } else if (rq->expect_revision > now) {
        snprintf(msg, sizeof msg,
                 "Precondition failed: knowledge graph '%s' is at revision %llu, not %llu "
                 "(not issued yet)",
                 kg, (unsigned long long)now, (unsigned long long)rq->expect_revision);
    } else if (!rq->nexpect_rels && now != rq->expect_revision) {
        snprintf(msg, sizeof msg,
                 "Precondition failed: knowledge graph '%s' is at revision %llu, not %llu "
                 "(it changed since)",
                 kg, (unsigned long long)now, (unsigned long long)rq->expect_revision);
    } else {
        uint64_t rules = srv_revision_of_rules(c->srv, kg);
        if (rq->nexpect_rels && rules > rq->expect_revision && rules > x.at) {
            x.at = rules;
            snprintf(x.changed, sizeof x.changed, "a persistent rule");
        }
        if (!x.at) return true;
        snprintf(msg, sizeof msg,
                 "Precondition failed: %s of knowledge graph '%s' changed at revision %llu, "
                 "after %llu",
                 x.changed, kg, (unsigned long long)x.at, (unsigned long long)rq->expect_revision);
    }
    srv_send_error(c, rq->has_id ? rq->id : NULL, code, msg);
    return false;
}

static void execute(srv_req *rq) {
    srv_conn *c = rq->conn;
    const char *id = rq->has_id ? rq->id : NULL;
    const char *prog = rq->program;
    size_t len = rq->len;
    uint64_t t0 = srv_now_ms();
    int64_t max = c->srv->cfg->max_query_size_bytes;
    if (max > 0 && len > (uint64_t)max) {
        char msg[128];
        snprintf(msg, sizeof msg, "Program too large: %zu bytes (max %lld)", len, (long long)max);
        srv_send_error(c, id, "validation", msg);
        return;
    }
    /* The role is read per statement, so a role change applies at once; a credential that
     * ended closes the connection instead of answering. */
    if (!srv_exec_credential_ok(rq)) return;
    if (rq->kind == SRV_RK_SUBSCRIBE) {
        /* A group has no program to split; its credential is checked like a program's. */
        srv_group_subscribe(rq);
        return;
    }
    if (rq->has_expect && !expectation_holds(rq)) return;
    /* Prepared when the request was classified, and kept for a second run (after a spill):
     * the statements are parsed once per request. */
    if (!rq->stmts) rq->stmts = srv_exec_split(prog, len, &rq->nstmts);
    size_t n = rq->nstmts;
    srv_stmt *sts = rq->stmts;
    /* Every statement is authorized before any runs, so a refused statement leaves the
     * whole program unapplied (the original checked single-statement programs only: a
     * viewer could write through a two-line program, BUG). */
    srv_authz_state as;
    memset(&as, 0, sizeof as);
    /* An identity command runs on the loop thread, without the engine: its check does
     * not depend on the graph. */
    const char *kg = rq->identity ? c->kg : il_session_graph(c->session);
    il_str_copy(as.kg, sizeof as.kg, kg);
    pthread_mutex_lock(&c->srv->users_lock);
    const srv_user *me = srv_users_find(&c->srv->users, c->user);
    size_t denied = n;
    for (size_t i = 0; me && i < n && denied == n; i++) {
        srv_authz_stmt(&c->srv->users, me, &as, &sts[i]);
        if (sts[i].denied) denied = i;
    }
    pthread_mutex_unlock(&c->srv->users_lock);
    if (denied < n) {
        il_buf f;
        il_buf_init(&f);
        if (n > 1) {
            il_buf_printf(
                &f, ",\"errors\":[{\"index\":%zu,\"code\":\"access_denied\",\"message\":", denied);
            il_json_str(&f, sts[denied].denied, strlen(sts[denied].denied));
            il_buf_puts(&f, "}]");
        }
        srv_send_error_fields(c, id, "access_denied", sts[denied].denied, f.data);
        il_buf_free(&f);
        return;
    }
    for (size_t i = 0; n > 1 && i < n; i++) {
        if (sts[i].handler == SRV_H_ENGINE) continue;
        srv_send_error(c, id, "unsupported",
                       sts[i].handler == SRV_H_ACL
                           ? "KG ACL commands require a WebSocket connection with admin or "
                             "owner privileges."
                           : "User/API key commands require a WebSocket connection with admin "
                             "privileges.");
        return;
    }
    for (size_t i = 0; n > 1 && i < n; i++) {
        if (!srv_subs_is_command(sts[i].text, sts[i].len)) continue;
        srv_send_error(c, id, "validation",
                       ".subscribe and .unsubscribe must be the only statement of a program");
        return;
    }
    /* A program of several statements that writes is one transaction: a statement that
     * cannot join one refuses the whole program before anything runs. */
    il_txn_part *parts = NULL;
    size_t nwrites = 0, outside = n;
    if (n > 1) {
        parts = malloc(n * sizeof *parts);
        for (size_t i = 0; i < n; i++) {
            parts[i] = il_prepared_txn_part(sts[i].prep, sts[i].index);
            nwrites += parts[i] == IL_TXN_WRITES;
            if (parts[i] == IL_TXN_OUTSIDE && outside == n) outside = i;
        }
    }
    if (nwrites && outside < n) {
        il_buf msg, f;
        il_buf_init(&msg);
        il_buf_init(&f);
        const char *p = stmt_start(sts[outside].text, sts[outside].text + sts[outside].len);
        size_t k = 0;
        while (p + k < sts[outside].text + sts[outside].len && p[k] != ' ' && p[k] != '\n') k++;
        il_buf_printf(&msg,
                      "Statement %zu (%.*s) cannot run in a program that writes: a writing "
                      "program commits as one transaction, which %.*s cannot join. Send it as "
                      "a program of its own",
                      outside, (int)k, p, (int)k, p);
        il_buf_printf(&f,
                      ",\"errors\":[{\"index\":%zu,\"code\":\"unsupported\",\"message\":", outside);
        il_json_str(&f, il_buf_str(&msg), msg.len);
        il_buf_puts(&f, "}]");
        srv_send_error_fields(c, id, "unsupported", il_buf_str(&msg), f.data);
        il_buf_free(&msg);
        il_buf_free(&f);
    } else if (n == 1 && !sts[0].unterminated && srv_subs_is_command(sts[0].text, sts[0].len)) {
        if (begin_commit(rq)) srv_subs_command(c, id, sts[0].text, sts[0].len);
    } else if (n == 1 && sts[0].handler != SRV_H_ENGINE) {
        if (begin_commit(rq)) execute_admin(c, id, &sts[0]);
    } else if (n == 1) {
        execute_one(rq, &sts[0], t0);
    } else if (nwrites) {
        execute_atomic(rq, sts, n, parts, t0);
    } else {
        /* Queries alone leave nothing in the session to take back. */
        execute_many(rq, sts, n, outside == n && rq->access == SRV_EXCLUSIVE, t0);
    }
    free(parts);
}

/* A statement that only inserts or deletes given facts: `+r(...)`, `+r[...]`, `-r(...)`,
 * without a rule body, a schema (`x: int`) or a meta command. A ':' or '<' inside a
 * quoted string only makes it look otherwise, which costs nothing but the fast path. */
static bool is_fact_write(const char *p, size_t k) {
    if (k < 2 || (*p != '+' && *p != '-')) return false;
    return !memchr(p, '<', k) && !memchr(p, ':', k);
}

srv_stmt *srv_exec_split(const char *prog, size_t len, size_t *n) {
    il_prepared *p = il_prepare(prog, len);
    *n = il_prepared_count(p);
    if (*n == 0) {
        il_prepared_free(p);
        return NULL;
    }
    srv_stmt *sts = calloc(*n, sizeof *sts);
    for (size_t i = 0; i < *n; i++) {
        sts[i].prep = p;
        sts[i].index = i;
        sts[i].text = il_prepared_text(p, i, &sts[i].len);
        sts[i].unterminated = il_prepared_kind(p, i) == IL_STATEMENT_UNTERMINATED;
    }
    return sts;
}

void srv_exec_free_stmts(srv_stmt *sts, size_t n) {
    if (n) il_prepared_free(sts[0].prep);
    free(sts);
}

/* Whether the statement is meta command `word` (followed by nothing or a blank). */
static bool is_meta(const char *p, size_t k, const char *word) {
    size_t n = strlen(word);
    return k >= n && memcmp(p, word, n) == 0 && (k == n || p[n] == ' ' || p[n] == '\t');
}

void srv_exec_classify(const srv_stmt *sts, size_t n, bool *read_only, bool *identity,
                       bool *fact_writes) {
    bool queries = true, facts = true, user_or_key = false;
    for (size_t i = 0; i < n; i++) {
        const char *end = sts[i].text + sts[i].len, *p = stmt_start(sts[i].text, end);
        size_t k = (size_t)(end - p);
        /* explanations and listings write nothing either, and run pinned beside writes as
           queries do */
        queries = queries && ((k > 0 && *p == '?') ||
                              (k > 0 && *p == '.' &&
                               il_prepared_kind(sts[i].prep, sts[i].index) == IL_STATEMENT_META &&
                               il_prepared_pinnable(sts[i].prep, sts[i].index)));
        facts = facts && !sts[i].unterminated && is_fact_write(p, k);
        user_or_key = !sts[i].unterminated && (is_meta(p, k, ".user") || is_meta(p, k, ".apikey"));
    }
    *read_only = n > 0 && queries;
    *identity = n == 1 && user_or_key;
    if (fact_writes) *fact_writes = n > 0 && facts;
}

void srv_exec_job(srv_job *j) {
    srv_req *rq = (srv_req *)j;
    /* By the thread's CPU time: a run that used little of it proves the program cheap
       (srv_pipe_job_done lets it run inline again). By the clock, a preemption made a
       cheap read look dear on a busy machine, and it stayed on the pool, paying two
       thread hand-offs a read: 902 of 1,100 reads of `?reach(1, Y)` did, under load. */
    uint64_t t0 = srv_thread_cpu_ns();
    /* A write on the pool may be long, and reads arriving meanwhile go to the other
       workers: it publishes the revision before it for them, so that none waits for it
       (srv_pool.c). A write the I/O thread runs inline needs none: no read starts while
       it runs; nor one with no other session open to read. Publishing is not free: the
       write then copies every node it changes (statements of 5,000 new facts took
       16-22 % longer, BENCHMARKS.md), so a lone loader does not pay it. */
    bool publish = rq->access == SRV_EXCLUSIVE && !rq->identity && !j->pinned &&
                   __atomic_load_n(&rq->conn->srv->nsessions, __ATOMIC_RELAXED) > 1;
    if (publish) il_session_set_publish(rq->conn->session, true);
    srv_exec_run(rq);
    if (publish) il_session_set_publish(rq->conn->session, false);
    rq->pool_run_ns = srv_thread_cpu_ns() - t0;
    if (!rq->pool_run_ns) rq->pool_run_ns = 1;
}

bool srv_exec_pinnable(const srv_req *rq) {
    return rq->access == SRV_SHARED && !rq->has_expect && !rq->identity &&
           (rq->kind == SRV_RK_EXECUTE || rq->kind == SRV_RK_READ);
}

bool srv_exec_pin(srv_job *j) {
    srv_req *rq = (srv_req *)j;
    il_session *s = rq->conn->session;
    if (!srv_exec_pinnable(rq)) return false;
    if (rq->kind == SRV_RK_READ) {
        if (!srv_read_pinnable(rq)) return false;
    } else {
        if (!rq->stmts) rq->stmts = srv_exec_split(rq->program, rq->len, &rq->nstmts);
        for (size_t i = 0; i < rq->nstmts; i++)
            if (!il_prepared_pinnable(rq->stmts[i].prep, rq->stmts[i].index)) return false;
    }
    if (!il_session_pin(s)) return false;
    rq->pinned_revision = srv_revision(rq->conn->srv, il_session_graph(s));
    srv_count(rq->conn->srv->counters.reads_pinned);
    return true;
}

bool srv_exec_pin_published(srv_job *j) {
    srv_req *rq = (srv_req *)j;
    il_session *s = rq->conn->session;
    /* On a published revision, a query that would make a rule maintained evaluates it
       (kg_pin_note_query): the view is for a later read to make. */
    if (!srv_exec_pinnable(rq) || !il_session_pin_published(s)) return false;
    rq->pinned_revision = srv_revision(rq->conn->srv, il_session_graph(s));
    if (!il_session_pin_current(s)) { /* a commit since: that revision may be a later one */
        il_session_unpin(s);
        return false;
    }
    srv_count(rq->conn->srv->counters.reads_pinned);
    srv_count(rq->conn->srv->counters.reads_published);
    return true;
}

void srv_exec_unpin(srv_job *j) {
    il_session_unpin(((srv_req *)j)->conn->session);
}

void srv_exec_run(srv_req *rq) {
    srv_capture *was = srv_tl_capture;
    srv_tl_capture = &rq->out;
    bool writes = rq->access == SRV_EXCLUSIVE && !rq->identity;
    /* What came before goes under the graph it was published in (a program may switch). */
    if (writes) srv_deliver_own(&rq->out);
    if (rq->kind == SRV_RK_READ)
        srv_read_run(rq);
    else
        execute(rq);
    /* A read that finished before it saw its cancel still answers `cancelled`. */
    if (!rq->stopped && __atomic_load_n(&rq->commit, __ATOMIC_SEQ_CST) == SRV_COMMIT_CANCELLED)
        stop_request(rq, "cancelled", il_stop_message(IL_STOP_CANCELLED));
    /* Subscription deltas go out after the reply to the request that caused them. */
    if (writes) {
        srv_deliver_own(&rq->out);
        srv_subs_publish(rq->conn->srv, rq->conn);
    }
    il_phase_mark(IL_PHASE_PUBLISH);
    srv_tl_capture = was;
}
