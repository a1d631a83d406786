/* The notification log (srv_notify.h): seq numbering, the frames' JSON, the bounded ring
 * and replay from it, and the visibility rule. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/strcopy.h"
#include "base/buf.h"
#include "base/json_str.h"
#include "server/srv_notify.h"

/* A retained notification; json is owned, and graph is stored after it, in the same
 * allocation (one per notification, made on every write). */
typedef struct entry {
    uint64_t seq;
    il_change_kind kind;
    char *graph;
    char *json;
    size_t len;
} entry;

struct srv_notify_log {
    pthread_mutex_t lock; /* guards everything below but the constants */
    char epoch[17];
    srv_notify_sink sink;
    void *sink_ctx;
    entry *ring;     /* capacity slots */
    size_t capacity; /* constant */
    size_t oldest;   /* slot of the oldest retained entry */
    size_t count;    /* retained entries: the last `count` seqs, oldest first */
    uint64_t last_seq;
    uint64_t graph_changes; /* kg_change notifications published */
    il_buf scratch;         /* where a notification is rendered, kept between commits */
};

size_t srv_notify_capacity(int64_t configured) {
    if (configured <= 0) return SRV_NOTIFY_DEFAULT_CAPACITY;
    if (configured > SRV_NOTIFY_MAX_CAPACITY) return SRV_NOTIFY_MAX_CAPACITY;
    return (size_t)configured;
}

srv_notify_log *srv_notify_new(const char *epoch, int64_t configured, srv_notify_sink sink,
                               void *sink_ctx) {
    srv_notify_log *log = calloc(1, sizeof *log);
    if (!log) return NULL;
    pthread_mutex_init(&log->lock, NULL);
    il_str_copy(log->epoch, sizeof log->epoch, epoch);
    log->sink = sink;
    log->sink_ctx = sink_ctx;
    log->capacity = srv_notify_capacity(configured);
    log->ring = calloc(log->capacity, sizeof *log->ring);
    if (!log->ring) {
        pthread_mutex_destroy(&log->lock);
        free(log);
        return NULL;
    }
    return log;
}

static void entry_free(entry *en) {
    free(en->json);
    memset(en, 0, sizeof *en);
}

void srv_notify_free(srv_notify_log *log) {
    if (!log) return;
    for (size_t i = 0; i < log->count; i++)
        entry_free(&log->ring[(log->oldest + i) % log->capacity]);
    free(log->ring);
    il_buf_free(&log->scratch);
    pthread_mutex_destroy(&log->lock);
    free(log);
}

const char *srv_notify_epoch(const srv_notify_log *log) {
    return log->epoch;
}

size_t srv_notify_ring_capacity(const srv_notify_log *log) {
    return log->capacity;
}

uint64_t srv_notify_last_seq(srv_notify_log *log) {
    pthread_mutex_lock(&log->lock);
    uint64_t seq = log->last_seq;
    pthread_mutex_unlock(&log->lock);
    return seq;
}

uint64_t srv_notify_graph_changes(srv_notify_log *log) {
    pthread_mutex_lock(&log->lock);
    uint64_t n = log->graph_changes;
    pthread_mutex_unlock(&log->lock);
    return n;
}

static void json_str(il_buf *b, const char *s) {
    il_json_str(b, s, strlen(s));
}

/* The frame of one change, fields in the original's order (protocol.md 2.8.1);
 * persistent_update's optional session_id is never set there, so it is left out. */
static void render(il_buf *b, const il_change *c, uint64_t timestamp_ms, uint64_t seq) {
    static const char *const TYPES[] = {
        [IL_CHANGE_FACTS] = "persistent_update",
        [IL_CHANGE_RULE] = "rule_change",
        [IL_CHANGE_GRAPH] = "kg_change",
        [IL_CHANGE_SCHEMA] = "schema_change",
    };
    static const char *const NAME_FIELDS[] = {
        [IL_CHANGE_FACTS] = "relation",
        [IL_CHANGE_RULE] = "rule_name",
        [IL_CHANGE_GRAPH] = NULL,
        [IL_CHANGE_SCHEMA] = "entity",
    };
    /* Written piece by piece: printf's format parsing was most of a write's notification. */
    il_buf_puts(b, "{\"type\":\"");
    il_buf_puts(b, TYPES[c->kind]);
    il_buf_puts(b, "\",\"knowledge_graph\":");
    json_str(b, c->graph);
    if (NAME_FIELDS[c->kind]) {
        il_buf_puts(b, ",\"");
        il_buf_puts(b, NAME_FIELDS[c->kind]);
        il_buf_puts(b, "\":");
        json_str(b, c->name ? c->name : "");
    }
    il_buf_puts(b, ",\"operation\":");
    json_str(b, c->operation);
    if (c->kind == IL_CHANGE_FACTS) {
        il_buf_puts(b, ",\"count\":");
        il_buf_put_u64(b, (unsigned long long)c->count);
    }
    il_buf_puts(b, ",\"timestamp_ms\":");
    il_buf_put_u64(b, (unsigned long long)timestamp_ms);
    il_buf_puts(b, ",\"seq\":");
    il_buf_put_u64(b, (unsigned long long)seq);
    il_buf_putc(b, '}');
}

static srv_notification view_of(const entry *en) {
    return (srv_notification){en->seq, en->kind, en->graph, en->json, en->len};
}

static bool is_internal(const char *graph) {
    return strcmp(graph, "_internal") == 0;
}

uint64_t srv_notify_publish(srv_notify_log *log, const il_change *changes, size_t n,
                            uint64_t timestamp_ms) {
    pthread_mutex_lock(&log->lock);
    il_buf *b = &log->scratch;
    for (size_t i = 0; i < n; i++) {
        const il_change *c = &changes[i];
        if (is_internal(c->graph)) continue;
        uint64_t seq = ++log->last_seq;
        if (c->kind == IL_CHANGE_GRAPH) log->graph_changes++;
        il_buf_clear(b);
        render(b, c, timestamp_ms, seq);
        entry *slot;
        char *reuse = NULL;
        if (log->count == log->capacity) {
            /* the oldest goes; its slot, and its allocation, take the newest (a full ring
               then costs no allocation per notification) */
            slot = &log->ring[log->oldest];
            reuse = slot->json;
            slot->json = NULL;
            entry_free(slot);
            log->oldest = (log->oldest + 1) % log->capacity;
        } else {
            slot = &log->ring[(log->oldest + log->count++) % log->capacity];
        }
        size_t glen = strlen(c->graph);
        char *json = realloc(reuse, b->len + 1 + glen + 1);
        if (!json) abort();
        memcpy(json, b->data, b->len + 1);
        memcpy(json + b->len + 1, c->graph, glen + 1);
        *slot = (entry){seq, c->kind, json + b->len + 1, json, b->len};
        if (log->sink) {
            srv_notification view = view_of(slot);
            log->sink(log->sink_ctx, &view);
        }
    }
    uint64_t last = log->last_seq;
    pthread_mutex_unlock(&log->lock);
    return last;
}

void srv_notify_change_hook(void *log, const il_change *changes, size_t n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    srv_notify_publish(log, changes, n, now_ms);
}

bool srv_notify_visible(const srv_notification *n, const char *conn_graph, bool is_admin,
                        srv_notify_readable_fn readable, void *readable_ctx) {
    if (is_internal(n->graph)) return false;
    if (strcmp(n->graph, conn_graph) == 0)
        return is_admin || !readable || readable(readable_ctx, conn_graph);
    /* other graphs: only that they were created or dropped, and only for admins, who may
       read every graph anyway */
    return n->kind == IL_CHANGE_GRAPH && is_admin;
}

bool srv_notify_viewer_sees(void *viewer, const srv_notification *n) {
    const srv_notify_viewer *v = viewer;
    return srv_notify_visible(n, v->graph, v->is_admin, v->readable, v->readable_ctx);
}

/* A replay_gap message; `reason` is one of the three of the original's notification log. */
static char *gap(uint64_t after, const char *reason) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b,
                  "Cannot replay notifications after seq %llu: %s. Nothing was replayed; "
                  "re-read the state you track.",
                  (unsigned long long)after, reason);
    return il_buf_take(&b);
}

void srv_notify_replay_read(srv_notify_log *log, const srv_notify_cursor *cur,
                            srv_notify_filter filter, void *filter_ctx, srv_notify_replay *out) {
    memset(out, 0, sizeof *out);
    char reason[128];
    pthread_mutex_lock(&log->lock);
    out->through_seq = log->last_seq;
    uint64_t after = cur ? cur->last_seq : 0;
    uint64_t oldest = log->count ? log->ring[log->oldest].seq : log->last_seq + 1;
    if (!cur || !cur->has_last_seq) {
        out->kind = SRV_REPLAY_NONE;
    } else if (!cur->epoch || strcmp(cur->epoch, log->epoch) != 0) {
        /* its seqs count another run's notifications: they say nothing about ours */
        out->kind = SRV_REPLAY_GAP;
        out->gap_message = gap(after, "it is from another engine run");
    } else if (after > log->last_seq) {
        snprintf(reason, sizeof reason, "it is past the last published seq %llu",
                 (unsigned long long)log->last_seq);
        out->kind = SRV_REPLAY_GAP;
        out->gap_message = gap(after, reason);
    } else if (after + 1 < oldest) {
        snprintf(reason, sizeof reason,
                 "notifications after it were evicted (oldest retained seq is %llu)",
                 (unsigned long long)oldest);
        out->kind = SRV_REPLAY_GAP;
        out->gap_message = gap(after, reason);
    } else {
        out->kind = SRV_REPLAY_FRAMES;
        size_t skip = (size_t)(after + 1 - oldest); /* retained entries not after the cursor */
        if (log->count > skip) out->frames = malloc((log->count - skip) * sizeof *out->frames);
        for (size_t i = skip; i < log->count; i++) {
            const entry *en = &log->ring[(log->oldest + i) % log->capacity];
            srv_notification view = view_of(en);
            if (filter && !filter(filter_ctx, &view)) continue;
            out->frames[out->nframes++] =
                (srv_notify_frame){en->seq, strndup(en->json, en->len), en->len};
        }
    }
    pthread_mutex_unlock(&log->lock);
}

uint64_t srv_notify_read_after(srv_notify_log *log, uint64_t after, srv_notify_filter filter,
                               void *filter_ctx, void (*emit)(void *ctx, const srv_notification *n),
                               void *emit_ctx, uint64_t *evicted) {
    pthread_mutex_lock(&log->lock);
    uint64_t oldest = log->count ? log->ring[log->oldest].seq : log->last_seq + 1;
    *evicted = after + 1 < oldest ? oldest - after - 1 : 0;
    size_t skip = after + 1 > oldest ? (size_t)(after + 1 - oldest) : 0;
    for (size_t i = skip; i < log->count; i++) {
        const entry *en = &log->ring[(log->oldest + i) % log->capacity];
        srv_notification view = view_of(en);
        if (!filter || filter(filter_ctx, &view)) emit(emit_ctx, &view);
    }
    uint64_t last = log->last_seq;
    pthread_mutex_unlock(&log->lock);
    return last;
}

void srv_notify_replay_free(srv_notify_replay *r) {
    for (size_t i = 0; i < r->nframes; i++) free(r->frames[i].json);
    free(r->frames);
    free(r->gap_message);
    memset(r, 0, sizeof *r);
}
