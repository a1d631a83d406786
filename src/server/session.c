/* One engine session per authenticated connection: opened in a job after authentication
 * (bound to the ?kg= knowledge graph), closed in a last job with the connection; and the
 * list of knowledge graphs, kept for the loop thread. Engine work holds the engine lock. */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_deliver.h"
#include "server/srv_pipeline.h"
#include "server/srv_subs.h"

static void uuid_v4(char out[37]) {
    unsigned char u[16];
    RAND_bytes(u, sizeof u);
    u[6] = (unsigned char)((u[6] & 0x0F) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

void srv_new_session_id(srv_conn *c) {
    uuid_v4(c->session_id);
}

bool srv_session_open(srv_conn *c, const char *kg, char *err, size_t errlen) {
    il_session *s = il_session_open(c->srv->engine);
    if (strcmp(kg, "default") != 0) {
        if (strcmp(kg, "_internal") == 0) {
            snprintf(err, errlen, "Access denied: '_internal' is a system knowledge graph");
            il_session_close(s);
            return false;
        }
        il_result *r = il_session_use(s, kg);
        bool ok = il_result_kind_of(r) == IL_RESULT_MESSAGE;
        if (!ok)
            snprintf(err, errlen, "%s",
                     il_result_nlines(r) ? il_result_line(r, 0)
                                         : "Cannot open the knowledge graph");
        il_result_free(r);
        if (!ok) {
            il_session_close(s);
            return false;
        }
    }
    c->session = s;
    __atomic_fetch_add(&c->srv->nsessions, 1, __ATOMIC_RELAXED);
    return true;
}

void srv_session_close(srv_conn *c) {
    srv_subs_drop_all(c);
    if (!c->session) return;
    srv_deliver_unregister(c);
    il_session_close(c->session);
    c->session = NULL;
    __atomic_fetch_sub(&c->srv->nsessions, 1, __ATOMIC_RELAXED);
    if (c->dirty) __atomic_fetch_sub(&c->srv->ndirty, 1, __ATOMIC_RELAXED);
    c->dirty = false;
}

static void add_name(void *ctx, const char *name) {
    il_buf *names = ctx;
    il_buf_put(names, name, strlen(name) + 1);
}

void srv_count_graphs(srv_server *s) {
    il_buf names; /* NUL-separated */
    il_buf_init(&names);
    size_t n = il_engine_graphs(s->engine, add_name, &names);
    pthread_mutex_lock(&s->graphs_lock);
    il_buf_free(&s->graph_names);
    s->graph_names = names;
    s->nkgs = n;
    pthread_mutex_unlock(&s->graphs_lock);
}

bool srv_graph_known(srv_server *s, const char *kg) {
    pthread_mutex_lock(&s->graphs_lock);
    bool found = false;
    for (size_t at = 0; at < s->graph_names.len && !found;) {
        const char *name = s->graph_names.data + at;
        found = strcmp(name, kg) == 0;
        at += strlen(name) + 1;
    }
    pthread_mutex_unlock(&s->graphs_lock);
    return found;
}

typedef struct open_job {
    srv_job job;
    srv_conn *conn;
    char err[256];
    bool failed;
    srv_notify_replay replay;
    uint64_t through; /* the registered cursor (read under the engine lock) */
} open_job;

static void open_run(srv_job *j) {
    open_job *o = (open_job *)j;
    o->failed = !srv_session_open(o->conn, o->conn->kg, o->err, sizeof o->err);
    if (!o->failed) {
        srv_deliver_register(o->conn, &o->replay);
        o->through = o->conn->notify_through;
    }
}

static void open_done(srv_job *j) {
    open_job *o = (open_job *)j;
    srv_conn *c = o->conn;
    c->refs--;
    if (c->closed) {
        if (!o->failed) srv_notify_replay_free(&o->replay);
        srv_conn_maybe_free(c);
    } else if (o->failed) {
        /* The graph went away between authentication and now. */
        srv_send_error(c, NULL, strncmp(o->err, "Access", 6) == 0 ? "access_denied" : "not_found",
                       o->err);
        srv_ws_close(c, 1008);
        srv_conn_close(c);
    } else {
        srv_deliver_replay(c, &o->replay);
        srv_deliver_registered(c->srv, o->through);
        c->session_ready = true;
        srv_pipe_pump(c);
    }
    free(o);
}

void srv_session_open_async(srv_conn *c) {
    open_job *o = calloc(1, sizeof *o);
    o->job.run = open_run;
    o->job.done = open_done;
    o->conn = c;
    c->refs++;
    srv_pool_submit(&c->srv->pool, &o->job, true);
}
