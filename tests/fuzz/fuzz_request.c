/* libFuzzer target for the server's request path: the input becomes the strings of a frame
 * (a program, a read's queries, credentials, a subscription, the URL's ?kg=), each free to
 * hold NUL and every control byte, written as JSON with \u00XX escapes (or, for some
 * inputs, as raw bytes), and goes where the server sends it: the frame reader and its NUL
 * refusal (srv_frame.c, which srv_proto_message reads every frame with), the split and
 * classification of the program (srv_exec.c), the authorization of each statement for a viewer, an
 * editor and an admin (srv_authz.c), the engine, which runs what is allowed, the credential
 * look-ups (srv_users.c), the read and subscribe frames' checks, and the URL's query (http.c) with
 * the session it opens. Every reply text is written as the server writes it and must read back as
 * JSON. Nothing may crash, leak or trip a sanitizer. Run with `make fuzz`. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"
#include "server/srv_authz.h"
#include "server/srv_exec.h"
#include "server/srv_frame.h"
#include "server/srv_read.h"
#include "server/srv_subgroup.h"
#include "server/srv_subs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static srv_users users;
static const char *const PEOPLE[] = {"vic", "ed", "admin"};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Once: a viewer and an editor of `default` and `shared`, and an admin (one argon2 hash
 * each, never verified: logins are looked up, as before the verification). */
static void setup(void) {
    static bool done;
    if (done) return;
    done = true;
    srv_users_add(&users, "vic", "pw", SRV_ROLE_VIEWER);
    srv_users_add(&users, "ed", "pw", SRV_ROLE_EDITOR);
    srv_users_add(&users, "admin", "pw", SRV_ROLE_ADMIN);
    srv_users_add_key(&users, "k", "vic", "secret-of-vic", -1);
    srv_users_grant(&users, "default", "vic", SRV_KG_VIEWER);
    srv_users_grant(&users, "shared", "vic", SRV_KG_VIEWER);
    srv_users_grant(&users, "default", "ed", SRV_KG_EDITOR);
    srv_users_grant(&users, "shared", "ed", SRV_KG_OWNER);
}

/* A reply holding text as the server writes it (il_json_str) must read back as JSON
 * (jansson refuses invalid UTF-8) and give back the text, as far as it was UTF-8. */
static void check_reply(const char *text, size_t len) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "{\"type\":\"error\",\"message\":");
    il_json_str(&b, text, len);
    il_buf_putc(&b, '}');
    json_error_t je;
    json_t *back = json_loadb(b.data, b.len, JSON_ALLOW_NUL, &je);
    if (!back) {
        fprintf(stderr, "reply is not JSON: %s\n", je.text);
        abort();
    }
    json_decref(back);
    il_buf_free(&b);
}

/* The input's fields: separated by 0xFF bytes (which UTF-8 never holds). */
typedef struct field {
    const char *p;
    size_t len;
} field;

static void put_string(il_buf *b, field f, bool raw) {
    if (raw) {
        il_buf_putc(b, '"');
        il_buf_put(b, f.p, f.len);
        il_buf_putc(b, '"');
    } else {
        il_json_str(b, f.p, f.len);
    }
}

static bool outside(const char *text, size_t len) {
    while (len && (*text == ' ' || *text == '\t')) text++, len--;
    return (len >= 5 && memcmp(text, ".load", 5) == 0) ||
           (len >= 7 && memcmp(text, ".backup", 7) == 0);
}

static void strings_are_whole(const json_t *v) {
    if (json_is_string(v) && strlen(json_string_value(v)) != json_string_length(v)) abort();
    const char *key;
    json_t *member;
    if (json_is_array(v))
        for (size_t i = 0; i < json_array_size(v); i++) strings_are_whole(json_array_get(v, i));
    json_object_foreach((json_t *)v, key, member) strings_are_whole(member);
}

/* What the session's statements do, each under a deadline and a memory limit: what the
 * user may run, in order, as srv_exec.c checks and runs them. */
static void execute(il_session *s, const srv_user *me, const char *prog, size_t len) {
    size_t n;
    srv_stmt *sts = srv_exec_split(prog, len, &n);
    bool read_only, identity, facts;
    srv_exec_classify(sts, n, &read_only, &identity, &facts);
    srv_authz_state as;
    memset(&as, 0, sizeof as);
    snprintf(as.kg, sizeof as.kg, "%s", il_session_graph(s));
    for (size_t i = 0; i < n && i < 32; i++) {
        srv_stmt *st = &sts[i];
        if (strlen(st->text) != st->len) abort(); /* the frame let a NUL through */
        srv_authz_stmt(&users, me, &as, st);
        if (st->denied) {
            check_reply(st->denied, strlen(st->denied));
            continue;
        }
        if (st->unterminated || st->handler != SRV_H_ENGINE || outside(st->text, st->len) ||
            srv_subs_is_command(st->text, st->len))
            continue;
        il_limits lim = {.deadline_ns = now_ns() + 50 * 1000000u, .max_memory_bytes = 64u << 20};
        il_session_set_limits(s, &lim);
        il_result *r = il_execute_prepared(s, st->prep, st->index);
        il_result_kind kind = il_result_kind_of(r);
        for (size_t k = 0; k < il_result_nlines(r); k++) {
            const char *line = il_result_line(r, k);
            check_reply(line, strlen(line));
            if (k == 0 && (kind == IL_RESULT_ERROR || kind == IL_RESULT_PARSE_ERROR))
                (void)srv_exec_error_code(line);
        }
        il_result_free(r);
    }
    srv_exec_free_stmts(sts, n);
}

/* The URL's query as http.c reads it (the parser never passes a NUL or a line break),
 * and a session opened on the graph it names when the user may open it. */
static void url_query(il_engine *e, const srv_user *me, field f) {
    static srv_server srv;
    static srv_conn conn;
    srv.engine = e;
    memset(&conn, 0, sizeof conn);
    conn.srv = &srv;
    char *q = malloc(f.len + 1);
    size_t k = 0;
    for (size_t i = 0; i < f.len; i++)
        if (f.p[i] != 0 && f.p[i] != '\r' && f.p[i] != '\n') q[k++] = f.p[i];
    q[k] = 0;
    srv_http_ws_query(&conn, q);
    free(q);
    if (strlen(conn.kg) > SRV_KG_NAME_MAX) abort();
    char err[400];
    if (!conn.kg_too_long && srv_authz_session(&users, me, conn.kg) &&
        il_engine_has_graph(e, conn.kg) && srv_session_open(&conn, conn.kg, err, sizeof err)) {
        il_session_close(conn.session);
        conn.session = NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    if (size < 1) return 0;
    unsigned kind = data[0] % 7, who = (data[0] >> 3) % 3;
    bool raw = data[0] >> 7;
    field fs[4] = {{0}};
    size_t nf = 0, at = 1;
    while (nf < 4 && at <= size) {
        const uint8_t *end = memchr(data + at, 0xFF, size - at);
        size_t n = end ? (size_t)(end - data) - at : size - at;
        fs[nf++] = (field){(const char *)data + at, n};
        at += n + 1;
    }
    /* Split and classification read a program by its length, NULs and all. */
    size_t n;
    srv_stmt *sts = srv_exec_split(fs[0].p ? fs[0].p : "", fs[0].len, &n);
    bool read_only, identity, facts;
    srv_exec_classify(sts, n, &read_only, &identity, &facts);
    srv_exec_free_stmts(sts, n);

    static const char *const TYPES[] = {"execute",   "read",   "login", "authenticate",
                                        "subscribe", "cancel", "url"};
    il_buf frame;
    il_buf_init(&frame);
    il_buf_printf(&frame, "{\"type\":\"%s\",\"id\":\"f\"", TYPES[kind]);
    switch (kind) {
    case 0:
        il_buf_puts(&frame, ",\"program\":");
        put_string(&frame, fs[0], raw);
        break;
    case 1:
    case 4:
        il_buf_puts(&frame, ",\"queries\":[{\"name\":");
        put_string(&frame, fs[1], raw);
        il_buf_puts(&frame, ",\"query\":");
        put_string(&frame, fs[0], raw);
        il_buf_puts(&frame, "}]");
        break;
    case 2:
        il_buf_puts(&frame, ",\"username\":");
        put_string(&frame, fs[1], raw);
        il_buf_puts(&frame, ",\"password\":");
        put_string(&frame, fs[2], raw);
        break;
    case 3:
        il_buf_puts(&frame, ",\"api_key\":");
        put_string(&frame, fs[2], raw);
        break;
    default:
        il_buf_puts(&frame, ",\"target\":");
        put_string(&frame, fs[3], raw);
        break;
    }
    il_buf_putc(&frame, '}');

    /* The frame reader srv_proto_message reads every frame with. */
    srv_frame f;
    srv_frame_read(&f, frame.data, frame.len);
    il_buf_free(&frame);
    /* An id it tells is echoed in the reply: 1 to 64 bytes, no NUL (the raw inputs may
       write members of their own, a second id or type among them). */
    if (f.id && (strlen(f.id) == 0 || strlen(f.id) > 64)) abort();
    if (f.bad[0]) { /* refused whole (a NUL among them): nothing below sees it */
        check_reply(f.bad, strlen(f.bad));
        srv_frame_free(&f);
        return 0;
    }
    if (!f.type) abort();
    int64_t timeout;
    if (srv_frame_timeout(&f, &timeout) && timeout < 0) abort();
    json_t *root = srv_frame_json(&f);
    if (!root) { /* out of memory */
        srv_frame_free(&f);
        return 0;
    }
    strings_are_whole(root);

    const srv_user *me = srv_users_find(&users, PEOPLE[who]);
    il_engine *e = il_engine_open(NULL, NULL);
    il_engine_set_view_budget(e, 50 * 1000000u);
    il_session *s = il_session_open(e);
    il_result_free(il_execute(s, ".kg create shared", 17));
    il_result_free(il_execute(s, ".kg use default", 15));
    size_t plen = 0;
    const char *str = srv_frame_str(&f, "program", &plen);
    if (str && plen != json_string_length(json_object_get(root, "program"))) abort();
    char err[256];
    if (kind == 0 && str) {
        execute(s, me, str, plen);
    } else if (kind == 1) {
        char *packed;
        size_t len;
        if (srv_read_pack(json_object_get(root, "queries"), &packed, &len, err, sizeof err))
            free(packed);
        else
            check_reply(err, strlen(err));
    } else if (kind == 2 || kind == 3) {
        json_t *name = json_object_get(root, "username");
        json_t *secret = json_object_get(root, "api_key");
        if (json_is_string(name)) {
            srv_user *u = srv_users_find(&users, json_string_value(name));
            if (u && strlen(u->name) != json_string_length(name)) abort();
        }
        if (json_is_string(secret)) {
            srv_key *k = srv_users_key_by_secret(&users, json_string_value(secret),
                                                 json_string_length(secret));
            if (k && json_string_length(secret) != strlen("secret-of-vic")) abort();
        }
    } else if (kind == 4) {
        srv_group_spec *g = srv_group_parse(root, err, sizeof err);
        if (g)
            free(g);
        else
            check_reply(err, strlen(err));
    } else if (kind == 6) {
        url_query(e, me, fs[3]);
    }
    il_session_close(s);
    il_engine_close(e);
    srv_frame_free(&f);
    return 0;
}
