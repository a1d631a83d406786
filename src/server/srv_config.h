/* The server's configuration: every key it honours with its default, and the loading of
 * values from TOML files, INPUTLAYER_<SECTION>__<KEY> environment variables and command
 * line flags, applied in that order so that flags > environment > files > defaults. */
#ifndef IL_SERVER_SRV_CONFIG_H
#define IL_SERVER_SRV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum srv_cfg_source {
    SRV_SRC_DEFAULT,
    SRV_SRC_FILE,
    SRV_SRC_ENV,
    SRV_SRC_FLAG,
} srv_cfg_source;

/* Keys the server implements; the order is the order of --print-config. */
typedef enum srv_cfg_key {
    SRV_K_DATA_DIR,
    SRV_K_BACKUP_DIR,
    SRV_K_MAX_QUERY_SIZE,
    SRV_K_MAX_RESULT_ROWS,
    SRV_K_HOST,
    SRV_K_PORT,
    SRV_K_WS_IDLE_TIMEOUT,
    SRV_K_WS_AUTH_TIMEOUT,
    SRV_K_WS_PING_INTERVAL,
    SRV_K_HEADER_TIMEOUT,
    SRV_K_BUSY_POLL,
    SRV_K_TRUSTED_PROXIES,
    SRV_K_CORS_ORIGINS,
    SRV_K_CORS_ALLOW_ALL,
    SRV_K_GUI_ENABLED,
    SRV_K_GUI_STATIC_DIR,
    SRV_K_CREDENTIALS_FILE,
    SRV_K_BOOTSTRAP_PASSWORD,
    SRV_K_MAX_CONNECTIONS,
    SRV_K_MAX_CONNECTIONS_PER_IP,
    SRV_K_MAX_WS_CONNECTIONS,
    SRV_K_WS_MAX_MESSAGES,
    SRV_K_WS_MAX_LIFETIME,
    SRV_K_PER_IP_MAX_RPS,
    SRV_K_WS_MAX_PREAUTH,
    SRV_K_NOTIFICATION_BUFFER_SIZE,
    SRV_K_NOTIFICATION_COALESCE,
    SRV_K_NOTIFICATION_SESSION_MS,
    SRV_K_WS_MAX_SUBSCRIPTIONS,
    SRV_K_DURABILITY_MODE,
    SRV_K_BATCH_SYNC,
    SRV_K_QUERY_TIMEOUT,
    SRV_K_MAX_QUERY_MEMORY,
    SRV_K_MAX_TOTAL_QUERY_MEMORY,
    SRV_K_MAX_SNAPSHOT_MEMORY,
    SRV_K_MAINTAINED_VIEWS,
    SRV_K_EVAL_THREADS,
    SRV_K_WS_MAX_IN_FLIGHT,
    SRV_K_COMPUTE_PERMITS,
    SRV_K_MAX_QUEUED,
    SRV_K_MAX_WAIT,
    SRV_K_INTERACTIVE_WEIGHT,
    SRV_K_INTERACTIVE_MIN_PERMITS,
    SRV_K_INTERACTIVE_MAX_PERMITS,
    SRV_K_INTERACTIVE_MAX_QUEUED,
    SRV_K_WRITE_WEIGHT,
    SRV_K_WRITE_MIN_PERMITS,
    SRV_K_WRITE_MAX_PERMITS,
    SRV_K_WRITE_MAX_QUEUED,
    SRV_K_BACKGROUND_WEIGHT,
    SRV_K_BACKGROUND_MIN_PERMITS,
    SRV_K_BACKGROUND_MAX_PERMITS,
    SRV_K_BACKGROUND_MAX_QUEUED,
    SRV_K_MAX_WAL_SIZE,
    SRV_K_WAL_SEGMENT,
    SRV_K_TIMING_MODE,
    SRV_CFG_NKEYS
} srv_cfg_key;

typedef struct srv_config {
    /* [storage] */
    char *data_dir;
    char *backup_dir; /* where `.backup` writes exports; NULL: `.backup` is refused */
    /* [storage.performance]; 0 = no limit */
    int64_t max_query_size_bytes;
    int64_t max_result_rows;
    int64_t query_timeout_ms;             /* the request deadline */
    int64_t max_query_memory_bytes;       /* per statement */
    int64_t max_total_query_memory_bytes; /* all statements running at once */
    int64_t max_snapshot_memory_bytes;    /* old versions kept for pinned reads */
    int64_t maintained_views; /* 1: reads make rules maintained (il_engine_set_maintained_views) */
    int64_t eval_threads;     /* il_engine_set_eval_threads; 0: the CPUs online */
    char *timing_mode;        /* off | summary | detailed: timing_breakdown on query results */
    /* [http]; timeouts and intervals 0 = off */
    char *host;
    int64_t port;
    int64_t ws_idle_timeout_ms;
    int64_t ws_auth_timeout_ms;
    int64_t ws_ping_interval_ms;
    int64_t header_timeout_ms; /* a request's headers must arrive within this */
    int64_t busy_poll_us;      /* the I/O loop polls this long after its last read or write */
    char **trusted_proxies;    /* IPv4 addresses or a.b.c.d/n */
    size_t ntrusted_proxies;
    char **cors_origins; /* origins other sites' pages may call from (srv_cors.h) */
    size_t ncors_origins;
    int64_t cors_allow_all; /* 1: any origin, when cors_origins is empty */
    int64_t gui_enabled;    /* 1: serve gui_static_dir at / (srv_static.h) */
    char *gui_static_dir;   /* relative to the working directory */
    /* [http.auth]; NULL = not set */
    char *credentials_file; /* NULL: <data_dir>/credentials.toml */
    char *bootstrap_admin_password;
    /* [http.rate_limit]; 0 = off */
    int64_t max_connections;
    int64_t max_connections_per_ip; /* HTTP connections per client address */
    int64_t max_ws_connections;
    int64_t ws_max_messages_per_sec;
    int64_t ws_max_lifetime_secs;
    int64_t per_ip_max_rps;
    int64_t ws_max_preauth_per_ip;
    /* as written; the notification ring's capacity is this corrected by
       srv_notify_capacity (0: 4096, over 100000: 100000) */
    int64_t notification_buffer_size;
    int64_t notification_coalesce_ms;
    /* the pacing window's share of each open session, up to notification_coalesce_ms */
    int64_t notification_ms_per_session;
    int64_t ws_max_subscriptions;
    char *durability_mode;             /* immediate | batched | async (srv_durability.c) */
    int64_t batch_sync_ms;             /* batched: the longest an acknowledged write waits */
    int64_t ws_max_in_flight_requests; /* pipeline bound per connection (at least 1) */
    /* [admission] */
    int64_t compute_permits; /* worker threads; 0 = cores minus max(2, cores/4), at least 1 */
    int64_t max_queued;      /* requests waiting for a worker; more are `overloaded` */
    int64_t max_wait_ms;     /* longest wait for a worker, then `overloaded`; 0 = none */
    /* the admission lanes (srv_lanes.h), by srv_lane_id: interactive, write, background */
    int64_t lane_weight[3];      /* >= 1 */
    int64_t lane_min_permits[3]; /* served first while fewer run */
    int64_t lane_max_permits[3]; /* 0: the pool's size */
    int64_t lane_max_queued[3];  /* 0: only admission.max_queued */
    /* [storage.persist] */
    int64_t max_wal_size_bytes; /* log growth that starts a checkpoint; 0 = only .compact */
    int64_t wal_segment_bytes;  /* size of a log segment file */

    srv_cfg_source src[SRV_CFG_NKEYS];
} srv_config;

void srv_config_init(srv_config *c); /* the defaults */
void srv_config_free(srv_config *c);

/* Applies a TOML document; `origin` names it in warnings. Unknown keys and keys that are
 * documented for the original but not implemented here are reported on `warn` (may be
 * NULL) and otherwise ignored; a syntax error or a value of the wrong type or range fails. */
bool srv_config_apply_toml(srv_config *c, const char *text, size_t len, const char *origin,
                           FILE *warn, char *err, size_t errlen);
/* Reads and applies a file. A missing file is an error only when `required`; *loaded says
 * whether it existed. */
bool srv_config_apply_file(srv_config *c, const char *path, bool required, bool *loaded, FILE *warn,
                           char *err, size_t errlen);
/* Applies every INPUTLAYER_<SECTION>__<KEY>=value of envp (NULL-terminated). Names
 * without "__" (INPUTLAYER_ADMIN_PASSWORD, INPUTLAYER_API_KEY ...) are not configuration
 * and are skipped silently. */
bool srv_config_apply_env(srv_config *c, char *const *envp, FILE *warn, char *err, size_t errlen);
/* Sets one key from text as written in the environment or a flag: a TOML value, or for
 * strings the bare text, for arrays a comma-separated list. */
bool srv_config_set(srv_config *c, const char *key, const char *value, srv_cfg_source src,
                    char *err, size_t errlen);
/* Checks what types alone cannot (host is an IPv4 address, proxies parse, ...). */
bool srv_config_validate(const srv_config *c, char *err, size_t errlen);
/* The effective configuration as TOML, each value commented with where it came from. */
void srv_config_print(const srv_config *c, FILE *f);
const char *srv_config_key_name(srv_cfg_key k);

/* Parses "a.b.c.d" or "a.b.c.d/n" into an address and mask (host order). */
bool srv_config_parse_cidr(const char *s, uint32_t *addr, uint32_t *mask);

#endif
