/* Authorization of statements: which statements the server answers itself (.user,
 * .apikey, .kg acl), what each statement needs on which knowledge graph (read, write,
 * owner), and the original's two-layer check (global role, then the per-KG role) with
 * its exact denial texts. Every statement of a program is checked before any runs. */
#ifndef IL_SERVER_SRV_AUTHZ_H
#define IL_SERVER_SRV_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>

#include "inputlayer.h"
#include "server/srv_users.h"

typedef enum srv_handler {
    SRV_H_ENGINE, /* executed by the engine */
    SRV_H_USER,   /* .user ... */
    SRV_H_APIKEY, /* .apikey ... */
    SRV_H_ACL,    /* .kg acl ... */
} srv_handler;

/* What a successful statement does to the session's knowledge graph. */
typedef enum srv_effect { SRV_FX_NONE, SRV_FX_SWITCH, SRV_FX_CREATE, SRV_FX_DROP } srv_effect;

typedef struct srv_stmt {
    il_prepared *prep; /* the program, prepared once; shared by its statements */
    size_t index;      /* this statement's in prep */
    const char *text;  /* its text (prep's) */
    size_t len;
    bool unterminated;
    srv_handler handler;
    srv_effect effect;
    char effect_kg[SRV_KG_NAME_MAX + 1];
    char checked_kg[SRV_KG_NAME_MAX + 1]; /* the session KG the check assumed */
    const char *denied;                   /* a static message; NULL when allowed */
    bool filter_graphs; /* a non-admin's `.kg list`: show only the graphs it may open */
} srv_stmt;

/* What the check assumes about the session while it walks a program: its knowledge graph,
 * and one this program creates (a non-admin creator becomes its owner). */
typedef struct srv_authz_state {
    char kg[SRV_KG_NAME_MAX + 1];
    char created[SRV_KG_NAME_MAX + 1];
} srv_authz_state;

/* Classifies st and decides whether `user` may run it in state *as; advances *as past a
 * .kg use / .kg create. Fills handler, effect, checked_kg and denied. */
void srv_authz_stmt(const srv_users *users, const srv_user *user, srv_authz_state *as,
                    srv_stmt *st);
/* Whether a non-admin may open a session on kg (any ACL entry). */
bool srv_authz_session(const srv_users *users, const srv_user *user, const char *kg);

#endif
