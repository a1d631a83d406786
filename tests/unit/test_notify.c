/* Tests of the notification log (src/server/srv_notify.h): the frames of the four
 * notification types, seq assignment, the ring and its eviction, replay for a cursor and
 * the exact replay_gap messages, the visibility rule, the capacity correction of
 * notification_buffer_size, and publishing from several threads at once. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "server/srv_config.h"
#include "server/srv_notify.h"
#include "value/value.h"

#define EPOCH "0123456789abcdef"

static const il_change INSERT_EDGE = {IL_CHANGE_FACTS, "default", "edge", "insert", 5};

static il_change facts(const char *graph, const char *rel) {
    return (il_change){IL_CHANGE_FACTS, graph, rel, "insert", 1};
}

static il_change graph_change(const char *graph, const char *op) {
    return (il_change){IL_CHANGE_GRAPH, graph, NULL, op, 0};
}

/* Publishes n single-change statements on `graph`. */
static void publish_n(srv_notify_log *log, const char *graph, int n) {
    for (int i = 0; i < n; i++) {
        il_change c = facts(graph, "r");
        srv_notify_publish(log, &c, 1, 1700000000000);
    }
}

static srv_notify_replay replay(srv_notify_log *log, bool has_seq, uint64_t seq,
                                const char *epoch) {
    srv_notify_cursor cur = {has_seq, seq, epoch};
    srv_notify_replay r;
    srv_notify_replay_read(log, &cur, NULL, NULL, &r);
    return r;
}

/* The seqs of a replay's frames, "3,4,5". */
static char *seqs_of(const srv_notify_replay *r) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < r->nframes; i++) {
        il_buf_printf(&b, "%s%llu", i ? "," : "", (unsigned long long)r->frames[i].seq);
        cr_expect_eq(strlen(r->frames[i].json), r->frames[i].len);
    }
    char *s = strdup(il_buf_str(&b));
    il_buf_free(&b);
    return s;
}

static void expect_frames(srv_notify_log *log, uint64_t after, const char *want) {
    srv_notify_replay r = replay(log, true, after, EPOCH);
    cr_assert_eq(r.kind, SRV_REPLAY_FRAMES, "after %llu: %s", (unsigned long long)after,
                 r.gap_message ? r.gap_message : "");
    char *got = seqs_of(&r);
    cr_expect_str_eq(got, want, "after %llu", (unsigned long long)after);
    free(got);
    srv_notify_replay_free(&r);
}

static void expect_gap(srv_notify_log *log, bool has_seq, uint64_t after, const char *epoch,
                       const char *want) {
    srv_notify_replay r = replay(log, has_seq, after, epoch);
    cr_assert_eq(r.kind, SRV_REPLAY_GAP);
    cr_expect_eq(r.nframes, 0);
    cr_expect_str_eq(r.gap_message, want);
    srv_notify_replay_free(&r);
}

/* ---- frames and seq ---- */

Test(notify, frames_of_the_four_types) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    il_change c[] = {
        INSERT_EDGE,
        {IL_CHANGE_RULE, "default", "reachable", "registered", 0},
        graph_change("mydb", "created"),
        {IL_CHANGE_SCHEMA, "default", "edge", "dropped", 0},
        {IL_CHANGE_FACTS, "g\"1\\", "r", "update", 7},
    };
    cr_expect_eq(srv_notify_publish(log, c, 5, 1700000000000), 5);
    srv_notify_replay r = replay(log, true, 0, EPOCH);
    cr_assert_eq(r.nframes, 5);
    cr_expect_str_eq(r.frames[0].json,
                     "{\"type\":\"persistent_update\",\"knowledge_graph\":\"default\","
                     "\"relation\":\"edge\",\"operation\":\"insert\",\"count\":5,"
                     "\"timestamp_ms\":1700000000000,\"seq\":1}");
    cr_expect_str_eq(r.frames[1].json, "{\"type\":\"rule_change\",\"knowledge_graph\":\"default\","
                                       "\"rule_name\":\"reachable\",\"operation\":\"registered\","
                                       "\"timestamp_ms\":1700000000000,\"seq\":2}");
    cr_expect_str_eq(r.frames[2].json,
                     "{\"type\":\"kg_change\",\"knowledge_graph\":\"mydb\","
                     "\"operation\":\"created\",\"timestamp_ms\":1700000000000,\"seq\":3}");
    cr_expect_str_eq(r.frames[3].json,
                     "{\"type\":\"schema_change\",\"knowledge_graph\":\"default\","
                     "\"entity\":\"edge\",\"operation\":\"dropped\","
                     "\"timestamp_ms\":1700000000000,\"seq\":4}");
    cr_expect_str_eq(r.frames[4].json,
                     "{\"type\":\"persistent_update\",\"knowledge_graph\":\"g\\\"1\\\\\","
                     "\"relation\":\"r\",\"operation\":\"update\",\"count\":7,"
                     "\"timestamp_ms\":1700000000000,\"seq\":5}");
    srv_notify_replay_free(&r);
    srv_notify_free(log);
}

Test(notify, seq_starts_at_one_and_has_no_gaps) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    cr_expect_str_eq(srv_notify_epoch(log), EPOCH);
    cr_expect_eq(srv_notify_last_seq(log), 0);
    cr_expect_eq(srv_notify_publish(log, NULL, 0, 1), 0);
    cr_expect_eq(srv_notify_publish(log, &INSERT_EDGE, 1, 1), 1);
    il_change two[] = {facts("default", "a"), facts("default", "b")};
    cr_expect_eq(srv_notify_publish(log, two, 2, 2), 3);
    /* nothing about _internal is published, and it takes no seq */
    il_change internal[] = {facts("_internal", "users"), graph_change("_internal", "created")};
    cr_expect_eq(srv_notify_publish(log, internal, 2, 3), 3);
    il_change mixed[] = {facts("_internal", "users"), facts("default", "c")};
    cr_expect_eq(srv_notify_publish(log, mixed, 2, 4), 4);
    cr_expect_eq(srv_notify_last_seq(log), 4);
    expect_frames(log, 0, "1,2,3,4");
    srv_notify_free(log);
}

/* The sink sees every notification as it is published, in seq order. */
typedef struct sunk {
    il_buf text;
    uint64_t last_seq;
    bool in_order;
} sunk;

static void sink(void *ctx, const srv_notification *n) {
    sunk *s = ctx;
    if (n->seq != s->last_seq + 1) s->in_order = false;
    s->last_seq = n->seq;
    il_buf_printf(&s->text, "%s %s\n", n->graph, n->json);
}

Test(notify, the_sink_receives_each_frame_once_in_order) {
    sunk s = {.in_order = true};
    il_buf_init(&s.text);
    srv_notify_log *log = srv_notify_new(EPOCH, 2, sink, &s);
    il_change c[] = {INSERT_EDGE, graph_change("g", "dropped"), facts("_internal", "x")};
    srv_notify_publish(log, c, 3, 9);
    publish_n(log, "h", 1);
    cr_expect(s.in_order);
    cr_expect_eq(s.last_seq, 3);
    cr_expect_str_eq(il_buf_str(&s.text),
                     "default {\"type\":\"persistent_update\",\"knowledge_graph\":\"default\","
                     "\"relation\":\"edge\",\"operation\":\"insert\",\"count\":5,"
                     "\"timestamp_ms\":9,\"seq\":1}\n"
                     "g {\"type\":\"kg_change\",\"knowledge_graph\":\"g\",\"operation\":"
                     "\"dropped\",\"timestamp_ms\":9,\"seq\":2}\n"
                     "h {\"type\":\"persistent_update\",\"knowledge_graph\":\"h\",\"relation\":"
                     "\"r\",\"operation\":\"insert\",\"count\":1,\"timestamp_ms\":1700000000000,"
                     "\"seq\":3}\n");
    srv_notify_free(log);
    il_buf_free(&s.text);
}

/* The clock the stamps come from. Not time(NULL): glibc reads that from the coarse clock, which
 * can still show the previous second a few milliseconds after a stamp was taken. */
static unsigned long long realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000ULL + (unsigned long long)ts.tv_nsec / 1000000ULL;
}

/* The engine's change hook feeds the log: one statement, its notifications. */
Test(notify, engine_changes_become_frames) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    il_engine *e = il_engine_open(NULL, NULL);
    il_engine_set_change_hook(e, srv_notify_change_hook, log);
    il_session *s = il_session_open(e);
    const char *stmts[] = {".kg create demo", "+edge[(1, 2), (2, 3)]", "+edge(1, 2)",
                           "-a(X), +b(X) <- edge(X, _)"};
    unsigned long long before = realtime_ms();
    for (size_t i = 0; i < 4; i++) il_result_free(il_execute(s, stmts[i], strlen(stmts[i])));
    il_engine_close(e);
    srv_notify_replay r = replay(log, true, 0, EPOCH);
    cr_assert_eq(r.nframes, 3);
    const char *want[] = {
        "{\"type\":\"kg_change\",\"knowledge_graph\":\"demo\",\"operation\":\"created\","
        "\"timestamp_ms\":",
        "{\"type\":\"persistent_update\",\"knowledge_graph\":\"demo\",\"relation\":\"edge\","
        "\"operation\":\"insert\",\"count\":2,\"timestamp_ms\":",
        "{\"type\":\"persistent_update\",\"knowledge_graph\":\"demo\",\"relation\":\"b\","
        "\"operation\":\"insert\",\"count\":2,\"timestamp_ms\":",
    };
    for (size_t i = 0; i < 3; i++) {
        const char *json = r.frames[i].json;
        cr_expect_eq(strncmp(json, want[i], strlen(want[i])), 0, "%s", json);
        unsigned long long ms = strtoull(json + strlen(want[i]), NULL, 10);
        cr_expect_geq(ms, before, "%s", json);
        cr_expect_leq(ms, realtime_ms(), "%s", json);
    }
    srv_notify_replay_free(&r);
    srv_notify_free(log);
    val_shutdown();
}

/* ---- the ring and replay ---- */

Test(notify, ring_keeps_the_last_capacity_notifications) {
    srv_notify_log *log = srv_notify_new(EPOCH, 3, NULL, NULL);
    cr_expect_eq(srv_notify_ring_capacity(log), 3);
    publish_n(log, "default", 2);
    expect_frames(log, 0, "1,2");
    publish_n(log, "default", 3);
    expect_frames(log, 2, "3,4,5");
    expect_frames(log, 3, "4,5");
    expect_frames(log, 5, "");
    expect_gap(log, true, 1, EPOCH,
               "Cannot replay notifications after seq 1: notifications after it were evicted "
               "(oldest retained seq is 3). Nothing was replayed; re-read the state you track.");
    expect_gap(log, true, 0, EPOCH,
               "Cannot replay notifications after seq 0: notifications after it were evicted "
               "(oldest retained seq is 3). Nothing was replayed; re-read the state you track.");
    /* the ring wraps around many times */
    publish_n(log, "default", 1000);
    expect_frames(log, 1002, "1003,1004,1005");
    srv_notify_free(log);
}

Test(notify, replay_gap_reasons) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    publish_n(log, "default", 4);
    expect_gap(log, true, 2, "fedcba9876543210",
               "Cannot replay notifications after seq 2: it is from another engine run. "
               "Nothing was replayed; re-read the state you track.");
    expect_gap(log, true, 2, NULL,
               "Cannot replay notifications after seq 2: it is from another engine run. "
               "Nothing was replayed; re-read the state you track.");
    expect_gap(log, true, 5, EPOCH,
               "Cannot replay notifications after seq 5: it is past the last published seq 4. "
               "Nothing was replayed; re-read the state you track.");
    /* the epoch is checked first: another run's cursor says nothing about our seqs */
    expect_gap(log, true, 9, "0000000000000000",
               "Cannot replay notifications after seq 9: it is from another engine run. "
               "Nothing was replayed; re-read the state you track.");
    srv_notify_free(log);
}

Test(notify, no_cursor_replays_nothing) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    publish_n(log, "default", 3);
    srv_notify_replay r = replay(log, false, 0, NULL);
    cr_expect_eq(r.kind, SRV_REPLAY_NONE);
    cr_expect_eq(r.nframes, 0);
    cr_expect_null(r.gap_message);
    cr_expect_eq(r.through_seq, 3);
    srv_notify_replay_free(&r);
    r = replay(log, false, 0, EPOCH); /* an epoch alone is no position */
    cr_expect_eq(r.kind, SRV_REPLAY_NONE);
    srv_notify_replay_free(&r);
    srv_notify_replay_read(log, NULL, NULL, NULL, &r);
    cr_expect_eq(r.kind, SRV_REPLAY_NONE);
    srv_notify_replay_free(&r);
    srv_notify_free(log);
}

Test(notify, replay_of_an_empty_log) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    expect_frames(log, 0, "");
    expect_gap(log, true, 1, EPOCH,
               "Cannot replay notifications after seq 1: it is past the last published seq 0. "
               "Nothing was replayed; re-read the state you track.");
    srv_notify_free(log);
}

Test(notify, replay_marks_where_live_delivery_continues) {
    srv_notify_log *log = srv_notify_new(EPOCH, 2, NULL, NULL);
    publish_n(log, "default", 5);
    srv_notify_replay r = replay(log, true, 4, EPOCH);
    cr_expect_eq(r.through_seq, 5);
    srv_notify_replay_free(&r);
    r = replay(log, true, 1, EPOCH); /* a gap too */
    cr_expect_eq(r.kind, SRV_REPLAY_GAP);
    cr_expect_eq(r.through_seq, 5);
    srv_notify_replay_free(&r);
    srv_notify_free(log);
}

/* ---- visibility ---- */

static bool only_g1_readable(void *ctx, const char *graph) {
    (void)ctx;
    return strcmp(graph, "g1") == 0;
}

static srv_notification note_of(il_change_kind kind, const char *graph) {
    return (srv_notification){1, kind, graph, "{}", 2};
}

Test(notify, visibility_rule) {
    srv_notification f1 = note_of(IL_CHANGE_FACTS, "g1");
    srv_notification r2 = note_of(IL_CHANGE_RULE, "g2");
    srv_notification s1 = note_of(IL_CHANGE_SCHEMA, "g1");
    srv_notification k1 = note_of(IL_CHANGE_GRAPH, "g1");
    srv_notification k2 = note_of(IL_CHANGE_GRAPH, "g2");
    srv_notification fi = note_of(IL_CHANGE_FACTS, "_internal");
    srv_notification ki = note_of(IL_CHANGE_GRAPH, "_internal");
    /* a user on g1, which they may read */
    cr_expect(srv_notify_visible(&f1, "g1", false, only_g1_readable, NULL));
    cr_expect(srv_notify_visible(&s1, "g1", false, only_g1_readable, NULL));
    cr_expect(srv_notify_visible(&k1, "g1", false, only_g1_readable, NULL));
    cr_expect_not(srv_notify_visible(&r2, "g1", false, only_g1_readable, NULL));
    cr_expect_not(srv_notify_visible(&k2, "g1", false, only_g1_readable, NULL));
    /* a user on g2 who lost read access to it (a revoked grant) sees nothing of it */
    cr_expect_not(srv_notify_visible(&r2, "g2", false, only_g1_readable, NULL));
    cr_expect_not(srv_notify_visible(&k2, "g2", false, only_g1_readable, NULL));
    cr_expect_not(srv_notify_visible(&k1, "g2", false, only_g1_readable, NULL));
    /* an admin: everything of the current graph, kg_change of every graph */
    cr_expect(srv_notify_visible(&r2, "g2", true, only_g1_readable, NULL));
    cr_expect(srv_notify_visible(&k1, "g2", true, NULL, NULL));
    cr_expect_not(srv_notify_visible(&f1, "g2", true, NULL, NULL));
    cr_expect_not(srv_notify_visible(&s1, "g2", true, NULL, NULL));
    /* nothing about _internal, for anyone, wherever they are */
    cr_expect_not(srv_notify_visible(&fi, "_internal", true, NULL, NULL));
    cr_expect_not(srv_notify_visible(&ki, "default", true, NULL, NULL));
    cr_expect_not(srv_notify_visible(&ki, "_internal", false, NULL, NULL));
}

Test(notify, replay_applies_the_connection_filter) {
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    il_change c[] = {
        facts("g1", "a"),                                     /* 1 */
        facts("g2", "b"),                                     /* 2 */
        graph_change("g3", "created"),                        /* 3 */
        {IL_CHANGE_RULE, "g1", "r", "dropped", 0},            /* 4 */
        graph_change("g1", "created"),                        /* 5 */
        {IL_CHANGE_SCHEMA, "g2", "e", "created", 0},          /* 6 */
        {IL_CHANGE_FACTS, "_internal", "users", "insert", 1}, /* dropped, no seq */
    };
    srv_notify_publish(log, c, 7, 1);
    srv_notify_cursor cur = {true, 0, EPOCH};
    srv_notify_viewer user = {"g1", false, only_g1_readable, NULL};
    srv_notify_replay r;
    srv_notify_replay_read(log, &cur, srv_notify_viewer_sees, &user, &r);
    char *got = seqs_of(&r);
    cr_expect_str_eq(got, "1,4,5");
    free(got);
    srv_notify_replay_free(&r);
    srv_notify_viewer admin = {"g2", true, NULL, NULL};
    cur.last_seq = 2;
    srv_notify_replay_read(log, &cur, srv_notify_viewer_sees, &admin, &r);
    got = seqs_of(&r);
    cr_expect_str_eq(got, "3,5,6");
    free(got);
    cr_expect_eq(r.through_seq, 6);
    srv_notify_replay_free(&r);
    srv_notify_free(log);
}

/* ---- notification_buffer_size ---- */

Test(notify, capacity_correction) {
    cr_expect_eq(srv_notify_capacity(0), 4096);
    cr_expect_eq(srv_notify_capacity(-1), 4096);
    cr_expect_eq(srv_notify_capacity(1), 1);
    cr_expect_eq(srv_notify_capacity(4096), 4096);
    cr_expect_eq(srv_notify_capacity(100000), 100000);
    cr_expect_eq(srv_notify_capacity(100001), 100000);
    cr_expect_eq(srv_notify_capacity((int64_t)1 << 40), 100000);
    srv_notify_log *log = srv_notify_new(EPOCH, 0, NULL, NULL);
    cr_expect_eq(srv_notify_ring_capacity(log), 4096);
    srv_notify_free(log);
    log = srv_notify_new(EPOCH, 5000000, NULL, NULL);
    cr_expect_eq(srv_notify_ring_capacity(log), 100000);
    srv_notify_free(log);
}

/* Sets key to value from src, or fails the test with the reason. */
static void set_key(srv_config *cfg, const char *key, const char *value, srv_cfg_source src) {
    char err[256];
    cr_assert(srv_config_set(cfg, key, value, src, err, sizeof err), "%s", err);
}

static bool key_refused(srv_config *cfg, const char *key, const char *value) {
    char err[256];
    return !srv_config_set(cfg, key, value, SRV_SRC_FLAG, err, sizeof err);
}

/* Applies a [http.rate_limit] table of one line, or fails the test with the reason. */
static void apply_rate_limit_toml(srv_config *cfg, const char *line) {
    char toml[128], err[256];
    int n = snprintf(toml, sizeof toml, "[http.rate_limit]\n%s\n", line);
    cr_assert(srv_config_apply_toml(cfg, toml, (size_t)n, "t.toml", NULL, err, sizeof err), "%s",
              err);
}

/* The configuration takes 0 and large values (they are corrected, not refused) and keeps
 * what was written; negative values are refused like any out-of-range integer. */
Test(notify, configuration_key) {
    srv_config cfg;
    srv_config_init(&cfg);
    const char *key = "http.rate_limit.notification_buffer_size";
    cr_expect_eq(cfg.notification_buffer_size, 4096);
    set_key(&cfg, key, "0", SRV_SRC_FLAG);
    cr_expect_eq(cfg.notification_buffer_size, 0);
    cr_expect_eq(srv_notify_capacity(cfg.notification_buffer_size), 4096);
    set_key(&cfg, key, "250000", SRV_SRC_FLAG);
    cr_expect_eq(srv_notify_capacity(cfg.notification_buffer_size), 100000);
    cr_expect(key_refused(&cfg, key, "-1"));
    apply_rate_limit_toml(&cfg, "notification_buffer_size = 16");
    cr_expect_eq(cfg.notification_buffer_size, 16);
    cr_expect_eq(cfg.src[SRV_K_NOTIFICATION_BUFFER_SIZE], SRV_SRC_FILE);
    srv_config_free(&cfg);
}

/* The pacing window's settings (srv_deliver.c): 3 ms per open session up to 1 s by
 * default, each settable by flag, environment or file within its range. */
Test(notify, pacing_keys) {
    srv_config cfg;
    srv_config_init(&cfg);
    const char *per = "http.rate_limit.notification_ms_per_session";
    cr_expect_eq(cfg.notification_ms_per_session, 3);
    cr_expect_eq(cfg.notification_coalesce_ms, 1000);
    set_key(&cfg, per, "0", SRV_SRC_FLAG);
    cr_expect_eq(cfg.notification_ms_per_session, 0);
    set_key(&cfg, per, "100", SRV_SRC_ENV);
    cr_expect_eq(cfg.notification_ms_per_session, 100);
    cr_expect(key_refused(&cfg, per, "101"));
    cr_expect(key_refused(&cfg, per, "-1"));
    cr_expect_eq(cfg.notification_ms_per_session, 100);
    apply_rate_limit_toml(&cfg, "notification_ms_per_session = 6");
    cr_expect_eq(cfg.notification_ms_per_session, 6);
    cr_expect_eq(cfg.src[SRV_K_NOTIFICATION_SESSION_MS], SRV_SRC_FILE);
    srv_config_free(&cfg);
}

/* ---- threads ---- */

enum { THREADS = 4, PER_THREAD = 1000 };

static void *publisher(void *log) {
    for (int i = 0; i < PER_THREAD; i++) {
        il_change two[] = {facts("default", "a"), facts("default", "b")};
        srv_notify_publish(log, two, 2, (uint64_t)i);
    }
    return NULL;
}

/* Replays while the publishers run; returns (void *)1 when a replay was inconsistent
 * (asserting is for the test's own thread). */
static void *replayer(void *log) {
    bool bad = false;
    for (int i = 0; i < 200; i++) {
        uint64_t last = srv_notify_last_seq(log);
        srv_notify_cursor cur = {true, last > 50 ? last - 50 : 0, EPOCH};
        srv_notify_replay r;
        srv_notify_replay_read(log, &cur, NULL, NULL, &r);
        /* frames are the consecutive seqs after the cursor, up to through_seq */
        if (r.kind == SRV_REPLAY_FRAMES) {
            for (size_t j = 0; j < r.nframes; j++)
                if (r.frames[j].seq != cur.last_seq + 1 + j) bad = true;
            if (r.nframes && r.frames[r.nframes - 1].seq != r.through_seq) bad = true;
        }
        if (r.through_seq < last) bad = true;
        srv_notify_replay_free(&r);
    }
    return bad ? (void *)1 : NULL;
}

/* Concurrent publishers: every seq is assigned once, the sink sees them in order, and a
 * statement's notifications are consecutive. */
Test(notify, concurrent_publishing_keeps_one_order) {
    sunk s = {.in_order = true};
    il_buf_init(&s.text);
    srv_notify_log *log = srv_notify_new(EPOCH, 100, sink, &s);
    pthread_t t[THREADS + 1];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, publisher, log);
    pthread_create(&t[THREADS], NULL, replayer, log);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    void *replay_bad;
    pthread_join(t[THREADS], &replay_bad);
    cr_expect_null(replay_bad, "a replay during publishing was inconsistent");
    cr_expect(s.in_order);
    cr_expect_eq(s.last_seq, THREADS * PER_THREAD * 2);
    cr_expect_eq(srv_notify_last_seq(log), THREADS * PER_THREAD * 2);
    /* each statement's pair is adjacent: relation a then b */
    const char *p = il_buf_str(&s.text);
    for (int i = 0; i < THREADS * PER_THREAD; i++) {
        const char *a = strstr(p, "\"relation\":\"a\"");
        const char *b = strstr(p, "\"relation\":\"b\"");
        cr_assert(a && b && a < b);
        const char *next_a = strstr(a + 1, "\"relation\":\"a\"");
        cr_assert(!next_a || b < next_a);
        p = b + 1;
    }
    expect_frames(log, THREADS * PER_THREAD * 2 - 4, "7997,7998,7999,8000");
    srv_notify_free(log);
    il_buf_free(&s.text);
}
