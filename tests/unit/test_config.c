/* Tests of the server's configuration: the TOML-subset parser (srv_toml.h) and the
 * loading of keys from files, the environment and flags with their precedence
 * (srv_config.h), including that the shipped config.example.toml loads cleanly. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_config.h"
#include "server/srv_toml.h"

static char err[512];

static srv_toml parse_ok(const char *text) {
    srv_toml t;
    bool ok = srv_toml_parse(text, strlen(text), &t, err, sizeof err);
    cr_assert(ok, "parse failed: %s", err);
    return t;
}

static const char *parse_err(const char *text) {
    srv_toml t;
    err[0] = 0;
    cr_assert_not(srv_toml_parse(text, strlen(text), &t, err, sizeof err), "parsed: %s", text);
    return err;
}

Test(toml, sections_keys_and_scalars) {
    srv_toml t = parse_ok("# leading comment\n"
                          "top = 1\n"
                          "[storage]  # trailing comment\n"
                          "data_dir = \"./d\"\n"
                          "\n"
                          "[http . rate_limit]\n"
                          "max_connections = 1_024\r\n"
                          "neg = -5\n"
                          "f = 2.5e3\n"
                          "g = -0.25\n"
                          "yes = true\n"
                          "no = false # c\n"
                          "lit = 'C:\\path'\n"
                          "a.b = \"dotted\"\n");
    cr_assert_eq(t.n, 10);
    cr_expect_str_eq(t.entries[0].key, "top");
    cr_expect_eq(t.entries[0].v.i, 1);
    cr_expect_str_eq(t.entries[1].key, "storage.data_dir");
    cr_expect_str_eq(t.entries[1].v.str, "./d");
    cr_expect_eq(t.entries[1].line, 4);
    cr_expect_str_eq(t.entries[2].key, "http.rate_limit.max_connections");
    cr_expect_eq(t.entries[2].v.type, SRV_TOML_INT);
    cr_expect_eq(t.entries[2].v.i, 1024);
    cr_expect_eq(t.entries[3].v.i, -5);
    cr_expect_eq(t.entries[4].v.type, SRV_TOML_FLOAT);
    cr_expect_float_eq(t.entries[4].v.f, 2500.0, 1e-9);
    cr_expect_float_eq(t.entries[5].v.f, -0.25, 1e-12);
    cr_expect(t.entries[6].v.type == SRV_TOML_BOOL && t.entries[6].v.b);
    cr_expect(t.entries[7].v.type == SRV_TOML_BOOL && !t.entries[7].v.b);
    cr_expect_str_eq(t.entries[8].v.str, "C:\\path");
    cr_expect_str_eq(t.entries[9].key, "http.rate_limit.a.b");
    srv_toml_free(&t);
}

Test(toml, string_escapes) {
    srv_toml t = parse_ok("s = \"a\\\"b\\\\c\\n\\t\\u00e9\\U0001F600\"\nq.\"x y\" = 'z'\n");
    cr_expect_str_eq(t.entries[0].v.str, "a\"b\\c\n\t\xc3\xa9\xf0\x9f\x98\x80");
    cr_expect_str_eq(t.entries[1].key, "q.x y");
    srv_toml_free(&t);
}

Test(toml, arrays_of_strings_over_lines) {
    srv_toml t = parse_ok("empty = []\n"
                          "one = [\"a\"]\n"
                          "many = [\n"
                          "  \"10.0.0.1\",  # first\n"
                          "  '10.0.0.0/8',\n"
                          "]\n"
                          "after = 3\n");
    cr_assert_eq(t.n, 4);
    cr_expect_eq(t.entries[0].v.type, SRV_TOML_ARRAY);
    cr_expect_eq(t.entries[0].v.nitems, 0);
    cr_expect_eq(t.entries[1].v.nitems, 1);
    cr_assert_eq(t.entries[2].v.nitems, 2);
    cr_expect_str_eq(t.entries[2].v.items[1], "10.0.0.0/8");
    cr_expect_eq(t.entries[3].line, 7);
    srv_toml_free(&t);
}

Test(toml, errors_name_the_line) {
    cr_expect_str_eq(parse_err("a = 1\nb = \n"), "line 2: expected a value");
    cr_expect_str_eq(parse_err("a = 1\na = 2\n"), "line 2: duplicate key 'a'");
    cr_expect_str_eq(parse_err("[x]\n[x]\n"), "line 2: table [x] defined twice");
    cr_expect_str_eq(parse_err("a = \"open\n"), "line 1: unterminated string");
    cr_expect_str_eq(parse_err("a = 1 2\n"), "line 1: unexpected '2' after the value");
    cr_expect_str_eq(parse_err("a = [1, 2]\n"), "line 1: only arrays of strings are supported");
    cr_expect_str_eq(parse_err("a = [\"x\"\n"), "line 2: unterminated array");
    cr_expect_str_eq(parse_err("a = {x = 1}\n"), "line 1: inline tables are not supported");
    cr_expect_str_eq(parse_err("[[t]]\n"), "line 1: arrays of tables are not supported");
    cr_expect_str_eq(parse_err("a = \"\"\"x\"\"\"\n"),
                     "line 1: multi-line strings are not supported");
    cr_expect_str_eq(parse_err("a = 2024-01-01\n"), "line 1: dates and times are not supported");
    cr_expect_str_eq(parse_err("a = 0x10\n"), "line 1: only decimal integers are supported");
    cr_expect_str_eq(parse_err("a = 012\n"), "line 1: leading zeros are not allowed in '012'");
    cr_expect_str_eq(parse_err("a = 1__0\n"), "line 1: invalid value '1__0'");
    cr_expect_str_eq(parse_err("a = 99999999999999999999\n"),
                     "line 1: number out of range: '99999999999999999999'");
    cr_expect_str_eq(parse_err("a = \"\\q\"\n"), "line 1: invalid escape sequence in a string");
    cr_expect_str_eq(parse_err("a = \"\\u0000\"\n"),
                     "line 1: a NUL character in a string is not supported");
    cr_expect_str_eq(parse_err("= 1\n"), "line 1: expected a key");
    cr_expect_str_eq(parse_err("a 1\n"), "line 1: expected '=' after the key");
    cr_expect_str_eq(parse_err("a = nan\n"), "line 1: invalid number 'nan'");
}

Test(toml, single_values) {
    srv_toml_value v;
    cr_assert(srv_toml_parse_value(" [\"a\", \"b\"] ", 11, &v, err, sizeof err));
    cr_expect_eq(v.nitems, 2);
    srv_toml_value_free(&v);
    cr_assert_not(srv_toml_parse_value("1 # c", 5, &v, err, sizeof err));
}

/* ---- configuration ---- */

static srv_config cfg;
static char *warnings;
static size_t warnings_len;
static FILE *warn;

static void setup(void) {
    srv_config_init(&cfg);
    warn = open_memstream(&warnings, &warnings_len);
}

static void teardown(void) {
    srv_config_free(&cfg);
    fclose(warn);
    free(warnings);
}

static const char *warned(void) {
    fflush(warn);
    return warnings ? warnings : "";
}

static bool apply(const char *text) {
    return srv_config_apply_toml(&cfg, text, strlen(text), "test.toml", warn, err, sizeof err);
}

TestSuite(config, .init = setup, .fini = teardown);

Test(config, defaults_are_the_originals) {
    cr_expect_str_eq(cfg.data_dir, "./data");
    cr_expect_str_eq(cfg.host, "127.0.0.1");
    cr_expect_eq(cfg.port, 8080);
    cr_expect_eq(cfg.max_query_size_bytes, 1048576);
    cr_expect_eq(cfg.max_result_rows, 100000);
    cr_expect_eq(cfg.ws_idle_timeout_ms, 300000);
    cr_expect_eq(cfg.ws_auth_timeout_ms, 5000);
    cr_expect_eq(cfg.ws_ping_interval_ms, 30000);
    cr_expect_eq(cfg.max_connections, 1024);
    cr_expect_eq(cfg.max_ws_connections, 1024);
    cr_expect_eq(cfg.ws_max_messages_per_sec, 100);
    cr_expect_eq(cfg.ws_max_lifetime_secs, 86400);
    cr_expect_eq(cfg.per_ip_max_rps, 100);
    cr_expect_eq(cfg.ws_max_preauth_per_ip, 16);
    cr_expect_null(cfg.credentials_file);
    cr_expect_null(cfg.bootstrap_admin_password);
    cr_expect_eq(cfg.ntrusted_proxies, 0);
    cr_expect_eq(cfg.ncors_origins, 0);
    cr_expect_not(cfg.cors_allow_all);
    cr_expect(cfg.gui_enabled);
    cr_expect_str_eq(cfg.gui_static_dir, "./gui/dist");
    cr_expect_str_eq(cfg.timing_mode, "summary");
    for (int k = 0; k < SRV_CFG_NKEYS; k++) cr_expect_eq(cfg.src[k], SRV_SRC_DEFAULT);
}

Test(config, cors_and_gui_keys) {
    cr_assert(apply("[http]\ncors_origins = [\"http://a.example\", \"https://b.example:8443\"]\n"
                    "cors_allow_all = true\n[http.gui]\nenabled = false\n"
                    "static_dir = \"/srv/gui\"\n"),
              "%s", err);
    cr_expect_str_eq(warned(), "");
    cr_assert_eq(cfg.ncors_origins, 2);
    cr_expect_str_eq(cfg.cors_origins[1], "https://b.example:8443");
    cr_expect(cfg.cors_allow_all);
    cr_expect_not(cfg.gui_enabled);
    cr_expect_str_eq(cfg.gui_static_dir, "/srv/gui");
    cr_expect_eq(cfg.src[SRV_K_GUI_ENABLED], SRV_SRC_FILE);
    /* Environments write booleans in any case; a list is comma-separated. */
    cr_expect(srv_config_set(&cfg, "http.gui.enabled", "TRUE", SRV_SRC_ENV, err, sizeof err), "%s",
              err);
    cr_expect(cfg.gui_enabled);
    cr_expect(srv_config_set(&cfg, "http.cors_origins", "http://c.example", SRV_SRC_FLAG, err,
                             sizeof err),
              "%s", err);
    cr_assert_eq(cfg.ncors_origins, 1);
    cr_expect_str_eq(cfg.cors_origins[0], "http://c.example");
    cr_expect_eq(cfg.ntrusted_proxies, 0); /* a list key of its own */
    cr_expect_not(
        srv_config_set(&cfg, "http.cors_allow_all", "yes", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_not(apply("[http]\ncors_allow_all = 1\n"));
    cr_expect_str_eq(err, "line 2: http.cors_allow_all must be true or false, not an integer");
}

Test(config, file_sets_keys_and_warns_about_unknown_ones) {
    cr_assert(apply("[http]\nport = 9000\nhost = \"0.0.0.0\"\ntrusted_proxies = [\"10.0.0.1\"]\n"
                    "bogus = 1\n"
                    "[http.rate_limit]\nws_max_messages_per_sec = 0\n"
                    "[storage.persist]\nbuffer_size = 100\n"
                    "[logging]\nlevel = \"debug\"\n"),
              "%s", err);
    cr_expect_eq(cfg.port, 9000);
    cr_expect_str_eq(cfg.host, "0.0.0.0");
    cr_expect_eq(cfg.ws_max_messages_per_sec, 0);
    cr_assert_eq(cfg.ntrusted_proxies, 1);
    cr_expect_eq(cfg.src[SRV_K_PORT], SRV_SRC_FILE);
    cr_expect_eq(cfg.src[SRV_K_DATA_DIR], SRV_SRC_DEFAULT);
    cr_expect(strstr(warned(), "WARNING: test.toml line 5: unknown configuration key "
                               "'http.bogus' (ignored)\n"),
              "%s", warned());
    cr_expect(strstr(warned(), "WARNING: test.toml: accepted but not implemented yet (no effect): "
                               "storage.persist.buffer_size, logging.level\n"),
              "%s", warned());
}

Test(config, wrong_types_and_ranges_fail) {
    cr_expect_not(apply("[http]\nport = \"80\"\n"));
    cr_expect_str_eq(err, "line 2: http.port must be an integer, not a string");
    cr_expect_not(apply("[http]\nport = 70000\n"));
    cr_expect_str_eq(err, "line 2: http.port must be between 0 and 65535, not 70000");
    cr_expect_not(apply("[http]\nbusy_poll_us = 1000001\n"));
    cr_expect_str_eq(err, "line 2: http.busy_poll_us must be between 0 and 1000000, not 1000001");
    cr_expect(apply("[http]\nbusy_poll_us = 250\n"), "%s", err);
    cr_expect_eq(cfg.busy_poll_us, 250);
    cr_expect_not(apply("[http.rate_limit]\nmax_connections = -1\n"));
    cr_expect_not(apply("[http.rate_limit]\nmax_connections = 1.5\n"));
    cr_expect_str_eq(err,
                     "line 2: http.rate_limit.max_connections must be an integer, not a float");
    cr_expect_not(apply("[storage]\ndata_dir = \"\"\n"));
    cr_expect_str_eq(err, "line 2: storage.data_dir must not be empty");
    cr_expect_not(apply("[storage.performance]\nmaintained_views = 0\n"));
    cr_expect_str_eq(err, "line 2: storage.performance.maintained_views must be true or false, "
                          "not an integer");
    cr_expect_eq(cfg.maintained_views, 1);
    cr_expect(apply("[storage.performance]\nmaintained_views = false\n"), "%s", err);
    cr_expect_eq(cfg.maintained_views, 0);
    cr_expect_not(apply("[http]\ntrusted_proxies = \"x\"\n"));
    cr_expect(apply("[storage.performance]\ntiming_mode = \"detailed\"\n"), "%s", err);
    cr_expect_str_eq(cfg.timing_mode, "detailed");
    cr_expect_not(apply("[storage.performance]\ntiming_mode = \"loud\"\n"));
    cr_expect_str_eq(err, "line 2: storage.performance.timing_mode must be off, summary or "
                          "detailed, not 'loud'");
    cr_expect_eq(cfg.port, 8080, "a failed file must not have changed a valid key before it");
}

Test(config, environment_overrides_and_ignores_unrelated_names) {
    char *env[] = {
        "PATH=/bin",
        "INPUTLAYER_ADMIN_PASSWORD=secret",
        "INPUTLAYER_BOOTSTRAP_API_KEY=k",
        "INPUTLAYER_API_KEY=k",
        "INPUTLAYER_HTTP__PORT=9100",
        "INPUTLAYER_HTTP__HOST=0.0.0.0",
        "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC=7",
        "INPUTLAYER_HTTP__TRUSTED_PROXIES=10.0.0.1, 10.1.0.0/16",
        "INPUTLAYER_STORAGE__DATA_DIR=\"/tmp/quoted\"",
        "INPUTLAYER_STORAGE__BACKUP_DIR=/var/backups/il",
        "INPUTLAYER_STORAGE__PERFORMANCE__TIMING_MODE=off",
        "INPUTLAYER_HTTP__NOPE=1",
        NULL,
    };
    cr_assert(srv_config_apply_env(&cfg, env, warn, err, sizeof err), "%s", err);
    cr_expect_eq(cfg.port, 9100);
    cr_expect_str_eq(cfg.host, "0.0.0.0");
    cr_expect_eq(cfg.ws_max_messages_per_sec, 7);
    cr_expect_str_eq(cfg.data_dir, "/tmp/quoted");
    cr_expect_str_eq(cfg.backup_dir, "/var/backups/il");
    cr_expect_null(strstr(warned(), "backup_dir"), "%s", warned());
    cr_assert_eq(cfg.ntrusted_proxies, 2);
    cr_expect_str_eq(cfg.trusted_proxies[1], "10.1.0.0/16");
    cr_expect_eq(cfg.src[SRV_K_PORT], SRV_SRC_ENV);
    cr_expect(strstr(warned(), "INPUTLAYER_HTTP__NOPE is not a configuration key (http.nope)"),
              "%s", warned());
    cr_expect_str_eq(cfg.timing_mode, "off");
    cr_expect_eq(cfg.src[SRV_K_TIMING_MODE], SRV_SRC_ENV);
    cr_expect_null(strstr(warned(), "timing_mode"), "%s", warned());
    cr_expect_null(strstr(warned(), "ADMIN_PASSWORD"), "%s", warned());
    cr_expect_null(strstr(warned(), "API_KEY"), "%s", warned());

    char *bad[] = {"INPUTLAYER_HTTP__PORT=eighty", NULL};
    cr_expect_not(srv_config_apply_env(&cfg, bad, warn, err, sizeof err));
    cr_expect_str_eq(err, "INPUTLAYER_HTTP__PORT: http.port: invalid value 'eighty': "
                          "invalid number 'eighty'");
}

Test(config, precedence_flags_over_env_over_file) {
    cr_assert(apply("[http]\nport = 1\nws_idle_timeout_ms = 2\nws_auth_timeout_ms = 3\n"));
    char *env[] = {"INPUTLAYER_HTTP__PORT=10", "INPUTLAYER_HTTP__WS_IDLE_TIMEOUT_MS=20", NULL};
    cr_assert(srv_config_apply_env(&cfg, env, warn, err, sizeof err));
    cr_assert(srv_config_set(&cfg, "http.port", "100", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_eq(cfg.port, 100);
    cr_expect_eq(cfg.ws_idle_timeout_ms, 20);
    cr_expect_eq(cfg.ws_auth_timeout_ms, 3);
    cr_expect_eq(cfg.ws_ping_interval_ms, 30000);
    cr_expect_eq(cfg.src[SRV_K_PORT], SRV_SRC_FLAG);
    cr_expect_eq(cfg.src[SRV_K_WS_IDLE_TIMEOUT], SRV_SRC_ENV);
    cr_expect_eq(cfg.src[SRV_K_WS_AUTH_TIMEOUT], SRV_SRC_FILE);
    cr_expect_eq(cfg.src[SRV_K_WS_PING_INTERVAL], SRV_SRC_DEFAULT);
    cr_expect_not(srv_config_set(&cfg, "http.nope", "1", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_str_eq(err, "unknown configuration key 'http.nope'");
}

Test(config, validation) {
    cr_expect(srv_config_validate(&cfg, err, sizeof err));
    cr_assert(srv_config_set(&cfg, "http.host", "localhost", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_not(srv_config_validate(&cfg, err, sizeof err));
    cr_expect_str_eq(err, "http.host must be an IPv4 address, not 'localhost'");
    cr_assert(srv_config_set(&cfg, "http.host", "127.0.0.1", SRV_SRC_FLAG, err, sizeof err));
    cr_assert(
        srv_config_set(&cfg, "http.trusted_proxies", "10.0.0.0/33", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_not(srv_config_validate(&cfg, err, sizeof err));
    srv_config_free(&cfg);
    srv_config_init(&cfg);
    cr_assert(
        srv_config_set(&cfg, "admission.write.min_permits", "3", SRV_SRC_FLAG, err, sizeof err));
    cr_assert(
        srv_config_set(&cfg, "admission.write.max_permits", "2", SRV_SRC_FLAG, err, sizeof err));
    cr_expect_not(srv_config_validate(&cfg, err, sizeof err));
    cr_expect_str_eq(err, "admission.write.min_permits (3) is over its max_permits (2)");
    cr_assert(
        srv_config_set(&cfg, "admission.write.max_permits", "0", SRV_SRC_FLAG, err, sizeof err));
    cr_expect(srv_config_validate(&cfg, err, sizeof err), "%s", err);
    cr_expect_not(
        srv_config_set(&cfg, "admission.background.weight", "0", SRV_SRC_FLAG, err, sizeof err));
    uint32_t addr, mask;
    cr_assert(srv_config_parse_cidr("10.1.2.3/16", &addr, &mask));
    cr_expect_eq(addr, 0x0A010000u);
    cr_expect_eq(mask, 0xFFFF0000u);
    cr_assert(srv_config_parse_cidr("0.0.0.0/0", &addr, &mask));
    cr_expect_eq(mask, 0);
}

Test(config, missing_files) {
    bool loaded = true;
    cr_expect(
        srv_config_apply_file(&cfg, "/nonexistent/x.toml", false, &loaded, warn, err, sizeof err));
    cr_expect_not(loaded);
    cr_expect_not(
        srv_config_apply_file(&cfg, "/nonexistent/x.toml", true, &loaded, warn, err, sizeof err));
    cr_expect_str_eq(err, "Config file not found: /nonexistent/x.toml");
}

/* The shipped example lists every implemented key with its default: loading it sets
 * every key to the value it already had and warns about nothing. */
Test(config, example_file_is_the_defaults) {
    bool loaded;
    cr_assert(srv_config_apply_file(&cfg, IL_SOURCE_DIR "/config.example.toml", true, &loaded, warn,
                                    err, sizeof err),
              "%s", err);
    cr_expect_str_eq(warned(), "");
    srv_config def;
    srv_config_init(&def);
    cr_expect_str_eq(cfg.data_dir, def.data_dir);
    cr_expect_str_eq(cfg.host, def.host);
    cr_expect_eq(cfg.port, def.port);
    cr_expect_eq(cfg.max_query_size_bytes, def.max_query_size_bytes);
    cr_expect_eq(cfg.max_result_rows, def.max_result_rows);
    cr_expect_eq(cfg.ws_idle_timeout_ms, def.ws_idle_timeout_ms);
    cr_expect_eq(cfg.ws_auth_timeout_ms, def.ws_auth_timeout_ms);
    cr_expect_eq(cfg.ws_ping_interval_ms, def.ws_ping_interval_ms);
    cr_expect_eq(cfg.busy_poll_us, def.busy_poll_us);
    cr_expect_eq(cfg.ntrusted_proxies, 0);
    cr_expect_eq(cfg.ncors_origins, 0);
    cr_expect_eq(cfg.cors_allow_all, def.cors_allow_all);
    cr_expect_eq(cfg.gui_enabled, def.gui_enabled);
    cr_expect_str_eq(cfg.gui_static_dir, def.gui_static_dir);
    cr_expect_eq(cfg.max_connections, def.max_connections);
    cr_expect_eq(cfg.max_ws_connections, def.max_ws_connections);
    cr_expect_eq(cfg.ws_max_messages_per_sec, def.ws_max_messages_per_sec);
    cr_expect_eq(cfg.ws_max_lifetime_secs, def.ws_max_lifetime_secs);
    cr_expect_eq(cfg.per_ip_max_rps, def.per_ip_max_rps);
    cr_expect_eq(cfg.ws_max_preauth_per_ip, def.ws_max_preauth_per_ip);
    cr_expect_eq(cfg.notification_buffer_size, def.notification_buffer_size);
    cr_expect_eq(cfg.notification_coalesce_ms, def.notification_coalesce_ms);
    cr_expect_eq(cfg.notification_ms_per_session, def.notification_ms_per_session);
    cr_expect_str_eq(cfg.timing_mode, def.timing_mode);
    cr_expect_null(cfg.credentials_file);
    cr_expect_null(cfg.bootstrap_admin_password);
    cr_expect_null(cfg.backup_dir);
    srv_config_free(&def);
    /* Every key but the two optional secrets' places and the optional backup directory
     * is written out in the example. */
    for (int k = 0; k < SRV_CFG_NKEYS; k++)
        if (k != SRV_K_CREDENTIALS_FILE && k != SRV_K_BOOTSTRAP_PASSWORD && k != SRV_K_BACKUP_DIR)
            cr_expect_eq(cfg.src[k], SRV_SRC_FILE, "%s", srv_config_key_name(k));
}

/* The effective configuration as srv_config_print writes it, without the comments that
 * say where each value came from. */
static char *printed_values(const srv_config *c) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    srv_config_print(c, f);
    fclose(f);
    char *out = malloc(len + 1);
    size_t o = 0;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *hash = memchr(line, '#', n);
        size_t keep = hash ? (size_t)(hash - line) : n;
        while (keep && line[keep - 1] == ' ') keep--;
        memcpy(out + o, line, keep);
        o += keep;
        out[o++] = '\n';
        line += n + (nl != NULL);
    }
    out[o] = 0;
    free(text);
    return out;
}

/* docs/server.md's table of keys gives each default as the server has it: a row
 * `| \`key\` | value |` whose value is a number or a single word (in backquotes or not;
 * "unset" aside), set on a default configuration, changes nothing. */
Test(config, documented_defaults_are_the_defaults) {
    FILE *doc = fopen(IL_SOURCE_DIR "/docs/server.md", "r");
    cr_assert_not_null(doc);
    srv_config def;
    srv_config_init(&def);
    char *want = printed_values(&def);
    char line[4096];
    int checked = 0;
    while (fgets(line, sizeof line, doc)) {
        char key[128], value[128];
        int end = 0;
        if (sscanf(line, "| `%127[a-z_.]` | %127[^|]|%n", key, value, &end) != 2 || !end) continue;
        size_t vn = strlen(value);
        while (vn && value[vn - 1] == ' ') value[--vn] = 0;
        char *v = value;
        if (vn >= 2 && v[0] == '`' && v[vn - 1] == '`') {
            v[vn - 1] = 0;
            v++;
        }
        if (!*v || strcmp(v, "unset") == 0 ||
            strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_./") != strlen(v))
            continue;
        srv_config c;
        srv_config_init(&c);
        cr_assert(srv_config_set(&c, key, v, SRV_SRC_FLAG, err, sizeof err), "%s = %s: %s", key, v,
                  err);
        char *got = printed_values(&c);
        cr_expect_str_eq(got, want, "docs/server.md gives %s the default %s", key, v);
        free(got);
        srv_config_free(&c);
        checked++;
    }
    fclose(doc);
    free(want);
    srv_config_free(&def);
    /* every row of numbers and words was read (the table has more than thirty) */
    cr_expect_geq(checked, 25, "only %d rows of docs/server.md's table were checked", checked);
}
