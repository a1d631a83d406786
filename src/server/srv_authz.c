/* Statement authorization (srv_authz.h). Statements are classified by what the engine
 * made of them when it prepared them (il_prepare), so that the server and the engine
 * agree on what a statement is; a statement that does not parse is a read, because the
 * engine refuses it without effect. Admins are implicit owners everywhere, so only their
 * meta commands need a look. */
#include <stdio.h>
#include <string.h>

#include "base/strcopy.h"
#include "server/srv_authz.h"

typedef enum need { NEED_NOTHING, NEED_READ, NEED_WRITE, NEED_OWNER_DROP, NEED_OWNER_ACL } need;

static const char INTERNAL_DENIED[] = "Access denied: '_internal' is a system knowledge graph";
static const char VIEWER_DENIED[] =
    "Permission denied: you have viewer access to this knowledge graph";

/* msg is a static string: the statement keeps the pointer. */
static void deny(srv_stmt *st, const char *msg) {
    st->denied = msg;
}

static void set_kg(char *dst, const char *src) {
    il_str_copy(dst, SRV_KG_NAME_MAX + 1, src);
}

/* The access a meta command needs, and the knowledge graph it needs it on (NULL: the
 * session's). Sets the handler and effect, and the layer-1 denials. */
static need meta_need(il_meta_command kind, const char *arg, srv_role role, srv_stmt *st,
                      const char **target) {
    bool admin = role == SRV_ROLE_ADMIN;
    *target = NULL;
    switch (kind) {
    case IL_META_USER:
        st->handler = SRV_H_USER;
        if (!admin) deny(st, "Permission denied: only admins can manage users");
        return NEED_NOTHING;
    case IL_META_APIKEY:
        st->handler = SRV_H_APIKEY;
        if (!admin) deny(st, "Permission denied: only admins can manage API keys");
        return NEED_NOTHING;
    case IL_META_COMPACT:
        if (!admin) deny(st, "Permission denied: only admins can compact");
        return NEED_NOTHING;
    case IL_META_BACKUP:
    case IL_META_BACKUP_STATUS:
        if (!admin) deny(st, "Permission denied: only admins can back up");
        return NEED_NOTHING;
    case IL_META_KG_CREATE:
        if (arg && strcmp(arg, "_internal") == 0)
            deny(st, INTERNAL_DENIED);
        else if (role == SRV_ROLE_VIEWER)
            deny(st, "Permission denied: viewers cannot create knowledge graphs");
        st->effect = SRV_FX_CREATE;
        set_kg(st->effect_kg, arg);
        return NEED_NOTHING;
    case IL_META_KG_USE:
    case IL_META_KG_DROP:
        if (arg && strcmp(arg, "_internal") == 0) deny(st, INTERNAL_DENIED);
        st->effect = kind == IL_META_KG_USE ? SRV_FX_SWITCH : SRV_FX_DROP;
        set_kg(st->effect_kg, arg);
        *target = arg;
        return kind == IL_META_KG_USE ? NEED_READ : NEED_OWNER_DROP;
    case IL_META_KG_ACL_LIST:
        st->handler = SRV_H_ACL;
        *target = arg;
        return NEED_READ;
    case IL_META_KG_ACL_GRANT:
    case IL_META_KG_ACL_REVOKE:
        st->handler = SRV_H_ACL;
        *target = arg;
        return NEED_OWNER_ACL;
    case IL_META_KG_LIST:
        st->filter_graphs = !admin;
        return NEED_NOTHING;
    case IL_META_KG_SHOW:
    case IL_META_HELP:
    case IL_META_QUIT:
    case IL_META_STATUS:
        return NEED_NOTHING;
    case IL_META_REL_LIST:
    case IL_META_REL_SHOW:
    case IL_META_RULE_LIST:
    case IL_META_RULE_SHOW:
    case IL_META_RULE_DEF:
    case IL_META_SESSION_LIST:
    case IL_META_SESSION_CLEAR:
    case IL_META_SESSION_DROP_INDEX:
    case IL_META_SESSION_DROP_NAME:
    case IL_META_DEBUG:
    case IL_META_WHY:
    case IL_META_WHY_FULL:
    case IL_META_WHY_NOT:
    case IL_META_INDEX_LIST:
    case IL_META_INDEX_STATS:
    case IL_META_AGENT:
        return NEED_READ;
    case IL_META_REL_DROP:
    case IL_META_RULE_DROP:
    case IL_META_RULE_DROP_PREFIX:
    case IL_META_RULE_REMOVE:
    case IL_META_RULE_CLEAR:
    case IL_META_RULE_EDIT:
    case IL_META_INDEX_CREATE:
    case IL_META_INDEX_DROP:
    case IL_META_INDEX_REBUILD:
    case IL_META_CLEAR_PREFIX:
    case IL_META_LOAD:
        return NEED_WRITE;
    case IL_META_NONE:
        break;
    }
    /* A meta command added to the parser later: refuse until it is classified here. */
    return NEED_OWNER_DROP;
}

static need stmt_need(il_statement_kind k) {
    switch (k) {
    case IL_STATEMENT_INVALID:
    case IL_STATEMENT_UNTERMINATED:
    case IL_STATEMENT_QUERY:
    case IL_STATEMENT_SESSION_RULE:
        return NEED_READ;
    case IL_STATEMENT_META:
        break; /* handled by meta_need */
    case IL_STATEMENT_TYPE_DECL:
    case IL_STATEMENT_UPDATE:
    case IL_STATEMENT_RULE:
    case IL_STATEMENT_SCHEMA:
    case IL_STATEMENT_SESSION_SCHEMA:
    case IL_STATEMENT_INSERT:
    case IL_STATEMENT_DROP_RULE:
    case IL_STATEMENT_DELETE:
    case IL_STATEMENT_COND_DELETE:
    case IL_STATEMENT_SESSION_FACT:
        return NEED_WRITE;
    }
    return NEED_WRITE;
}

void srv_authz_stmt(const srv_users *users, const srv_user *user, srv_authz_state *as,
                    srv_stmt *st) {
    st->handler = SRV_H_ENGINE;
    st->effect = SRV_FX_NONE;
    st->effect_kg[0] = 0;
    st->denied = NULL;
    st->filter_graphs = false;
    set_kg(st->checked_kg, as->kg);
    bool admin = user->role == SRV_ROLE_ADMIN;
    if (st->unterminated || (admin && (st->len == 0 || st->text[0] != '.'))) return;

    il_statement_kind k = il_prepared_kind(st->prep, st->index);
    const char *target = NULL;
    need n = k == IL_STATEMENT_META
                 ? meta_need(il_prepared_meta(st->prep, st->index),
                             il_prepared_arg(st->prep, st->index, 0), user->role, st, &target)
                 : stmt_need(k);
    if (!st->denied && !admin && n != NEED_NOTHING) {
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
    if (!st->denied && (st->effect == SRV_FX_SWITCH || st->effect == SRV_FX_CREATE)) {
        set_kg(as->kg, st->effect_kg);
        if (st->effect == SRV_FX_CREATE && !admin) set_kg(as->created, st->effect_kg);
    }
}

bool srv_authz_session(const srv_users *users, const srv_user *user, const char *kg) {
    return user->role == SRV_ROLE_ADMIN || srv_users_acl(users, kg, user->name) != SRV_KG_NONE;
}
