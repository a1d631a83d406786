/* `.subscribe NAME ?query` and `.unsubscribe NAME` in process (--local): standing
 * queries through the engine's API (il_subscribe). Subscribing prints the query's rows;
 * after every statement each subscription whose rows changed prints its delta, rows
 * inserted (`+`) and retracted (`-`), and a subscription whose view fails says so once
 * (docs/client.md, "Standing queries in process"). */
#include "client/local_subs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 128

typedef struct local_sub {
    struct local_sub *next;
    il_sub *sub;
    char name[NAME_MAX_LEN + 1];
    unsigned long seq; /* deltas printed */
    bool errored;      /* its failure was printed */
} local_sub;

static const char *skip_ws(const char *p) {
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

/* The text after the command word w at p, or NULL when p does not start with it. */
static const char *word(const char *p, const char *w) {
    size_t n = strlen(w);
    if (strncmp(p, w, n) != 0) return NULL;
    return p[n] == 0 || isspace((unsigned char)p[n]) ? p + n : NULL;
}

static bool name_ok(const char *p, size_t n) {
    if (n == 0 || n > NAME_MAX_LEN) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && !strchr("_.:-", p[i])) return false;
    return true;
}

static local_sub **find(cli *c, const char *name, size_t n) {
    for (local_sub **pp = &c->local_subs; *pp; pp = &(*pp)->next)
        if (strlen((*pp)->name) == n && memcmp((*pp)->name, name, n) == 0) return pp;
    return NULL;
}

static bool fail(cli *c, const char *msg) {
    fprintf(c->out, "%s%s\n", c->interactive ? "Error: " : "", msg);
    return false;
}

/* Rows of arity values as lines "<mark>(v1, v2)". */
static void print_rows(cli *c, const char *mark, const il_value *rows, size_t n, uint32_t arity) {
    char cell[256];
    for (size_t i = 0; i < n; i++) {
        fprintf(c->out, "  %s(", mark);
        for (uint32_t k = 0; k < arity; k++) {
            size_t len = il_value_format(rows[i * arity + k], cell, sizeof cell);
            fprintf(c->out, "%s%s%s", k ? ", " : "", cell, len >= sizeof cell ? "..." : "");
        }
        fputs(")\n", c->out);
    }
}

static bool subscribe(cli *c, const char *name, size_t nlen, const char *query) {
    char msg[512];
    if (!name_ok(name, nlen))
        return fail(c, "Invalid subscription name: use 1 to 128 of A-Z a-z 0-9 _ . : -");
    if (find(c, name, nlen)) {
        snprintf(msg, sizeof msg, "Subscription '%.*s' already exists", (int)nlen, name);
        return fail(c, msg);
    }
    if (*query != '?') return fail(c, "Usage: .subscribe <name> ?<query>");
    local_sub *ls = calloc(1, sizeof *ls);
    char *err = NULL;
    ls->sub = il_subscribe(c->session, query, strlen(query), ls, &err);
    if (!ls->sub) {
        snprintf(msg, sizeof msg, "Cannot subscribe to this query: %s",
                 err ? err : "unsupported query");
        free(err);
        free(ls);
        return fail(c, msg);
    }
    memcpy(ls->name, name, nlen);
    ls->next = c->local_subs;
    c->local_subs = ls;
    il_value *rows = NULL;
    size_t n = il_sub_rows(ls->sub, &rows);
    uint32_t arity = il_sub_arity(ls->sub);
    fprintf(c->out, "Subscribed '%s' (", ls->name);
    for (uint32_t k = 0; k < arity; k++)
        fprintf(c->out, "%s%s", k ? ", " : "", il_sub_column(ls->sub, k));
    fprintf(c->out, "): %zu row%s\n", n, n == 1 ? "" : "s");
    print_rows(c, "", rows, n, arity);
    free(rows);
    return true;
}

static void close_sub(local_sub *ls) {
    il_sub_close(ls->sub);
    free(ls);
}

bool cli_local_subs_command(cli *c, const char *stmt, bool *ok) {
    if (!c->engine) return false;
    const char *p = skip_ws(stmt), *rest;
    bool sub = (rest = word(p, ".subscribe")) != NULL;
    if (!sub && !(rest = word(p, ".unsubscribe"))) return false;
    const char *name = skip_ws(rest), *ne = name;
    while (*ne && !isspace((unsigned char)*ne)) ne++;
    size_t nlen = (size_t)(ne - name);
    /* the statement's text as the script reader joined it: trailing blanks trimmed */
    char *query = strdup(skip_ws(ne));
    for (size_t n = strlen(query); n && isspace((unsigned char)query[n - 1]);) query[--n] = 0;
    if (sub) {
        *ok = subscribe(c, name, nlen, query);
    } else if (*query || nlen == 0) {
        *ok = fail(c, "Usage: .unsubscribe <name>");
    } else {
        local_sub **pp = find(c, name, nlen);
        if (pp) {
            local_sub *ls = *pp;
            *pp = ls->next;
            fprintf(c->out, "Unsubscribed '%s'.\n", ls->name);
            close_sub(ls);
            *ok = true;
        } else {
            char msg[256];
            snprintf(msg, sizeof msg, "Subscription '%.*s' not found",
                     (int)(nlen > NAME_MAX_LEN ? NAME_MAX_LEN : nlen), name);
            *ok = fail(c, msg);
        }
    }
    free(query);
    return true;
}

void cli_local_subs_publish(cli *c) {
    if (!c->engine || !c->local_subs) return; /* no subscription: no family to route */
    bool error_changed = false;
    il_sub *touched = il_subs_route(c->engine, &error_changed);
    /* In the order they were subscribed in (the list is newest first): stable output. */
    size_t n = 0;
    for (local_sub *ls = c->local_subs; ls; ls = ls->next) n++;
    local_sub **order = malloc((n + 1) * sizeof *order);
    size_t i = n;
    for (local_sub *ls = c->local_subs; ls; ls = ls->next) order[--i] = ls;
    for (il_sub *m = touched; m; m = il_sub_next_touched(m)) {
        local_sub *ls = il_sub_ctx(m);
        ls->seq++; /* the number of the delta printed below */
    }
    for (i = 0; i < n; i++) {
        local_sub *ls = order[i];
        il_sub_delta d = il_sub_changes(ls->sub);
        if (d.nadded || d.nremoved) {
            uint32_t arity = il_sub_arity(ls->sub);
            fprintf(c->out, "Subscription '%s' delta %lu: %zu inserted, %zu retracted\n", ls->name,
                    ls->seq, d.nadded, d.nremoved);
            print_rows(c, "+", d.added, d.nadded, arity);
            print_rows(c, "-", d.removed, d.nremoved, arity);
            il_sub_clear(ls->sub);
        }
        /* after its last delta, as the server sends subscription_error */
        const char *err = il_sub_error(ls->sub);
        if (error_changed && err && !ls->errored)
            fprintf(c->out, "Subscription '%s' failed: %s\n", ls->name, err);
        ls->errored = err != NULL;
    }
    free(order);
}

void cli_local_subs_free(cli *c) {
    while (c->local_subs) {
        local_sub *ls = c->local_subs;
        c->local_subs = ls->next;
        close_sub(ls);
    }
}
