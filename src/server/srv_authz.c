/* Statement authorization (srv_authz.h). Statements are classified by parsing them with
 * the engine's own parser, so that the server and the engine agree on what a statement
 * is; a statement that does not parse is a read, because the engine refuses it without
 * effect. Admins are implicit owners everywhere, so their data statements need no parse:
 * only meta commands (which start with '.') are parsed for them. */
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "iql/parser.h"
#include "server/srv_authz.h"

typedef enum need { NEED_NOTHING, NEED_READ, NEED_WRITE, NEED_OWNER_DROP, NEED_OWNER_ACL } need;

static const char INTERNAL_DENIED[] = "Access denied: '_internal' is a system knowledge graph";
static const char VIEWER_DENIED[] =
    "Permission denied: you have viewer access to this knowledge graph";

static void deny(srv_stmt *st, const char *msg) {
    snprintf(st->denied, sizeof st->denied, "%s", msg);
}

static void set_kg(char *dst, const char *src) {
    snprintf(dst, SRV_KG_NAME_MAX + 1, "%s", src ? src : "");
}

/* The access a meta command needs, and the knowledge graph it needs it on (NULL: the
 * session's). Sets the handler and effect, and the layer-1 denials. */
static need meta_need(const iql_meta *m, srv_role role, srv_stmt *st, const char **target) {
    bool admin = role == SRV_ROLE_ADMIN;
    *target = NULL;
    switch (m->kind) {
    case IQL_META_USER:
        st->handler = SRV_H_USER;
        if (!admin) deny(st, "Permission denied: only admins can manage users");
        return NEED_NOTHING;
    case IQL_META_APIKEY:
        st->handler = SRV_H_APIKEY;
        if (!admin) deny(st, "Permission denied: only admins can manage API keys");
        return NEED_NOTHING;
    case IQL_META_COMPACT:
        if (!admin) deny(st, "Permission denied: only admins can compact");
        return NEED_NOTHING;
    case IQL_META_BACKUP:
    case IQL_META_BACKUP_STATUS:
        if (!admin) deny(st, "Permission denied: only admins can back up");
        return NEED_NOTHING;
    case IQL_META_KG_CREATE:
        if (m->arg && strcmp(m->arg, "_internal") == 0)
            deny(st, INTERNAL_DENIED);
        else if (role == SRV_ROLE_VIEWER)
            deny(st, "Permission denied: viewers cannot create knowledge graphs");
        st->effect = SRV_FX_CREATE;
        set_kg(st->effect_kg, m->arg);
        return NEED_NOTHING;
    case IQL_META_KG_USE:
    case IQL_META_KG_DROP:
        if (m->arg && strcmp(m->arg, "_internal") == 0) deny(st, INTERNAL_DENIED);
        st->effect = m->kind == IQL_META_KG_USE ? SRV_FX_SWITCH : SRV_FX_DROP;
        set_kg(st->effect_kg, m->arg);
        *target = m->arg;
        return m->kind == IQL_META_KG_USE ? NEED_READ : NEED_OWNER_DROP;
    case IQL_META_KG_ACL_LIST:
        st->handler = SRV_H_ACL;
        *target = m->arg;
        return NEED_READ;
    case IQL_META_KG_ACL_GRANT:
    case IQL_META_KG_ACL_REVOKE:
        st->handler = SRV_H_ACL;
        *target = m->arg;
        return NEED_OWNER_ACL;
    case IQL_META_KG_LIST:
        st->filter_graphs = !admin;
        return NEED_NOTHING;
    case IQL_META_KG_SHOW:
    case IQL_META_HELP:
    case IQL_META_QUIT:
    case IQL_META_STATUS:
        return NEED_NOTHING;
    case IQL_META_REL_LIST:
    case IQL_META_REL_SHOW:
    case IQL_META_RULE_LIST:
    case IQL_META_RULE_SHOW:
    case IQL_META_RULE_DEF:
    case IQL_META_SESSION_LIST:
    case IQL_META_SESSION_CLEAR:
    case IQL_META_SESSION_DROP_INDEX:
    case IQL_META_SESSION_DROP_NAME:
    case IQL_META_DEBUG:
    case IQL_META_WHY:
    case IQL_META_WHY_FULL:
    case IQL_META_WHY_NOT:
    case IQL_META_INDEX_LIST:
    case IQL_META_INDEX_STATS:
    case IQL_META_AGENT:
        return NEED_READ;
    case IQL_META_REL_DROP:
    case IQL_META_RULE_DROP:
    case IQL_META_RULE_DROP_PREFIX:
    case IQL_META_RULE_REMOVE:
    case IQL_META_RULE_CLEAR:
    case IQL_META_RULE_EDIT:
    case IQL_META_INDEX_CREATE:
    case IQL_META_INDEX_DROP:
    case IQL_META_INDEX_REBUILD:
    case IQL_META_CLEAR_PREFIX:
    case IQL_META_LOAD:
        return NEED_WRITE;
    }
    /* A meta command added to the parser later: refuse until it is classified here. */
    return NEED_OWNER_DROP;
}

static need stmt_need(const iql_stmt *s) {
    switch (s->kind) {
    case IQL_STMT_QUERY:
    case IQL_STMT_SESSION_RULE:
        return NEED_READ;
    case IQL_STMT_META:
        break; /* handled by meta_need */
    case IQL_STMT_TYPE_DECL:
    case IQL_STMT_UPDATE:
    case IQL_STMT_PERSIST_RULE:
    case IQL_STMT_SCHEMA:
    case IQL_STMT_SESSION_SCHEMA:
    case IQL_STMT_INSERT:
    case IQL_STMT_DROP_RULE:
    case IQL_STMT_DELETE:
    case IQL_STMT_COND_DELETE:
    case IQL_STMT_SESSION_FACT:
        return NEED_WRITE;
    }
    return NEED_WRITE;
}

void srv_authz_stmt(const srv_users *users, const srv_user *user, srv_authz_state *as,
                    srv_stmt *st) {
    st->handler = SRV_H_ENGINE;
    st->effect = SRV_FX_NONE;
    st->effect_kg[0] = st->denied[0] = 0;
    st->filter_graphs = false;
    set_kg(st->checked_kg, as->kg);
    bool admin = user->role == SRV_ROLE_ADMIN;
    if (st->unterminated || (admin && (st->len == 0 || st->text[0] != '.'))) return;

    il_arena a;
    il_arena_init(&a);
    iql_stmt parsed;
    const char *perr;
    need n = NEED_READ;
    const char *target = NULL;
    if (iql_parse(&a, st->text, st->len, &parsed, &perr))
        n = parsed.kind == IQL_STMT_META ? meta_need(&parsed.u.meta, user->role, st, &target)
                                         : stmt_need(&parsed);
    if (!st->denied[0] && !admin && n != NEED_NOTHING) {
        const char *kg = target ? target : as->kg;
        srv_kg_role r = as->created[0] && strcmp(kg, as->created) == 0
                            ? SRV_KG_OWNER
                            : srv_users_acl(users, kg, user->name);
        if (r == SRV_KG_NONE)
            deny(st, "Access denied");
        else if (n == NEED_WRITE && r < SRV_KG_EDITOR)
            deny(st, VIEWER_DENIED);
        else if ((n == NEED_OWNER_DROP || n == NEED_OWNER_ACL) && r < SRV_KG_OWNER)
            deny(st, r == SRV_KG_VIEWER ? VIEWER_DENIED
                     : n == NEED_OWNER_DROP
                         ? "Permission denied: only KG owners can drop this knowledge graph"
                         : "Permission denied: only KG owners can manage ACLs");
    }
    if (!st->denied[0] && (st->effect == SRV_FX_SWITCH || st->effect == SRV_FX_CREATE)) {
        set_kg(as->kg, st->effect_kg);
        if (st->effect == SRV_FX_CREATE && !admin) set_kg(as->created, st->effect_kg);
    }
    il_arena_destroy(&a);
}

bool srv_authz_session(const srv_users *users, const srv_user *user, const char *kg) {
    return user->role == SRV_ROLE_ADMIN || srv_users_acl(users, kg, user->name) != SRV_KG_NONE;
}
