/* The identity store: users with a global role and an argon2id password hash, API keys
 * (kept as SHA-256 of the secret, with an optional expiry), and per-knowledge-graph ACL
 * entries. It lives in memory and is written whole to <data-dir>/identities.tsv (mode
 * 0600, replaced atomically) after every change. */
#ifndef IL_SERVER_SRV_USERS_H
#define IL_SERVER_SRV_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

typedef enum srv_role { SRV_ROLE_ADMIN, SRV_ROLE_EDITOR, SRV_ROLE_VIEWER } srv_role;
/* Ordered by power, so that `>=` compares grants. */
typedef enum srv_kg_role { SRV_KG_NONE, SRV_KG_VIEWER, SRV_KG_EDITOR, SRV_KG_OWNER } srv_kg_role;

#define SRV_NAME_MAX    64               /* user names and key labels, bytes */
#define SRV_KG_NAME_MAX 128              /* as the engine's knowledge graph names */
#define SRV_USERS_FILE  "identities.tsv" /* in the data directory */

typedef struct srv_user {
    char *name;
    char *hash; /* argon2id PHC string */
    srv_role role;
} srv_user;

typedef struct srv_key {
    uint64_t id; /* unique in this run, so a re-created label is another credential */
    char *label;
    char *owner;
    uint8_t sha[32];
    int64_t created_ms, expires_ms, last_used_ms; /* wall clock; -1 = none */
} srv_key;

typedef struct srv_acl {
    char *kg;
    char *user;
    srv_kg_role role;
} srv_acl;

typedef struct srv_users {
    char *path;
    srv_user *users;
    size_t nusers;
    srv_key *keys;
    size_t nkeys;
    srv_acl *acls;
    size_t nacls;
    uint64_t next_key_id;
    char *dummy_hash; /* verified against for unknown users, so that they cost the same */
} srv_users;

/* Reads the store (a missing file is an empty store); false with a message on a file
 * that cannot be read or is malformed, so that a damaged store never looks empty. */
bool srv_users_load(srv_users *u, const char *path, char *err, size_t errlen);
bool srv_users_save(srv_users *u, char *err, size_t errlen);
/* The store as srv_users_save writes it (for backups, srv_backup.c). */
void srv_users_format(const srv_users *u, il_buf *out);
void srv_users_free(srv_users *u);

int64_t srv_wall_ms(void);
bool srv_name_ok(const char *s, size_t max);
const char *srv_role_name(srv_role r);
bool srv_role_parse(const char *s, srv_role *r);
const char *srv_kg_role_name(srv_kg_role r);
bool srv_kg_role_parse(const char *s, srv_kg_role *r);

srv_user *srv_users_find(srv_users *u, const char *name);
/* The user whose password this is, or NULL; always one argon2 verification. */
srv_user *srv_users_check_password(srv_users *u, const char *name, const char *pw);
bool srv_users_add(srv_users *u, const char *name, const char *pw, srv_role role);
bool srv_users_set_password(srv_user *user, const char *pw);
/* Removes the user with their keys and ACL entries. */
void srv_users_drop(srv_users *u, const char *name);

srv_key *srv_users_key_by_secret(srv_users *u, const char *secret, size_t len);
srv_key *srv_users_key_by_label(srv_users *u, const char *label);
srv_key *srv_users_key_by_id(srv_users *u, uint64_t id);
srv_key *srv_users_add_key(srv_users *u, const char *label, const char *owner, const char *secret,
                           int64_t expires_ms);
void srv_users_drop_key(srv_users *u, const char *label);
bool srv_key_expired(const srv_key *k, int64_t now_ms);

srv_kg_role srv_users_acl(const srv_users *u, const char *kg, const char *user);
void srv_users_grant(srv_users *u, const char *kg, const char *user, srv_kg_role role);
bool srv_users_revoke(srv_users *u, const char *kg, const char *user);
void srv_users_drop_kg(srv_users *u, const char *kg);

#endif
