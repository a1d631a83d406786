/* Configuration loading (srv_config.h): a table of the keys the server honours (name,
 * type, range, default), and the three sources that set them. Keys the original
 * documents but this server does not implement yet are named in a warning, so that a
 * configuration written for the original is neither refused nor silently misread. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "server/srv_config.h"
#include "server/srv_toml.h"

typedef enum key_type { KT_STR, KT_OPT_STR, KT_INT, KT_STRS, KT_BOOL } key_type;

typedef struct key_desc {
    const char *name;
    key_type type;
    size_t off;
    int64_t min, max;
} key_desc;

#define MS_MAX    ((int64_t)1 << 40)
#define COUNT_MAX ((int64_t)1 << 40)

static const key_desc KEYS[SRV_CFG_NKEYS] = {
    [SRV_K_DATA_DIR] = {"storage.data_dir", KT_STR, offsetof(srv_config, data_dir), 0, 0},
    [SRV_K_BACKUP_DIR] = {"storage.backup_dir", KT_OPT_STR, offsetof(srv_config, backup_dir), 0, 0},
    [SRV_K_MAX_QUERY_SIZE] = {"storage.performance.max_query_size_bytes", KT_INT,
                              offsetof(srv_config, max_query_size_bytes), 0, COUNT_MAX},
    [SRV_K_MAX_RESULT_ROWS] = {"storage.performance.max_result_rows", KT_INT,
                               offsetof(srv_config, max_result_rows), 0, COUNT_MAX},
    [SRV_K_HOST] = {"http.host", KT_STR, offsetof(srv_config, host), 0, 0},
    [SRV_K_PORT] = {"http.port", KT_INT, offsetof(srv_config, port), 0, 65535},
    [SRV_K_WS_IDLE_TIMEOUT] = {"http.ws_idle_timeout_ms", KT_INT,
                               offsetof(srv_config, ws_idle_timeout_ms), 0, MS_MAX},
    [SRV_K_WS_AUTH_TIMEOUT] = {"http.ws_auth_timeout_ms", KT_INT,
                               offsetof(srv_config, ws_auth_timeout_ms), 0, MS_MAX},
    [SRV_K_WS_PING_INTERVAL] = {"http.ws_ping_interval_ms", KT_INT,
                                offsetof(srv_config, ws_ping_interval_ms), 0, MS_MAX},
    [SRV_K_HEADER_TIMEOUT] = {"http.request_header_timeout_ms", KT_INT,
                              offsetof(srv_config, header_timeout_ms), 0, MS_MAX},
    [SRV_K_BUSY_POLL] = {"http.busy_poll_us", KT_INT, offsetof(srv_config, busy_poll_us), 0,
                         1000000},
    [SRV_K_TRUSTED_PROXIES] = {"http.trusted_proxies", KT_STRS,
                               offsetof(srv_config, trusted_proxies), 0, 0},
    [SRV_K_CORS_ORIGINS] = {"http.cors_origins", KT_STRS, offsetof(srv_config, cors_origins), 0, 0},
    [SRV_K_CORS_ALLOW_ALL] = {"http.cors_allow_all", KT_BOOL, offsetof(srv_config, cors_allow_all),
                              0, 1},
    [SRV_K_GUI_ENABLED] = {"http.gui.enabled", KT_BOOL, offsetof(srv_config, gui_enabled), 0, 1},
    [SRV_K_GUI_STATIC_DIR] = {"http.gui.static_dir", KT_STR, offsetof(srv_config, gui_static_dir),
                              0, 0},
    [SRV_K_CREDENTIALS_FILE] = {"http.auth.credentials_file", KT_OPT_STR,
                                offsetof(srv_config, credentials_file), 0, 0},
    [SRV_K_BOOTSTRAP_PASSWORD] = {"http.auth.bootstrap_admin_password", KT_OPT_STR,
                                  offsetof(srv_config, bootstrap_admin_password), 0, 0},
    [SRV_K_MAX_CONNECTIONS] = {"http.rate_limit.max_connections", KT_INT,
                               offsetof(srv_config, max_connections), 0, COUNT_MAX},
    [SRV_K_MAX_CONNECTIONS_PER_IP] = {"http.rate_limit.max_connections_per_ip", KT_INT,
                                      offsetof(srv_config, max_connections_per_ip), 0, COUNT_MAX},
    [SRV_K_MAX_WS_CONNECTIONS] = {"http.rate_limit.max_ws_connections", KT_INT,
                                  offsetof(srv_config, max_ws_connections), 0, COUNT_MAX},
    [SRV_K_WS_MAX_MESSAGES] = {"http.rate_limit.ws_max_messages_per_sec", KT_INT,
                               offsetof(srv_config, ws_max_messages_per_sec), 0, COUNT_MAX},
    [SRV_K_WS_MAX_LIFETIME] = {"http.rate_limit.ws_max_lifetime_secs", KT_INT,
                               offsetof(srv_config, ws_max_lifetime_secs), 0, COUNT_MAX},
    [SRV_K_PER_IP_MAX_RPS] = {"http.rate_limit.per_ip_max_rps", KT_INT,
                              offsetof(srv_config, per_ip_max_rps), 0, COUNT_MAX},
    [SRV_K_WS_MAX_PREAUTH] = {"http.rate_limit.ws_max_preauth_per_ip", KT_INT,
                              offsetof(srv_config, ws_max_preauth_per_ip), 0, COUNT_MAX},
    [SRV_K_NOTIFICATION_BUFFER_SIZE] = {"http.rate_limit.notification_buffer_size", KT_INT,
                                        offsetof(srv_config, notification_buffer_size), 0,
                                        COUNT_MAX},
    [SRV_K_NOTIFICATION_COALESCE] = {"http.rate_limit.notification_coalesce_ms", KT_INT,
                                     offsetof(srv_config, notification_coalesce_ms), 0, 10000},
    [SRV_K_NOTIFICATION_SESSION_MS] = {"http.rate_limit.notification_ms_per_session", KT_INT,
                                       offsetof(srv_config, notification_ms_per_session), 0, 100},
    [SRV_K_WS_MAX_SUBSCRIPTIONS] = {"http.rate_limit.ws_max_subscriptions", KT_INT,
                                    offsetof(srv_config, ws_max_subscriptions), 0, COUNT_MAX},
    [SRV_K_DURABILITY_MODE] = {"storage.persist.durability_mode", KT_STR,
                               offsetof(srv_config, durability_mode), 0, 0},
    [SRV_K_BATCH_SYNC] = {"storage.persist.batch_sync_ms", KT_INT,
                          offsetof(srv_config, batch_sync_ms), 1, 60000},
    [SRV_K_QUERY_TIMEOUT] = {"storage.performance.query_timeout_ms", KT_INT,
                             offsetof(srv_config, query_timeout_ms), 0, MS_MAX},
    [SRV_K_MAX_QUERY_MEMORY] = {"storage.performance.max_query_memory_bytes", KT_INT,
                                offsetof(srv_config, max_query_memory_bytes), 0, INT64_MAX},
    [SRV_K_MAX_TOTAL_QUERY_MEMORY] = {"storage.performance.max_total_query_memory_bytes", KT_INT,
                                      offsetof(srv_config, max_total_query_memory_bytes), 0,
                                      INT64_MAX},
    [SRV_K_MAX_SNAPSHOT_MEMORY] = {"storage.performance.max_snapshot_memory_bytes", KT_INT,
                                   offsetof(srv_config, max_snapshot_memory_bytes), 0, INT64_MAX},
    [SRV_K_MAINTAINED_VIEWS] = {"storage.performance.maintained_views", KT_BOOL,
                                offsetof(srv_config, maintained_views), 0, 1},
    [SRV_K_EVAL_THREADS] = {"storage.performance.eval_threads", KT_INT,
                            offsetof(srv_config, eval_threads), 0, IL_EVAL_THREADS_MAX},
    [SRV_K_WS_MAX_IN_FLIGHT] = {"http.rate_limit.ws_max_in_flight_requests", KT_INT,
                                offsetof(srv_config, ws_max_in_flight_requests), 1, 4096},
    [SRV_K_COMPUTE_PERMITS] = {"admission.compute_permits", KT_INT,
                               offsetof(srv_config, compute_permits), 0, 1024},
    [SRV_K_MAX_QUEUED] = {"admission.max_queued", KT_INT, offsetof(srv_config, max_queued), 0,
                          COUNT_MAX},
    [SRV_K_MAX_WAIT] = {"admission.max_wait_ms", KT_INT, offsetof(srv_config, max_wait_ms), 0,
                        MS_MAX},
    [SRV_K_INTERACTIVE_WEIGHT] = {"admission.interactive.weight", KT_INT,
                                  offsetof(srv_config, lane_weight[0]), 1, 1000},
    [SRV_K_INTERACTIVE_MIN_PERMITS] = {"admission.interactive.min_permits", KT_INT,
                                       offsetof(srv_config, lane_min_permits[0]), 0, 1024},
    [SRV_K_INTERACTIVE_MAX_PERMITS] = {"admission.interactive.max_permits", KT_INT,
                                       offsetof(srv_config, lane_max_permits[0]), 0, 1024},
    [SRV_K_INTERACTIVE_MAX_QUEUED] = {"admission.interactive.max_queued", KT_INT,
                                      offsetof(srv_config, lane_max_queued[0]), 0, COUNT_MAX},
    [SRV_K_WRITE_WEIGHT] = {"admission.write.weight", KT_INT, offsetof(srv_config, lane_weight[1]),
                            1, 1000},
    [SRV_K_WRITE_MIN_PERMITS] = {"admission.write.min_permits", KT_INT,
                                 offsetof(srv_config, lane_min_permits[1]), 0, 1024},
    [SRV_K_WRITE_MAX_PERMITS] = {"admission.write.max_permits", KT_INT,
                                 offsetof(srv_config, lane_max_permits[1]), 0, 1024},
    [SRV_K_WRITE_MAX_QUEUED] = {"admission.write.max_queued", KT_INT,
                                offsetof(srv_config, lane_max_queued[1]), 0, COUNT_MAX},
    [SRV_K_BACKGROUND_WEIGHT] = {"admission.background.weight", KT_INT,
                                 offsetof(srv_config, lane_weight[2]), 1, 1000},
    [SRV_K_BACKGROUND_MIN_PERMITS] = {"admission.background.min_permits", KT_INT,
                                      offsetof(srv_config, lane_min_permits[2]), 0, 1024},
    [SRV_K_BACKGROUND_MAX_PERMITS] = {"admission.background.max_permits", KT_INT,
                                      offsetof(srv_config, lane_max_permits[2]), 0, 1024},
    [SRV_K_BACKGROUND_MAX_QUEUED] = {"admission.background.max_queued", KT_INT,
                                     offsetof(srv_config, lane_max_queued[2]), 0, COUNT_MAX},
    [SRV_K_MAX_WAL_SIZE] = {"storage.persist.max_wal_size_bytes", KT_INT,
                            offsetof(srv_config, max_wal_size_bytes), 0, INT64_MAX},
    [SRV_K_WAL_SEGMENT] = {"storage.persist.wal_segment_bytes", KT_INT,
                           offsetof(srv_config, wal_segment_bytes), 4096, (int64_t)1 << 30},
    [SRV_K_TIMING_MODE] = {"storage.performance.timing_mode", KT_STR,
                           offsetof(srv_config, timing_mode), 0, 0},
};

/* Documented for the original (protocol.md 5.2, protocol-later.md 3) and accepted, but
 * without effect here yet: the features behind them (durability, threads, logging,
 * replication ...) are not built. */
static const char *const NOT_IMPLEMENTED[] = {
    "storage.default_knowledge_graph",
    "storage.default_database",
    "storage.auto_create_knowledge_graphs",
    "storage.auto_create_databases",
    "storage.max_knowledge_graphs",
    "storage.persistence.format",
    "storage.persistence.compression",
    "storage.persistence.auto_save_interval",
    "storage.persistence.enable_wal",
    "storage.persist.enabled",
    "storage.persist.buffer_size",
    "storage.persist.compaction_window",
    "storage.persist.auto_compact_threshold",
    "storage.persist.auto_compact_interval_secs",
    "storage.performance.initial_capacity",
    "storage.performance.batch_size",
    "storage.performance.async_io",
    "storage.performance.num_threads",
    "storage.performance.max_insert_tuples",
    "storage.performance.max_string_value_bytes",
    "storage.performance.slow_query_log_ms",
    "storage.performance.max_query_cost",
    "storage.performance.max_graph_memory_bytes",
    "storage.performance.max_recursion_iterations",
    "optimization.enable_join_planning",
    "optimization.enable_sip_rewriting",
    "optimization.enable_subplan_sharing",
    "optimization.enable_boolean_specialization",
    "optimization.enable_magic_sets",
    "logging.level",
    "logging.format",
    "http.enabled",
    "http.ws_send_timeout_ms",
    "http.shutdown_timeout_secs",
    "http.stats_timeout_secs",
    "http.auth.session_timeout_secs",
    "http.rate_limit.subscription_coalesce_ms",
    "http.rate_limit.subscription_share_parameterized",
    "replication.role",
    "replication.token",
    "replication.retain_bytes",
    "replication.heartbeat_ms",
    "replication.primary_url",
    "replication.timeout_ms",
    "replication.mode",
    "replication.on_follower_loss",
    "replication.sync_timeout_ms",
};

static bool not_implemented(const char *key) {
    for (size_t i = 0; i < sizeof NOT_IMPLEMENTED / sizeof *NOT_IMPLEMENTED; i++)
        if (strcmp(NOT_IMPLEMENTED[i], key) == 0) return true;
    return false;
}

static int find_key(const char *name) {
    for (int i = 0; i < SRV_CFG_NKEYS; i++)
        if (strcmp(KEYS[i].name, name) == 0) return i;
    return -1;
}

const char *srv_config_key_name(srv_cfg_key k) {
    return KEYS[k].name;
}

static char **str_slot(srv_config *c, int k) {
    return (char **)((char *)c + KEYS[k].off);
}

static int64_t *int_slot(srv_config *c, int k) {
    return (int64_t *)((char *)c + KEYS[k].off);
}

static char ***strs_slot(srv_config *c, int k) {
    return (char ***)((char *)c + KEYS[k].off);
}

/* The number of items of a KT_STRS key. */
static size_t *count_slot(srv_config *c, int k) {
    return k == SRV_K_CORS_ORIGINS ? &c->ncors_origins : &c->ntrusted_proxies;
}

static void set_strs(srv_config *c, int k, char **items, size_t n) {
    char ***v = strs_slot(c, k);
    size_t *count = count_slot(c, k);
    for (size_t i = 0; i < *count; i++) free((*v)[i]);
    free(*v);
    *v = NULL;
    *count = 0;
    if (n == 0) return;
    *v = malloc(n * sizeof **v);
    for (size_t i = 0; i < n; i++) (*v)[(*count)++] = strdup(items[i]);
}

void srv_config_init(srv_config *c) {
    memset(c, 0, sizeof *c);
    c->data_dir = strdup("./data");
    c->max_query_size_bytes = 1048576;
    c->max_result_rows = 100000;
    c->host = strdup("127.0.0.1");
    c->port = 8080;
    c->ws_idle_timeout_ms = 300000;
    c->ws_auth_timeout_ms = 5000;
    c->ws_ping_interval_ms = 30000;
    c->max_connections = 1024;
    c->max_connections_per_ip = 128;
    c->header_timeout_ms = 10000;
    c->max_ws_connections = 1024;
    c->ws_max_messages_per_sec = 100;
    c->ws_max_lifetime_secs = 86400;
    c->per_ip_max_rps = 100;
    c->ws_max_preauth_per_ip = 16;
    c->notification_buffer_size = 4096;
    c->notification_coalesce_ms = 1000;
    c->notification_ms_per_session = 3;
    c->ws_max_subscriptions = 64;
    c->durability_mode = strdup("immediate");
    c->batch_sync_ms = 10;
    c->query_timeout_ms = 30000;
    c->max_query_memory_bytes = (int64_t)4 << 30;
    c->max_snapshot_memory_bytes = (int64_t)1 << 30;
    c->maintained_views = 1;
    c->ws_max_in_flight_requests = 16;
    c->max_queued = 1024;
    c->lane_weight[0] = c->lane_weight[1] = 4; /* srv_lanes_default_limits */
    c->lane_weight[2] = 1;
    c->max_wal_size_bytes = 64 << 20;
    c->wal_segment_bytes = 16 << 20;
    c->gui_enabled = 1; /* as the original; nothing is served unless the directory exists */
    c->gui_static_dir = strdup("./gui/dist");
    c->timing_mode = strdup("summary");
}

void srv_config_free(srv_config *c) {
    for (int k = 0; k < SRV_CFG_NKEYS; k++) {
        if (KEYS[k].type == KT_STR || KEYS[k].type == KT_OPT_STR) free(*str_slot(c, k));
        if (KEYS[k].type == KT_STRS) set_strs(c, k, NULL, 0);
    }
    memset(c, 0, sizeof *c);
}

/* Stores a parsed value into key k after checking its type and range. */
static bool store(srv_config *c, int k, const srv_toml_value *v, srv_cfg_source src, char *err,
                  size_t errlen) {
    const key_desc *d = &KEYS[k];
    switch (d->type) {
    case KT_STR:
    case KT_OPT_STR:
        if (v->type != SRV_TOML_STRING) break;
        if (d->type == KT_STR && !v->str[0]) {
            snprintf(err, errlen, "%s must not be empty", d->name);
            return false;
        }
        if (k == SRV_K_TIMING_MODE && strcmp(v->str, "off") != 0 &&
            strcmp(v->str, "summary") != 0 && strcmp(v->str, "detailed") != 0) {
            snprintf(err, errlen, "%s must be off, summary or detailed, not '%s'", d->name, v->str);
            return false;
        }
        free(*str_slot(c, k));
        *str_slot(c, k) = strdup(v->str);
        c->src[k] = src;
        return true;
    case KT_INT:
        if (v->type != SRV_TOML_INT) break;
        if (v->i < d->min || v->i > d->max) {
            snprintf(err, errlen, "%s must be between %lld and %lld, not %lld", d->name,
                     (long long)d->min, (long long)d->max, (long long)v->i);
            return false;
        }
        *int_slot(c, k) = v->i;
        c->src[k] = src;
        return true;
    case KT_STRS:
        if (v->type != SRV_TOML_ARRAY) break;
        set_strs(c, k, v->items, v->nitems);
        c->src[k] = src;
        return true;
    case KT_BOOL:
        if (v->type != SRV_TOML_BOOL) break;
        *int_slot(c, k) = v->b;
        c->src[k] = src;
        return true;
    }
    static const char *const WANT[] = {"a string", "a string", "an integer", "an array of strings",
                                       "true or false"};
    snprintf(err, errlen, "%s must be %s, not %s", d->name, WANT[d->type],
             srv_toml_type_name(v->type));
    return false;
}

/* Collects the names a source used that are not implemented, for one warning line. */
static void note_ignored(il_buf *ignored, const char *key) {
    il_buf_puts(ignored, ignored->len ? ", " : "");
    il_buf_puts(ignored, key);
}

static void warn_ignored(FILE *warn, const char *origin, il_buf *ignored) {
    if (warn && ignored->len)
        fprintf(warn, "WARNING: %s: accepted but not implemented yet (no effect): %s\n", origin,
                ignored->data);
    il_buf_free(ignored);
}

bool srv_config_apply_toml(srv_config *c, const char *text, size_t len, const char *origin,
                           FILE *warn, char *err, size_t errlen) {
    srv_toml t;
    if (!srv_toml_parse(text, len, &t, err, errlen)) return false;
    il_buf ignored;
    il_buf_init(&ignored);
    bool ok = true;
    for (size_t i = 0; i < t.n && ok; i++) {
        const srv_toml_entry *e = &t.entries[i];
        int k = find_key(e->key);
        if (k >= 0) {
            char msg[512];
            if (!store(c, k, &e->v, SRV_SRC_FILE, msg, sizeof msg)) {
                snprintf(err, errlen, "line %d: %s", e->line, msg);
                ok = false;
            }
        } else if (not_implemented(e->key)) {
            note_ignored(&ignored, e->key);
        } else if (warn) {
            fprintf(warn, "WARNING: %s line %d: unknown configuration key '%s' (ignored)\n", origin,
                    e->line, e->key);
        }
    }
    if (ok) warn_ignored(warn, origin, &ignored);
    il_buf_free(&ignored);
    srv_toml_free(&t);
    return ok;
}

bool srv_config_apply_file(srv_config *c, const char *path, bool required, bool *loaded, FILE *warn,
                           char *err, size_t errlen) {
    *loaded = false;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT && !required) return true;
        snprintf(err, errlen, errno == ENOENT ? "Config file not found: %s" : "%s: %s", path,
                 strerror(errno));
        return false;
    }
    il_buf text;
    il_buf_init(&text);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) il_buf_put(&text, chunk, n);
    bool read_ok = !ferror(f);
    fclose(f);
    bool ok = false;
    if (!read_ok) {
        snprintf(err, errlen, "%s: read error", path);
    } else {
        char msg[512];
        ok = srv_config_apply_toml(c, text.data ? text.data : "", text.len, path, warn, msg,
                                   sizeof msg);
        if (!ok) snprintf(err, errlen, "Failed to parse config from %s: %s", path, msg);
    }
    il_buf_free(&text);
    *loaded = ok;
    return ok;
}

/* Environment and flag values: typed by the key rather than by their form, so that
 * INPUTLAYER_HTTP__HOST=0.0.0.0 needs no quotes. */
static bool parse_raw(int k, const char *value, srv_toml_value *v, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    key_type t = KEYS[k].type;
    const char *p = value;
    while (*p == ' ' || *p == '\t') p++;
    if ((t == KT_STR || t == KT_OPT_STR) && *p != '"' && *p != '\'') {
        v->type = SRV_TOML_STRING;
        v->str = strdup(value);
        return true;
    }
    /* Environments write booleans in any case (TRUE, True). */
    if (t == KT_BOOL && (strcasecmp(p, "true") == 0 || strcasecmp(p, "false") == 0)) {
        v->type = SRV_TOML_BOOL;
        v->b = strcasecmp(p, "true") == 0;
        return true;
    }
    if (t == KT_STRS && *p != '[') {
        v->type = SRV_TOML_ARRAY;
        for (const char *s = value; *s;) {
            size_t n = strcspn(s, ",");
            const char *b = s, *e = s + n;
            while (b < e && isspace((unsigned char)*b)) b++;
            while (e > b && isspace((unsigned char)e[-1])) e--;
            if (e > b) {
                v->items = realloc(v->items, (v->nitems + 1) * sizeof *v->items);
                v->items[v->nitems++] = strndup(b, (size_t)(e - b));
            }
            s += n;
            if (*s == ',') s++;
        }
        return true;
    }
    char msg[256];
    if (!srv_toml_parse_value(value, strlen(value), v, msg, sizeof msg)) {
        /* "line 1: " says nothing about a one-line value */
        snprintf(err, errlen, "%s: invalid value '%s': %s", KEYS[k].name, value,
                 strncmp(msg, "line 1: ", 8) == 0 ? msg + 8 : msg);
        return false;
    }
    return true;
}

bool srv_config_set(srv_config *c, const char *key, const char *value, srv_cfg_source src,
                    char *err, size_t errlen) {
    int k = find_key(key);
    if (k < 0) {
        snprintf(err, errlen,
                 not_implemented(key) ? "%s is not implemented by this server yet"
                                      : "unknown configuration key '%s'",
                 key);
        return false;
    }
    srv_toml_value v;
    if (!parse_raw(k, value, &v, err, errlen)) return false;
    bool ok = store(c, k, &v, src, err, errlen);
    srv_toml_value_free(&v);
    return ok;
}

bool srv_config_apply_env(srv_config *c, char *const *envp, FILE *warn, char *err, size_t errlen) {
    static const char PREFIX[] = "INPUTLAYER_";
    il_buf ignored;
    il_buf_init(&ignored);
    bool ok = true;
    for (size_t i = 0; envp && envp[i] && ok; i++) {
        const char *var = envp[i];
        if (strncmp(var, PREFIX, sizeof PREFIX - 1) != 0) continue;
        const char *eq = strchr(var, '=');
        if (!eq) continue;
        const char *name = var + sizeof PREFIX - 1;
        size_t nlen = (size_t)(eq - name);
        /* Only SECTION__KEY names are configuration; the others (ADMIN_PASSWORD,
         * BOOTSTRAP_API_KEY, API_KEY, TEST_PORT ...) belong to other readers. */
        char key[256];
        if (nlen == 0 || nlen >= sizeof key || !memmem(name, nlen, "__", 2)) continue;
        size_t o = 0;
        for (size_t j = 0; j < nlen; j++) {
            if (name[j] == '_' && j + 1 < nlen && name[j + 1] == '_') {
                key[o++] = '.';
                j++;
            } else {
                key[o++] = (char)tolower((unsigned char)name[j]);
            }
        }
        key[o] = 0;
        int k = find_key(key);
        if (k >= 0) {
            char msg[512];
            if (!srv_config_set(c, key, eq + 1, SRV_SRC_ENV, msg, sizeof msg)) {
                snprintf(err, errlen, "INPUTLAYER_%.*s: %s", (int)nlen, name, msg);
                ok = false;
            }
        } else if (not_implemented(key)) {
            note_ignored(&ignored, key);
        } else if (warn) {
            fprintf(warn,
                    "WARNING: environment: INPUTLAYER_%.*s is not a configuration key (%s); "
                    "ignored\n",
                    (int)nlen, name, key);
        }
    }
    if (ok) warn_ignored(warn, "environment", &ignored);
    il_buf_free(&ignored);
    return ok;
}

bool srv_config_parse_cidr(const char *s, uint32_t *addr, uint32_t *mask) {
    char ip[INET_ADDRSTRLEN];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n == 0 || n >= sizeof ip) return false;
    memcpy(ip, s, n);
    ip[n] = 0;
    struct in_addr a;
    if (inet_pton(AF_INET, ip, &a) != 1) return false;
    long bits = 32;
    if (slash) {
        char *end;
        bits = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || bits < 0 || bits > 32) return false;
    }
    *mask = bits == 0 ? 0 : (uint32_t)(0xFFFFFFFFu << (32 - bits));
    *addr = ntohl(a.s_addr) & *mask;
    return true;
}

bool srv_config_validate(const srv_config *c, char *err, size_t errlen) {
    struct in_addr a;
    if (inet_pton(AF_INET, c->host, &a) != 1) {
        snprintf(err, errlen, "http.host must be an IPv4 address, not '%s'", c->host);
        return false;
    }
    for (size_t i = 0; i < c->ntrusted_proxies; i++) {
        uint32_t addr, mask;
        if (!srv_config_parse_cidr(c->trusted_proxies[i], &addr, &mask)) {
            snprintf(err, errlen,
                     "http.trusted_proxies: '%s' is not an IPv4 address or a.b.c.d/n range",
                     c->trusted_proxies[i]);
            return false;
        }
    }
    static const char *const lanes[3] = {"interactive", "write", "background"};
    for (int i = 0; i < 3; i++)
        if (c->lane_max_permits[i] && c->lane_min_permits[i] > c->lane_max_permits[i]) {
            snprintf(err, errlen, "admission.%s.min_permits (%lld) is over its max_permits (%lld)",
                     lanes[i], (long long)c->lane_min_permits[i],
                     (long long)c->lane_max_permits[i]);
            return false;
        }
    return true;
}

static void print_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7F)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void srv_config_print(const srv_config *c, FILE *f) {
    static const char *const SRC[] = {"default", "file", "environment", "flag"};
    fputs("# Effective configuration of inputlayer-server (where each value came from).\n", f);
    const char *table = NULL;
    size_t tlen = 0;
    for (int k = 0; k < SRV_CFG_NKEYS; k++) {
        const key_desc *d = &KEYS[k];
        const char *dot = strrchr(d->name, '.');
        size_t n = (size_t)(dot - d->name);
        if (!table || n != tlen || strncmp(table, d->name, n) != 0) {
            fprintf(f, "%s[%.*s]\n", table ? "\n" : "", (int)n, d->name);
            table = d->name;
            tlen = n;
        }
        fprintf(f, "%s = ", dot + 1);
        srv_config *m = (srv_config *)c;
        switch (d->type) {
        case KT_STR:
        case KT_OPT_STR: {
            const char *s = *str_slot(m, k);
            if (!s) {
                fprintf(f, "\"\"  # not set\n");
                continue;
            }
            /* A secret is not echoed. */
            print_str(f, k == SRV_K_BOOTSTRAP_PASSWORD ? "********" : s);
            break;
        }
        case KT_INT:
            fprintf(f, "%lld", (long long)*int_slot(m, k));
            break;
        case KT_BOOL:
            fputs(*int_slot(m, k) ? "true" : "false", f);
            break;
        case KT_STRS:
            fputc('[', f);
            for (size_t i = 0; i < *count_slot(m, k); i++) {
                if (i) fputs(", ", f);
                print_str(f, (*strs_slot(m, k))[i]);
            }
            fputc(']', f);
            break;
        }
        fprintf(f, "  # %s\n", SRC[c->src[k]]);
    }
}
