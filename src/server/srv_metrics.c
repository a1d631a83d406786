/* GET /metrics (JSON stats) and GET /metrics/prometheus (text format 0.0.4), both for an
 * admin's API key only. The Prometheus families are the original's names where this
 * server has the number (uptime, queries, knowledge graphs, sessions, memory, connection
 * gauges and limits, rejections, auth failures) plus notices and error codes per code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/intern.h"
#include "server/server.h"

/* Counters that jobs increment on worker threads (srv_count). */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* 0 when the request carries an unexpired API key of an admin, else the HTTP status
 * already sent. */
static int refusal(srv_conn *c) {
    const char *h = c->auth_hdr.data;
    srv_users *u = &c->srv->users;
    srv_key *k = NULL;
    /* The scheme is case-insensitive (RFC 9110 11.1). */
    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        const char *secret = h + 7 + strspn(h + 7, " ");
        k = srv_users_key_by_secret(u, secret, strlen(secret));
    }
    if (!k || srv_key_expired(k, srv_wall_ms()) || !srv_users_find(u, k->owner)) {
        const char *msg = "Invalid or missing API key";
        srv_http_respond(c, 401, "Unauthorized", "text/plain; charset=utf-8", msg, strlen(msg));
        return 401;
    }
    if (srv_users_find(u, k->owner)->role != SRV_ROLE_ADMIN) {
        const char *msg = "Metrics need an admin's API key";
        srv_http_respond(c, 403, "Forbidden", "text/plain; charset=utf-8", msg, strlen(msg));
        return 403;
    }
    return 0;
}

static size_t graph_count(srv_server *s) {
    pthread_mutex_lock(&s->graphs_lock);
    size_t n = s->nkgs;
    pthread_mutex_unlock(&s->graphs_lock);
    return n;
}

static int refuse(srv_conn *c) {
    pthread_mutex_lock(&c->srv->users_lock);
    int status = refusal(c);
    pthread_mutex_unlock(&c->srv->users_lock);
    return status;
}

static uint64_t uptime_secs(const srv_server *s) {
    return (srv_now_ms() - s->started_ms) / 1000;
}

void srv_metrics_json(srv_conn *c) {
    if (refuse(c)) return;
    srv_server *s = c->srv;
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b,
                  "{\"success\":true,\"data\":{\"knowledge_graphs\":%zu,\"query_count\":%llu,"
                  "\"uptime_secs\":%llu,\"sessions\":{\"total\":%u,\"clean\":%u,\"dirty\":%u},"
                  "\"connections\":%u}}",
                  graph_count(s), (unsigned long long)LOAD(s->query_count),
                  (unsigned long long)uptime_secs(s), LOAD(s->nsessions),
                  LOAD(s->nsessions) - LOAD(s->ndirty), LOAD(s->ndirty), s->nconns);
    srv_http_respond(c, 200, "OK", "application/json", b.data, b.len);
    il_buf_free(&b);
}

/* Resident set size from /proc (the original reported tuples x 64 as "memory"). */
static long long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long long pages = -1, rss = -1;
    if (fscanf(f, "%lld %lld", &pages, &rss) != 2) rss = -1;
    fclose(f);
    return rss < 0 ? -1 : rss * 4096;
}

/* The cgroup (v2) memory limit, -1 when there is none. */
static long long memory_limit(void) {
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

static void family(il_buf *b, const char *name, const char *type, const char *help) {
    il_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gauge(il_buf *b, const char *name, const char *help, long long v) {
    family(b, name, "gauge", help);
    il_buf_printf(b, "%s %lld\n", name, v);
}

/* Per admission lane (srv_lanes.h): its running and queued jobs, and its counts. */
static void lane_metrics(il_buf *b, srv_pool *p) {
    uint64_t counts[SRV_NLANES][8];
    for (int i = 0; i < SRV_NLANES; i++) {
        srv_lane_stats l;
        srv_pool_lane_stats(p, (srv_lane_id)i, &l);
        const uint64_t c[8] = {l.running,   l.queued,          l.admitted, l.rejected_full,
                               l.timed_out, l.stopped_waiting, l.wait_ns,  l.held_ns};
        memcpy(counts[i], c, sizeof c);
    }
    static const struct {
        const char *name, *type, *help;
    } fams[8] = {
        {"inputlayer_admission_lane_running", "gauge", "Jobs of the lane holding a permit."},
        {"inputlayer_admission_lane_queued", "gauge", "Jobs of the lane waiting for a permit."},
        {"inputlayer_admission_lane_admitted_total", "counter",
         "Jobs of the lane granted a permit."},
        {"inputlayer_admission_lane_rejected_full_total", "counter",
         "Jobs refused (overloaded): the lane's queue or the pool's was full."},
        {"inputlayer_admission_lane_timed_out_total", "counter",
         "Jobs taken out of the lane's queue: their deadline or longest wait passed."},
        {"inputlayer_admission_lane_stopped_waiting_total", "counter",
         "Jobs taken out of the lane's queue: cancelled, or their connection closed."},
        {"inputlayer_admission_lane_wait_seconds_total", "counter",
         "Time the lane's granted jobs waited for a permit."},
        {"inputlayer_admission_lane_held_seconds_total", "counter",
         "Time the lane's finished jobs held a permit."},
    };
    for (size_t f = 0; f < 8; f++) {
        family(b, fams[f].name, fams[f].type, fams[f].help);
        for (int i = 0; i < SRV_NLANES; i++) {
            il_buf_printf(b, "%s{lane=\"%s\"} ", fams[f].name, srv_lane_name((srv_lane_id)i));
            if (f >= 6) /* nanoseconds, shown in seconds */
                il_buf_printf(b, "%.6f\n", (double)counts[i][f] / 1e9);
            else
                il_buf_printf(b, "%llu\n", (unsigned long long)counts[i][f]);
        }
    }
}

static void labelled(il_buf *b, const char *name, const char *help, const char *label,
                     const char *const *values, const uint64_t *counts, size_t n) {
    family(b, name, "counter", help);
    for (size_t i = 0; i < n; i++)
        il_buf_printf(b, "%s{%s=\"%s\"} %llu\n", name, label, values[i],
                      (unsigned long long)LOAD(counts[i]));
}

void srv_metrics_prometheus(srv_conn *c) {
    if (refuse(c)) return;
    srv_server *s = c->srv;
    const srv_config *cfg = s->cfg;
    il_buf b;
    il_buf_init(&b);
    gauge(&b, "inputlayer_uptime_seconds", "Seconds since the server started.",
          (long long)uptime_secs(s));
    family(&b, "inputlayer_notification_rounds_total", "counter",
           "Rounds that sent notifications to the connections (paced).");
    il_buf_printf(&b, "inputlayer_notification_rounds_total %llu\n",
                  (unsigned long long)LOAD(s->counters.delivery_rounds));
    family(&b, "inputlayer_notifications_delivered_total", "counter",
           "Notification frames sent to connections (replays excluded).");
    il_buf_printf(&b, "inputlayer_notifications_delivered_total %llu\n",
                  (unsigned long long)LOAD(s->counters.notifications_delivered));
    family(&b, "inputlayer_writes_total", "counter",
           "Programs that write, by where they ran: inline on the I/O thread, or in the "
           "compute pool.");
    il_buf_printf(&b, "inputlayer_writes_total{ran=\"inline\"} %llu\n",
                  (unsigned long long)LOAD(s->counters.writes_inline));
    il_buf_printf(&b, "inputlayer_writes_total{ran=\"pool\"} %llu\n",
                  (unsigned long long)LOAD(s->counters.writes_pooled));
    family(&b, "inputlayer_reads_total", "counter",
           "Programs that only read (execute of queries, read frames), by where they ran: "
           "inline on the I/O thread, or in the compute pool.");
    il_buf_printf(&b, "inputlayer_reads_total{ran=\"inline\"} %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_inline));
    il_buf_printf(&b, "inputlayer_reads_total{ran=\"pool\"} %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_pooled));
    family(&b, "inputlayer_reads_spilled_total", "counter",
           "Reads begun inline that overran the inline budget (time or rows) and ran again "
           "in the compute pool.");
    il_buf_printf(&b, "inputlayer_reads_spilled_total %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_spilled));
    family(&b, "inputlayer_reads_shared_total", "counter",
           "Reads the I/O thread could have run inline but sent to the compute pool, because "
           "other connections were reading too (docs/server.md, Reads beside writes).");
    il_buf_printf(&b, "inputlayer_reads_shared_total %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_shared));
    family(&b, "inputlayer_reads_pinned_total", "counter",
           "Pooled reads that pinned their session and ran without the engine lock.");
    il_buf_printf(&b, "inputlayer_reads_pinned_total %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_pinned));
    family(&b, "inputlayer_reads_published_total", "counter",
           "Of those, reads that found the engine busy with a write and pinned the revision "
           "it published before it began.");
    il_buf_printf(&b, "inputlayer_reads_published_total %llu\n",
                  (unsigned long long)LOAD(s->counters.reads_published));
    family(&b, "inputlayer_statements_threaded_total", "counter",
           "Statements whose evaluation shared big recursion out to several threads (one per "
           "compute permit nobody else held, at most storage.performance.eval_threads).");
    il_buf_printf(&b, "inputlayer_statements_threaded_total %llu\n",
                  (unsigned long long)LOAD(s->counters.statements_threaded));
    family(&b, "inputlayer_statements_parsed_total", "counter",
           "Statements parsed by the process since the start (each statement of a request once).");
    il_buf_printf(&b, "inputlayer_statements_parsed_total %llu\n",
                  (unsigned long long)il_statements_parsed());
    family(&b, "inputlayer_log_records_total", "counter",
           "Write-ahead log records written (one per committed write) since the start.");
    il_buf_printf(&b, "inputlayer_log_records_total %llu\n",
                  (unsigned long long)(il_engine_log_written(s->engine) - s->log_records_at_start));
    family(&b, "inputlayer_log_syncs_total", "counter",
           "fdatasyncs of the write-ahead log that made records durable (with group commit, "
           "one covers every record written meanwhile).");
    il_buf_printf(&b, "inputlayer_log_syncs_total %llu\n",
                  (unsigned long long)il_engine_log_syncs(s->engine));
    family(&b, "inputlayer_log_syncs_io_thread_total", "counter",
           "Of those fdatasyncs, the ones the I/O thread made itself for a lone writer's "
           "commit (no hand-off to the syncer thread).");
    il_buf_printf(&b, "inputlayer_log_syncs_io_thread_total %llu\n",
                  (unsigned long long)s->pool.lone_syncs);
    family(&b, "inputlayer_log_batches_gathered_total", "counter",
           "Batches of commits the I/O thread gathered for one fdatasync while it polled "
           "(http.busy_poll_us, several connections writing in a closed loop).");
    il_buf_printf(&b, "inputlayer_log_batches_gathered_total %llu\n",
                  (unsigned long long)s->pool.loop_batches);
    family(&b, "inputlayer_loop_busy_poll_seconds_total", "counter",
           "Time the I/O loop spent polling instead of sleeping (http.busy_poll_us).");
    il_buf_printf(&b, "inputlayer_loop_busy_poll_seconds_total %.6f\n",
                  (double)s->busy_polled_ns / 1e9);
    family(&b, "inputlayer_queries_total", "counter", "Statements executed by the engine.");
    il_buf_printf(&b, "inputlayer_queries_total %llu\n", (unsigned long long)LOAD(s->query_count));
    gauge(&b, "inputlayer_knowledge_graphs", "Knowledge graphs.", (long long)graph_count(s));
    gauge(&b, "inputlayer_sessions_total", "Open sessions.", LOAD(s->nsessions));
    gauge(&b, "inputlayer_sessions_clean", "Sessions without session facts or rules.",
          LOAD(s->nsessions) - LOAD(s->ndirty));
    gauge(&b, "inputlayer_sessions_dirty", "Sessions with session facts or rules.",
          LOAD(s->ndirty));
    il_intern_stats in = il_intern_stats_now();
    gauge(&b, "inputlayer_interned_values",
          "Distinct strings, long integers and vectors held by the intern table.",
          (long long)in.strings);
    gauge(&b, "inputlayer_interned_bytes", "Their bytes.", (long long)in.bytes);
    gauge(&b, "inputlayer_interned_transient_values",
          "Of those, the ones held only by query results and cached query programs.",
          (long long)in.transient);
    gauge(&b, "inputlayer_interned_idle_values",
          "Of those, the ones queries made that nothing holds, kept for queries run again.",
          (long long)in.idle);
    gauge(&b, "inputlayer_interned_idle_bytes", "Their bytes.", (long long)in.idle_bytes);
    long long rss = rss_bytes(), limit = memory_limit();
    if (rss >= 0) gauge(&b, "inputlayer_memory_usage_bytes", "Resident set size.", rss);
    if (limit >= 0) gauge(&b, "inputlayer_memory_limit_bytes", "The cgroup memory limit.", limit);
    gauge(&b, "inputlayer_http_requests_in_flight",
          "Open HTTP connections (not upgraded to WebSocket).", s->nhttp);
    gauge(&b, "inputlayer_http_requests_in_flight_limit",
          "http.rate_limit.max_connections (0 = none).", (long long)cfg->max_connections);
    gauge(&b, "inputlayer_ws_connections", "Open WebSocket connections.", s->nws);
    long long outbound = 0, held = 0;
    for (srv_conn *o = s->conns; o; o = o->next) {
        outbound += (long long)srv_outbound(o);
        held += srv_outbound(o) > SRV_OUTBOUND_LIMIT;
    }
    gauge(&b, "inputlayer_ws_outbound_bytes", "Frames queued for clients, not yet written.",
          outbound);
    gauge(&b, "inputlayer_ws_connections_backpressured",
          "Connections with more than 8 MiB not yet written (not read, not sent pushes).", held);
    gauge(&b, "inputlayer_ws_connections_limit", "http.rate_limit.max_ws_connections (0 = none).",
          (long long)cfg->max_ws_connections);
    pthread_mutex_lock(&s->users_lock);
    long long nusers = (long long)s->users.nusers, nkeys = (long long)s->users.nkeys;
    pthread_mutex_unlock(&s->users_lock);
    gauge(&b, "inputlayer_users", "Users in the identity store.", nusers);
    gauge(&b, "inputlayer_api_keys", "API keys in the identity store (expired included).", nkeys);
    size_t queued;
    unsigned running;
    srv_pool_stats(&s->pool, &queued, &running);
    gauge(&b, "inputlayer_compute_permits", "Worker threads that run statements.",
          (long long)s->pool.nthreads);
    gauge(&b, "inputlayer_compute_permits_in_use", "Workers running a job now.", running);
    gauge(&b, "inputlayer_compute_queued", "Jobs waiting for a worker.", (long long)queued);
    lane_metrics(&b, &s->pool);
    gauge(&b, "inputlayer_query_memory_bytes",
          "Live bytes of the statements evaluating now (accounted by the engine).",
          (long long)il_mem_budget_used(s->query_budget));
    gauge(&b, "inputlayer_query_memory_budget_bytes",
          "storage.performance.max_total_query_memory_bytes (0 = none).",
          (long long)cfg->max_total_query_memory_bytes);
    uint64_t sub_views = 0, subs_active = 0;
    il_engine_subscriptions(s->engine, &sub_views, &subs_active);
    gauge(&b, "inputlayer_subscription_views",
          "Maintained views of standing queries (one per family of subscriptions).",
          (long long)sub_views);
    gauge(&b, "inputlayer_subscriptions_active", "Open standing-query subscriptions.",
          (long long)subs_active);
    static const char *const GUARDS[] = {"overloaded", "deadline_exceeded", "cancelled",
                                         "memory_limit", "snapshot_too_old"};
    const uint64_t guard_counts[] = {LOAD(s->counters.overloaded),
                                     LOAD(s->counters.deadline_exceeded),
                                     LOAD(s->counters.cancelled), LOAD(s->counters.memory_refused),
                                     LOAD(s->counters.snapshot_too_old)};
    labelled(&b, "inputlayer_requests_stopped_total",
             "Requests refused or stopped by a guard, by guard.", "guard", GUARDS, guard_counts, 5);
    gauge(&b, "inputlayer_snapshot_memory_bytes",
          "Memory that old versions hold for pinned reads "
          "(storage.performance.max_snapshot_memory_bytes bounds it).",
          (long long)il_snapshot_memory_bytes());
    static const char *const REASONS[SRV_REJ_N] = {
        "http_connection_limit", "ws_connection_limit", "per_ip_rate", "ws_preauth_limit",
        "ws_rate_limit",         "login_backoff",       "ws_origin"};
    labelled(&b, "inputlayer_rejections_total", "Requests and connections refused by a limit.",
             "reason", REASONS, s->counters.rejections, SRV_REJ_N);
    static const char *const METHODS[SRV_AUTH_N] = {"password", "api_key"};
    labelled(&b, "inputlayer_auth_failures_total", "Failed authentications.", "method", METHODS,
             s->counters.auth_failures, SRV_AUTH_N);
    labelled(&b, "inputlayer_ws_notices_total", "Notices sent to WebSocket clients.", "code",
             srv_notice_codes, s->counters.notices, SRV_N_N);
    size_t ncodes = 0;
    while (srv_error_codes[ncodes]) ncodes++;
    labelled(&b, "inputlayer_ws_errors_total", "Error frames sent, by code.", "code",
             srv_error_codes, s->counters.errors, ncodes);
    family(&b, "inputlayer_ws_pings_total", "counter", "Heartbeat pings sent.");
    il_buf_printf(&b, "inputlayer_ws_pings_total %llu\n",
                  (unsigned long long)LOAD(s->counters.pings));
    srv_http_respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", b.data, b.len);
    il_buf_free(&b);
}
