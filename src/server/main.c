/* inputlayer-server: `[--config FILE] [--host H] [--port P] [--data-dir D] [--set K=V]...
 * [--restore BACKUP] [--recover=salvage]`. Loads the configuration (flags > environment > files >
 * defaults), installs a backup first when asked to, loads the identity store and the engine, then
 * runs one libuv loop serving HTTP (health, metrics) and the WebSocket API on one port. */
#include <errno.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/strcopy.h"
#include "base/phase.h"
#include "server/server.h"
#include "server/srv_backup.h"
#include "server/srv_deliver.h"
#include "server/srv_durability.h"
#include "server/srv_memory.h"
#include "server/srv_pipeline.h"
#include "server/srv_revision.h"
#include "server/srv_static.h"
#include "value/value.h"

extern char **environ;

static void usage(FILE *f) {
    fputs("usage: inputlayer-server [-c|--config FILE] [--host ADDR] [--port PORT]\n"
          "                         [--data-dir DIR] [--set SECTION.KEY=VALUE]...\n"
          "                         [--restore BACKUP_DIR] [--recover=salvage] [--print-config]\n"
          "                         [--help] [--version]\n"
          "  defaults: --host 127.0.0.1 --port 8080 --data-dir ./data\n"
          "  --restore BACKUP_DIR installs an export written by .backup into the data directory\n"
          "  (which must hold no data yet) after checking every file against its manifest,\n"
          "  then starts from it.\n"
          "  --recover=salvage starts from what is readable when recovery cannot reach the last\n"
          "  acknowledged commit (damaged checkpoints or log records), moving the damaged\n"
          "  files aside; without it the server refuses to start then. --recover=strict is\n"
          "  the default.\n"
          "  Without --config, ./config.toml and ./config.local.toml are read when present.\n"
          "  INPUTLAYER_<SECTION>__<KEY> environment variables override the files; flags\n"
          "  override both. See config.example.toml for every key.\n",
          f);
}

/* mkdir -p, owner-only for the directories it creates (they hold credentials). */
static bool make_dirs(const char *path) {
    char buf[4096];
    il_str_copy(buf, sizeof buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(buf, 0700) == 0 || errno == EEXIST;
}

/* --restore: installs the export before anything opens the data directory. */
static bool restore(const char *from, const char *data_dir) {
    il_restore_info info;
    char *err = NULL;
    if (!il_backup_restore(from, data_dir, &info, &err)) {
        fprintf(stderr, "ERROR: Restore failed: %s\n", err ? err : "?");
        free(err);
        return false;
    }
    printf("Restored revision %llu from %s into %s (%zu files, %llu bytes)\n",
           (unsigned long long)info.revision, from, data_dir, info.files,
           (unsigned long long)info.bytes);
    return true;
}

typedef struct flag_set {
    const char *key, *value, *flag;
} flag_set;

/* The original warned about these when a config file turned a protection off. */
static void warn_unsafe(const srv_config *c) {
    static const struct {
        srv_cfg_key key;
        size_t off;
    } LIMITS[] = {
        {SRV_K_MAX_RESULT_ROWS, offsetof(srv_config, max_result_rows)},
        {SRV_K_MAX_CONNECTIONS, offsetof(srv_config, max_connections)},
        {SRV_K_MAX_CONNECTIONS_PER_IP, offsetof(srv_config, max_connections_per_ip)},
        {SRV_K_MAX_WS_CONNECTIONS, offsetof(srv_config, max_ws_connections)},
        {SRV_K_WS_MAX_MESSAGES, offsetof(srv_config, ws_max_messages_per_sec)},
        {SRV_K_PER_IP_MAX_RPS, offsetof(srv_config, per_ip_max_rps)},
        {SRV_K_WS_MAX_PREAUTH, offsetof(srv_config, ws_max_preauth_per_ip)},
    };
    for (size_t i = 0; i < sizeof LIMITS / sizeof LIMITS[0]; i++)
        if (*(const int64_t *)((const char *)c + LIMITS[i].off) == 0)
            fprintf(stderr, "WARNING: %s = 0: this limit is off\n",
                    srv_config_key_name(LIMITS[i].key));
    if (c->cors_allow_all && c->ncors_origins == 0)
        fprintf(stderr, "WARNING: http.cors_allow_all = true: pages of any site may call this "
                        "server and open WebSockets to it\n");
}

/* Loads the configuration; returns the exit status to use on failure, or -1. */
static int load_config(srv_config *cfg, const char *config_path, const flag_set *flags,
                       size_t nflags) {
    char err[1024];
    bool loaded;
    if (config_path) {
        if (!srv_config_apply_file(cfg, config_path, true, &loaded, stderr, err, sizeof err)) {
            fprintf(stderr, "ERROR: %s\n", err);
            return 1;
        }
    } else {
        /* Unlike the original, a broken file is an error rather than a silent fallback to
         * the defaults (BUG there: every override was lost without a word). */
        static const char *const DEFAULT_FILES[] = {"./config.toml", "./config.local.toml"};
        for (size_t i = 0; i < 2; i++) {
            if (!srv_config_apply_file(cfg, DEFAULT_FILES[i], false, &loaded, stderr, err,
                                       sizeof err)) {
                fprintf(stderr, "ERROR: %s\n", err);
                return 1;
            }
            if (loaded) fprintf(stderr, "Configuration read from %s\n", DEFAULT_FILES[i]);
        }
    }
    if (!srv_config_apply_env(cfg, environ, stderr, err, sizeof err)) {
        fprintf(stderr, "ERROR: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < nflags; i++) {
        if (!srv_config_set(cfg, flags[i].key, flags[i].value, SRV_SRC_FLAG, err, sizeof err)) {
            fprintf(stderr, "ERROR: %s: %s\n", flags[i].flag, err);
            return 2;
        }
    }
    if (!srv_config_validate(cfg, err, sizeof err)) {
        fprintf(stderr, "ERROR: %s\n", err);
        return 1;
    }
    return -1;
}

/* Parses argv; returns the exit status when the process should stop, else -1. */
static int parse_args(int argc, char **argv, const char **config_path, flag_set *flags,
                      size_t *nflags, bool *print_config, const char **restore_from,
                      il_recover_mode *recover) {
    static const struct {
        const char *flag, *key;
    } SHORTCUTS[] = {
        {"--host", "http.host"}, {"--port", "http.port"}, {"--data-dir", "storage.data_dir"}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        bool matched = false;
        for (size_t k = 0; k < 3 && !matched; k++) {
            if (strcmp(a, SHORTCUTS[k].flag) != 0) continue;
            if (!has_value) break;
            flags[(*nflags)++] = (flag_set){SHORTCUTS[k].key, argv[++i], SHORTCUTS[k].flag};
            matched = true;
        }
        if (matched) continue;
        if ((strcmp(a, "--config") == 0 || strcmp(a, "-c") == 0) && has_value) {
            *config_path = argv[++i];
        } else if (strcmp(a, "--set") == 0 && has_value) {
            char *kv = argv[++i], *eq = strchr(kv, '=');
            if (!eq || eq == kv) {
                fprintf(stderr, "ERROR: --set needs SECTION.KEY=VALUE, not '%s'\n", kv);
                return 2;
            }
            *eq = 0;
            flags[(*nflags)++] = (flag_set){kv, eq + 1, "--set"};
        } else if (strcmp(a, "--restore") == 0 && has_value) {
            *restore_from = argv[++i];
        } else if (strcmp(a, "--recover=salvage") == 0) {
            *recover = IL_RECOVER_SALVAGE;
        } else if (strcmp(a, "--recover=strict") == 0) {
            *recover = IL_RECOVER_STRICT;
        } else if (strcmp(a, "--print-config") == 0) {
            *print_config = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            puts("inputlayer-server " SRV_VERSION);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

int main(int argc, char **argv) {
    il_phase_setup();
    const char *config_path = NULL, *restore_from = NULL;
    flag_set *flags = calloc((size_t)argc + 1, sizeof *flags);
    size_t nflags = 0;
    bool print_config = false;
    il_recover_mode recover = IL_RECOVER_STRICT;
    int status = parse_args(argc, argv, &config_path, flags, &nflags, &print_config, &restore_from,
                            &recover);
    srv_config cfg;
    srv_config_init(&cfg);
    if (status < 0) status = load_config(&cfg, config_path, flags, nflags);
    free(flags);
    if (status >= 0 || print_config) {
        if (status < 0) srv_config_print(&cfg, stdout);
        srv_config_free(&cfg);
        return status < 0 ? 0 : status;
    }
    /* A peer that goes away mid-write must not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    srv_memory_init();
    printf("InputLayer Server\n=================\n\n");
    warn_unsafe(&cfg);
    const char *data_dir = cfg.data_dir;
    char *backup_dir = NULL, msg[1024];
    if (!srv_backup_prepare(&cfg, &backup_dir, msg, sizeof msg)) {
        fprintf(stderr, "ERROR: %s\n", msg);
        srv_config_free(&cfg);
        return 1;
    }
    bool ready = !restore_from || restore(restore_from, data_dir);
    if (ready && !make_dirs(data_dir)) {
        fprintf(stderr, "ERROR: Failed to initialize InputLayer: cannot create %s: %s\n", data_dir,
                strerror(errno));
        ready = false;
    }
    if (!ready) {
        free(backup_dir);
        srv_config_free(&cfg);
        return 1;
    }
    srv_server s = {0};
    s.cfg = &cfg;
    pthread_mutex_init(&s.users_lock, NULL);
    pthread_mutex_init(&s.graphs_lock, NULL);
    s.loop = uv_default_loop();
    s.started_ms = srv_now_ms();
    srv_random_hex(s.epoch, 8);
    s.test_reply_delay_ns = srv_test_reply_delay_ns();
    s.test_inline_stall_ns = srv_test_inline_stall_ns();
    s.test_release_delay_ns = srv_test_release_delay_ns();
    char *err = NULL;
    s.engine = il_engine_open_recover(data_dir, recover, &err);
    if (!s.engine) {
        fprintf(stderr, "ERROR: Failed to initialize InputLayer: %s\n", err ? err : "?");
        free(err);
        free(backup_dir);
        srv_config_free(&cfg);
        return 1;
    }
    status = 1;
    il_buf path;
    il_buf_init(&path);
    il_buf_printf(&path, "%s/" SRV_USERS_FILE, data_dir);
    if (!srv_users_load(&s.users, path.data, msg, sizeof msg)) {
        fprintf(stderr, "ERROR: Failed to initialize InputLayer: %s\n", msg);
    } else if (!srv_durability_start(&s, msg, sizeof msg)) {
        fprintf(stderr, "ERROR: %s\n", msg);
    } else if (srv_auth_bootstrap(&s)) {
        s.stats = il_session_open(s.engine);
        srv_count_graphs(&s);
        il_engine_set_checkpoint_bytes(s.engine, (uint64_t)cfg.max_wal_size_bytes);
        il_engine_set_log_segment_bytes(s.engine, (uint64_t)cfg.wal_segment_bytes);
        /* No write may keep the views busy longer than a query may run. */
        il_engine_set_view_budget(s.engine, (uint64_t)cfg.query_timeout_ms * 1000000u);
        il_engine_set_maintained_views(s.engine, cfg.maintained_views != 0);
        il_engine_set_eval_threads(s.engine, (unsigned)cfg.eval_threads);
        il_engine_set_snapshot_memory(s.engine, (uint64_t)cfg.max_snapshot_memory_bytes);
        srv_backup_attach(&s, backup_dir);
        if (backup_dir) printf("Backups: .backup writes to %s\n", backup_dir);
        s.query_budget = il_mem_budget_new((uint64_t)cfg.max_total_query_memory_bytes);
        /* Revisions go on from the log's position, so that they never repeat across
           restarts (srv_revision.c). */
        s.revision_base = il_engine_log_written(s.engine);
        srv_deliver_start(&s);
        unsigned permits =
            cfg.compute_permits > 0 ? (unsigned)cfg.compute_permits : srv_pool_default_permits();
        cpu_set_t affinity;
        s.cpus = sched_getaffinity(0, sizeof affinity, &affinity) == 0
                     ? (unsigned)CPU_COUNT(&affinity)
                     : 1;
        printf("Storage engine initialized (data dir %s)\nHTTP Server\n-----------\n"
               "Address: %s:%lld\nCompute permits: %u\n",
               data_dir, cfg.host, (long long)cfg.port, permits);
        s.gui = srv_static_open(&cfg, stdout);
        srv_lane_limits lanes[SRV_NLANES];
        for (int i = 0; i < SRV_NLANES; i++)
            lanes[i] = (srv_lane_limits){
                (unsigned)cfg.lane_weight[i], (unsigned)cfg.lane_min_permits[i],
                (unsigned)cfg.lane_max_permits[i], (size_t)cfg.lane_max_queued[i]};
        if (!srv_pool_start(&s.pool, s.loop, permits, (size_t)cfg.max_queued, lanes) ||
            (s.group_commit && !srv_pool_group_commit(&s.pool, s.engine))) {
            fprintf(stderr, "ERROR: cannot start the compute pool\n");
        } else {
            status = srv_loop_run(&s);
        }
        srv_pool_stop(&s.pool);
        srv_deliver_stop(&s);
        il_mem_budget_free(s.query_budget);
        il_session_close(s.stats);
        /* Keeps the keys' last use times, which are not written on every use. */
        if (status == 0 && !srv_users_save(&s.users, msg, sizeof msg))
            fprintf(stderr, "ERROR: %s\n", msg);
    }
    il_buf_free(&path);
    srv_static_close(s.gui);
    srv_users_free(&s.users);
    srv_clients_free(&s.clients);
    srv_revisions_free(&s);
    pthread_mutex_destroy(&s.users_lock);
    pthread_mutex_destroy(&s.graphs_lock);
    il_buf_free(&s.graph_names);
    il_engine_close(s.engine); /* stops an export still running, removing its output */
    free(backup_dir);
    free(s.read_chunk);
    uv_loop_close(s.loop);
    val_shutdown();
    srv_config_free(&cfg);
    return status;
}
