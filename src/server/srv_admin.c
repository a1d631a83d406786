/* .user, .apikey and .kg acl (srv_admin.h). Arguments are whitespace-separated words, as
 * in the original (so passwords cannot hold spaces); a command with missing or extra
 * words gets its usage line rather than a guess at what was meant. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strcopy.h"
#include "server/srv_admin.h"

enum { MAX_WORDS = 8 };

typedef struct words {
    char *w[MAX_WORDS];
    size_t n;
    bool too_many;
    char *buf;
} words;

static void split(const char *text, words *ws) {
    memset(ws, 0, sizeof *ws);
    ws->buf = strdup(text ? text : "");
    for (char *tok = strtok(ws->buf, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (ws->n == MAX_WORDS) {
            ws->too_many = true;
            break;
        }
        ws->w[ws->n++] = tok;
    }
}

static void error(srv_admin_reply *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error(srv_admin_reply *r, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->message = il_vformat(fmt, ap);
    va_end(ap);
    r->error_code = code;
}

static void line(srv_admin_reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(srv_admin_reply *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *text = il_vformat(fmt, ap);
    va_end(ap);
    r->lines = realloc(r->lines, (r->nlines + 1) * sizeof *r->lines);
    r->lines[r->nlines++] = text;
}

static void add_row(srv_admin_reply *r, il_buf *row) {
    r->rows = realloc(r->rows, (r->nrows + 1) * sizeof *r->rows);
    r->rows[r->nrows++] = il_buf_take(row);
}

static void json_time(il_buf *b, int64_t t) {
    if (t < 0)
        il_buf_puts(b, "null");
    else
        il_buf_printf(b, "%lld", (long long)t);
}

/* Writes the store; a failure is reported as the command's error (the change stays in
 * memory: durability of identities comes with the storage layer). */
/* Replies with an error and leaves the command. */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        error(r, __VA_ARGS__);                                                                     \
        return;                                                                                    \
    } while (0)

static bool save(srv_conn *c, srv_admin_reply *r) {
    char err[512];
    if (srv_users_save(&c->srv->users, err, sizeof err)) return true;
    error(r, "internal", "Failed to save identities: %s", err);
    return false;
}

static bool name_ok(srv_admin_reply *r, const char *what, const char *name) {
    if (srv_name_ok(name, SRV_NAME_MAX)) return true;
    error(r, "validation", "Invalid %s '%s': at most %d bytes, no spaces or control characters",
          what, name, SRV_NAME_MAX);
    return false;
}

static int cmp_users(const void *a, const void *b) {
    return strcmp(((const srv_user *)a)->name, ((const srv_user *)b)->name);
}

/* ---- .user ---- */

static const char USER_USAGE[] =
    "Usage: .user list | .user create <username> <password> <role> | .user drop <username> | "
    ".user password <username> <password> | .user role <username> <role>";

static void cmd_user(srv_conn *c, const words *ws, srv_admin_reply *r) {
    srv_users *u = &c->srv->users;
    const char *sub = ws->n ? ws->w[0] : "";
    srv_role role;
    if (ws->too_many) {
        error(r, "validation", "%s", USER_USAGE);
    } else if (strcmp(sub, "list") == 0 && ws->n == 1) {
        r->cols[0] = "username";
        r->cols[1] = "role";
        r->ncols = 2;
        srv_user *sorted = malloc((u->nusers + 1) * sizeof *sorted);
        if (u->nusers) memcpy(sorted, u->users, u->nusers * sizeof *sorted);
        qsort(sorted, u->nusers, sizeof *sorted, cmp_users);
        for (size_t i = 0; i < u->nusers; i++) {
            il_buf row;
            il_buf_init(&row);
            il_buf_putc(&row, '[');
            il_json_str(&row, sorted[i].name, strlen(sorted[i].name));
            il_buf_printf(&row, ",\"%s\"]", srv_role_name(sorted[i].role));
            add_row(r, &row);
        }
        free(sorted);
    } else if (strcmp(sub, "create") == 0) {
        if (ws->n != 4) FAIL("validation", "Usage: .user create <username> <password> <role>");
        const char *name = ws->w[1];
        if (!srv_role_parse(ws->w[3], &role))
            FAIL("validation", "Unknown role '%s'. Valid roles: admin, editor, viewer", ws->w[3]);
        if (!name_ok(r, "user name", name)) return;
        if (srv_users_find(u, name)) FAIL("conflict", "User '%s' already exists", name);
        if (!srv_users_add(u, name, ws->w[2], role)) FAIL("internal", "Cannot hash the password");
        if (save(c, r)) line(r, "User '%s' created with role '%s'.", name, srv_role_name(role));
    } else if (strcmp(sub, "drop") == 0) {
        if (ws->n != 2) FAIL("validation", "Usage: .user drop <username>");
        const char *name = ws->w[1];
        if (strcmp(name, "admin") == 0) FAIL("validation", "Cannot drop the 'admin' user");
        if (!srv_users_find(u, name)) FAIL("not_found", "User '%s' not found", name);
        srv_users_drop(u, name);
        bool saved = save(c, r);
        /* Their password and keys are gone: so are their sessions. */
        srv_fence_user(c->srv, name, false);
        srv_fence_schedule(c->srv);
        if (saved) line(r, "User '%s' dropped.", name);
    } else if (strcmp(sub, "password") == 0) {
        if (ws->n != 3) FAIL("validation", "Usage: .user password <username> <password>");
        srv_user *user = srv_users_find(u, ws->w[1]);
        if (!user) FAIL("not_found", "User '%s' not found", ws->w[1]);
        if (!srv_users_set_password(user, ws->w[2])) FAIL("internal", "Cannot hash the password");
        char name[SRV_NAME_MAX + 1];
        il_str_copy(name, sizeof name, user->name);
        bool saved = save(c, r);
        /* A new password is usually set because the old one leaked: sessions opened with
         * the old one end (API-key sessions of the user stay). */
        srv_fence_user(c->srv, name, true);
        if (saved) line(r, "Password updated for '%s'.", name);
    } else if (strcmp(sub, "role") == 0) {
        if (ws->n != 3) FAIL("validation", "Usage: .user role <username> <role>");
        if (!srv_role_parse(ws->w[2], &role))
            FAIL("validation", "Unknown role '%s'. Valid roles: admin, editor, viewer", ws->w[2]);
        if (strcmp(ws->w[1], "admin") == 0)
            FAIL("validation", "Cannot change the 'admin' user's role");
        srv_user *user = srv_users_find(u, ws->w[1]);
        if (!user) FAIL("not_found", "User '%s' not found", ws->w[1]);
        /* Takes effect on the user's next statement: roles are read per statement. */
        user->role = role;
        if (save(c, r)) line(r, "Role updated to '%s' for '%s'.", srv_role_name(role), ws->w[1]);
    } else {
        error(r, "validation", "%s", USER_USAGE);
    }
}

/* ---- .apikey ---- */

static const char KEY_USAGE[] =
    "Usage: .apikey create <label> [<ttl>] | .apikey list | .apikey revoke <label> | "
    ".apikey expire <label> <ttl>";
static const char TTL_HELP[] = "a number followed by ms, s, m, h or d, e.g. 30d";

/* ^[0-9]+(ms|s|m|h|d)$ in milliseconds, at most 100 years. */
static bool parse_ttl(const char *s, int64_t *ms) {
    static const int64_t MAX = 100LL * 366 * 24 * 3600 * 1000;
    const char *p = s;
    int64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        if (v > MAX) return false;
        v = v * 10 + (*p++ - '0');
    }
    if (p == s) return false;
    int64_t unit;
    if (strcmp(p, "ms") == 0)
        unit = 1;
    else if (strcmp(p, "s") == 0)
        unit = 1000;
    else if (strcmp(p, "m") == 0)
        unit = 60000;
    else if (strcmp(p, "h") == 0)
        unit = 3600000;
    else if (strcmp(p, "d") == 0)
        unit = 86400000;
    else
        return false;
    if (v > MAX / unit) return false;
    *ms = v * unit;
    return true;
}

static void cmd_apikey(srv_conn *c, const srv_user *me, const words *ws, srv_admin_reply *r) {
    srv_users *u = &c->srv->users;
    const char *sub = ws->n ? ws->w[0] : "";
    int64_t now = srv_wall_ms(), ttl = 0;
    if (ws->too_many) {
        error(r, "validation", "%s", KEY_USAGE);
    } else if (strcmp(sub, "create") == 0) {
        if (ws->n != 2 && ws->n != 3) FAIL("validation", "Usage: .apikey create <label> [<ttl>]");
        const char *label = ws->w[1];
        if (!name_ok(r, "API key label", label)) return;
        if (ws->n == 3 && (!parse_ttl(ws->w[2], &ttl) || ttl == 0))
            FAIL("validation", "Invalid TTL '%s': expected %s, above zero", ws->w[2], TTL_HELP);
        if (srv_users_key_by_label(u, label))
            FAIL("conflict", "API key with label '%s' already exists", label);
        char secret[65];
        srv_random_hex(secret, 32);
        srv_key *k = srv_users_add_key(u, label, me->name, secret, ws->n == 3 ? now + ttl : -1);
        int64_t expires = k->expires_ms;
        if (!save(c, r)) return;
        srv_fence_schedule(c->srv);
        r->cols[0] = "label";
        r->cols[1] = "api_key";
        r->ncols = 2;
        il_buf row;
        il_buf_init(&row);
        il_buf_putc(&row, '[');
        il_json_str(&row, label, strlen(label));
        il_buf_printf(&row, ",\"%s\"", secret);
        if (expires >= 0) {
            r->cols[r->ncols++] = "expires_at";
            il_buf_printf(&row, ",%lld", (long long)expires);
        }
        il_buf_putc(&row, ']');
        add_row(r, &row);
    } else if (strcmp(sub, "list") == 0 && ws->n == 1) {
        static const char *const COLS[] = {"label",      "owner",        "created_at",
                                           "expires_at", "last_used_at", "status"};
        memcpy(r->cols, COLS, sizeof COLS);
        r->ncols = 6;
        for (size_t i = 0; i < u->nkeys; i++) {
            const srv_key *k = &u->keys[i];
            il_buf row;
            il_buf_init(&row);
            il_buf_putc(&row, '[');
            il_json_str(&row, k->label, strlen(k->label));
            il_buf_putc(&row, ',');
            il_json_str(&row, k->owner, strlen(k->owner));
            il_buf_putc(&row, ',');
            json_time(&row, k->created_ms);
            il_buf_putc(&row, ',');
            json_time(&row, k->expires_ms);
            il_buf_putc(&row, ',');
            json_time(&row, k->last_used_ms);
            il_buf_printf(&row, ",\"%s\"]", srv_key_expired(k, now) ? "expired" : "active");
            add_row(r, &row);
        }
    } else if (strcmp(sub, "revoke") == 0) {
        if (ws->n != 2) FAIL("validation", "Usage: .apikey revoke <label>");
        srv_key *k = srv_users_key_by_label(u, ws->w[1]);
        if (!k) FAIL("not_found", "API key '%s' not found", ws->w[1]);
        uint64_t id = k->id;
        srv_users_drop_key(u, ws->w[1]);
        bool saved = save(c, r);
        srv_fence_key(c->srv, id, SRV_N_CREDENTIAL_REVOKED);
        srv_fence_schedule(c->srv);
        if (saved) line(r, "API key '%s' revoked.", ws->w[1]);
    } else if (strcmp(sub, "expire") == 0) {
        if (ws->n != 3) FAIL("validation", "Usage: .apikey expire <label> <ttl>");
        srv_key *k = srv_users_key_by_label(u, ws->w[1]);
        if (!k) FAIL("not_found", "API key '%s' not found", ws->w[1]);
        if (!parse_ttl(ws->w[2], &ttl))
            FAIL("validation", "Invalid TTL '%s': expected %s", ws->w[2], TTL_HELP);
        if (srv_key_expired(k, now))
            FAIL("validation", "API key '%s' has already expired", ws->w[1]);
        if (k->expires_ms >= 0 && k->expires_ms < now + ttl)
            FAIL("validation",
                 "API key '%s' already expires sooner (at %lld ms); an expiry can only "
                 "be brought forward",
                 ws->w[1], (long long)k->expires_ms);
        k->expires_ms = now + ttl;
        uint64_t id = k->id;
        bool saved = save(c, r);
        if (ttl == 0) srv_fence_key(c->srv, id, SRV_N_CREDENTIAL_EXPIRED);
        srv_fence_schedule(c->srv);
        if (saved) line(r, "API key '%s' expires in %s.", ws->w[1], ws->w[2]);
    } else {
        error(r, "validation", "%s", KEY_USAGE);
    }
}

/* ---- .kg acl ---- */

static int cmp_acl_user(const void *a, const void *b) {
    return strcmp((*(const srv_acl *const *)a)->user, (*(const srv_acl *const *)b)->user);
}

static void cmd_acl(srv_conn *c, const srv_user *me, const srv_stmt *st, srv_admin_reply *r) {
    srv_users *u = &c->srv->users;
    srv_kg_role role;
    il_meta_command kind = il_prepared_meta(st->prep, st->index);
    const char *arg = il_prepared_arg(st->prep, st->index, 0);
    const char *arg2 = il_prepared_arg(st->prep, st->index, 1);
    const char *arg3 = il_prepared_arg(st->prep, st->index, 2);
    if (kind == IL_META_KG_ACL_LIST) {
        /* The session's knowledge graph when none is named (the original used "default":
         * BUG). */
        const char *kg = arg ? arg : il_session_graph(c->session);
        /* Who else may use a graph is for its owners and admins to see: others see their
         * own entry only (the original listed every entry to any reader). */
        bool all = me->role == SRV_ROLE_ADMIN || srv_users_acl(u, kg, me->name) == SRV_KG_OWNER;
        const srv_acl **mine = malloc((u->nacls + 1) * sizeof *mine);
        size_t n = 0;
        for (size_t i = 0; i < u->nacls; i++)
            if (strcmp(u->acls[i].kg, kg) == 0 && (all || strcmp(u->acls[i].user, me->name) == 0))
                mine[n++] = &u->acls[i];
        qsort(mine, n, sizeof *mine, cmp_acl_user);
        if (n == 0) {
            line(r, "No ACL entries for '%s'. Admins have implicit owner access.", kg);
        } else {
            /* One row holding newlines, as the original sends it. */
            il_buf b;
            il_buf_init(&b);
            il_buf_printf(&b, "ACL entries for '%s':", kg);
            for (size_t i = 0; i < n; i++)
                il_buf_printf(&b, "\n  %s: %s", mine[i]->user, srv_kg_role_name(mine[i]->role));
            r->lines = realloc(r->lines, (r->nlines + 1) * sizeof *r->lines);
            r->lines[r->nlines++] = il_buf_take(&b);
        }
        free(mine);
    } else if (kind == IL_META_KG_ACL_GRANT) {
        if (!srv_kg_role_parse(arg3, &role))
            FAIL("validation", "Invalid KG role '%s'. Valid: owner, editor, viewer", arg3);
        if (!srv_name_ok(arg, SRV_KG_NAME_MAX) || !il_engine_has_graph(c->srv->engine, arg))
            FAIL("not_found", "Knowledge graph '%s' not found", arg);
        if (!name_ok(r, "user name", arg2)) return;
        srv_users_grant(u, arg, arg2, role);
        if (save(c, r))
            line(r, "Granted '%s' access on '%s' to '%s'.", srv_kg_role_name(role), arg, arg2);
    } else {
        if (!srv_users_revoke(u, arg, arg2))
            FAIL("not_found", "No ACL entry found for user '%s' on '%s'", arg2, arg);
        if (save(c, r)) line(r, "Revoked access on '%s' from '%s'.", arg, arg2);
    }
}

void srv_admin_run(srv_conn *c, const srv_stmt *st, srv_admin_reply *out) {
    memset(out, 0, sizeof *out);
    if (il_prepared_kind(st->prep, st->index) != IL_STATEMENT_META) {
        const char *perr = il_prepared_error(st->prep, st->index);
        error(out, "validation", "%s", perr ? perr : "Parse error");
        return;
    }
    srv_user *me = srv_users_find(&c->srv->users, c->user);
    words ws;
    split(il_prepared_meta_text(st->prep, st->index), &ws);
    if (!me)
        error(out, "access_denied", "Access denied: user no longer exists");
    else if (st->handler == SRV_H_USER)
        cmd_user(c, &ws, out);
    else if (st->handler == SRV_H_APIKEY)
        cmd_apikey(c, me, &ws, out);
    else
        cmd_acl(c, me, st, out);
    free(ws.buf);
}

void srv_admin_reply_free(srv_admin_reply *r) {
    free(r->message);
    for (size_t i = 0; i < r->nlines; i++) free(r->lines[i]);
    for (size_t i = 0; i < r->nrows; i++) free(r->rows[i]);
    free(r->lines);
    free(r->rows);
    memset(r, 0, sizeof *r);
}
