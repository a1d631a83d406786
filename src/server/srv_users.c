/* The identity store of srv_users.h. The file is tab-separated text, one record a line
 * (`user`, `key`, `acl`), which is enough because names can hold no whitespace (the
 * commands that create them split on it). It is rewritten whole, through a temporary
 * file and rename, so a crash leaves the old or the new store and never half of one. */
#include <argon2.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "server/srv_users.h"

/* The original's argon2 parameters (v=19, m=19456 KiB, t=2, p=1), so that its PHC
 * strings and ours verify alike. */
enum { ARGON_T = 2, ARGON_M = 19456, ARGON_P = 1, SALT_LEN = 16, HASH_LEN = 32 };

int64_t srv_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool srv_name_ok(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7F) return false;
    return true;
}

static const char *const ROLES[] = {"admin", "editor", "viewer"};
static const char *const KG_ROLES[] = {"none", "viewer", "editor", "owner"};

const char *srv_role_name(srv_role r) {
    return ROLES[r];
}

bool srv_role_parse(const char *s, srv_role *r) {
    for (int i = 0; i < 3; i++)
        if (strcasecmp(s, ROLES[i]) == 0) {
            *r = (srv_role)i;
            return true;
        }
    return false;
}

const char *srv_kg_role_name(srv_kg_role r) {
    return KG_ROLES[r];
}

bool srv_kg_role_parse(const char *s, srv_kg_role *r) {
    for (int i = 1; i < 4; i++)
        if (strcasecmp(s, KG_ROLES[i]) == 0) {
            *r = (srv_kg_role)i;
            return true;
        }
    return false;
}

static char *hash_password(const char *pw) {
    unsigned char salt[SALT_LEN];
    if (RAND_bytes(salt, sizeof salt) != 1) return NULL;
    size_t len = argon2_encodedlen(ARGON_T, ARGON_M, ARGON_P, SALT_LEN, HASH_LEN, Argon2_id);
    char *out = malloc(len);
    if (argon2id_hash_encoded(ARGON_T, ARGON_M, ARGON_P, pw, strlen(pw), salt, SALT_LEN, HASH_LEN,
                              out, len) != ARGON2_OK) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- users ---- */

srv_user *srv_users_find(srv_users *u, const char *name) {
    for (size_t i = 0; i < u->nusers; i++)
        if (strcmp(u->users[i].name, name) == 0) return &u->users[i];
    return NULL;
}

srv_user *srv_users_check_password(srv_users *u, const char *name, const char *pw) {
    srv_user *user = srv_users_find(u, name);
    /* An unknown user is verified against a dummy hash: the reply time must not tell
     * whether the user exists. */
    const char *hash = user ? user->hash : u->dummy_hash;
    bool ok = hash && argon2_verify(hash, pw, strlen(pw), Argon2_id) == ARGON2_OK;
    return ok && user ? user : NULL;
}

bool srv_users_add(srv_users *u, const char *name, const char *pw, srv_role role) {
    char *hash = hash_password(pw);
    if (!hash) return false;
    u->users = realloc(u->users, (u->nusers + 1) * sizeof *u->users);
    u->users[u->nusers++] = (srv_user){strdup(name), hash, role};
    return true;
}

bool srv_users_set_password(srv_user *user, const char *pw) {
    char *hash = hash_password(pw);
    if (!hash) return false;
    free(user->hash);
    user->hash = hash;
    return true;
}

static void free_key(srv_key *k) {
    free(k->label);
    free(k->owner);
}

static void free_acl(srv_acl *a) {
    free(a->kg);
    free(a->user);
}

void srv_users_drop(srv_users *u, const char *name) {
    size_t o = 0;
    for (size_t i = 0; i < u->nkeys; i++) {
        if (strcmp(u->keys[i].owner, name) == 0)
            free_key(&u->keys[i]);
        else
            u->keys[o++] = u->keys[i];
    }
    u->nkeys = o;
    o = 0;
    for (size_t i = 0; i < u->nacls; i++) {
        if (strcmp(u->acls[i].user, name) == 0)
            free_acl(&u->acls[i]);
        else
            u->acls[o++] = u->acls[i];
    }
    u->nacls = o;
    for (size_t i = 0; i < u->nusers; i++) {
        if (strcmp(u->users[i].name, name) != 0) continue;
        free(u->users[i].name);
        free(u->users[i].hash);
        memmove(&u->users[i], &u->users[i + 1], (u->nusers - i - 1) * sizeof *u->users);
        u->nusers--;
        return;
    }
}

/* ---- API keys ---- */

bool srv_key_expired(const srv_key *k, int64_t now_ms) {
    return k->expires_ms >= 0 && now_ms >= k->expires_ms;
}

srv_key *srv_users_key_by_secret(srv_users *u, const char *secret, size_t len) {
    unsigned char sha[32];
    SHA256((const unsigned char *)secret, len, sha);
    srv_key *found = NULL;
    for (size_t i = 0; i < u->nkeys; i++)
        if (CRYPTO_memcmp(sha, u->keys[i].sha, sizeof sha) == 0) found = &u->keys[i];
    return found;
}

srv_key *srv_users_key_by_label(srv_users *u, const char *label) {
    for (size_t i = 0; i < u->nkeys; i++)
        if (strcmp(u->keys[i].label, label) == 0) return &u->keys[i];
    return NULL;
}

srv_key *srv_users_key_by_id(srv_users *u, uint64_t id) {
    for (size_t i = 0; i < u->nkeys; i++)
        if (u->keys[i].id == id) return &u->keys[i];
    return NULL;
}

static srv_key *push_key(srv_users *u, const char *label, const char *owner) {
    u->keys = realloc(u->keys, (u->nkeys + 1) * sizeof *u->keys);
    srv_key *k = &u->keys[u->nkeys++];
    memset(k, 0, sizeof *k);
    k->id = ++u->next_key_id;
    k->label = strdup(label);
    k->owner = strdup(owner);
    k->created_ms = srv_wall_ms();
    k->expires_ms = k->last_used_ms = -1;
    return k;
}

srv_key *srv_users_add_key(srv_users *u, const char *label, const char *owner, const char *secret,
                           int64_t expires_ms) {
    srv_key *k = push_key(u, label, owner);
    SHA256((const unsigned char *)secret, strlen(secret), k->sha);
    k->expires_ms = expires_ms;
    return k;
}

void srv_users_drop_key(srv_users *u, const char *label) {
    for (size_t i = 0; i < u->nkeys; i++) {
        if (strcmp(u->keys[i].label, label) != 0) continue;
        free_key(&u->keys[i]);
        memmove(&u->keys[i], &u->keys[i + 1], (u->nkeys - i - 1) * sizeof *u->keys);
        u->nkeys--;
        return;
    }
}

/* ---- ACLs ---- */

static srv_acl *find_acl(const srv_users *u, const char *kg, const char *user) {
    for (size_t i = 0; i < u->nacls; i++)
        if (strcmp(u->acls[i].kg, kg) == 0 && strcmp(u->acls[i].user, user) == 0)
            return &u->acls[i];
    return NULL;
}

srv_kg_role srv_users_acl(const srv_users *u, const char *kg, const char *user) {
    srv_acl *a = find_acl(u, kg, user);
    return a ? a->role : SRV_KG_NONE;
}

void srv_users_grant(srv_users *u, const char *kg, const char *user, srv_kg_role role) {
    srv_acl *a = find_acl(u, kg, user);
    if (a) {
        a->role = role;
        return;
    }
    u->acls = realloc(u->acls, (u->nacls + 1) * sizeof *u->acls);
    u->acls[u->nacls++] = (srv_acl){strdup(kg), strdup(user), role};
}

bool srv_users_revoke(srv_users *u, const char *kg, const char *user) {
    srv_acl *a = find_acl(u, kg, user);
    if (!a) return false;
    free_acl(a);
    size_t i = (size_t)(a - u->acls);
    memmove(a, a + 1, (u->nacls - i - 1) * sizeof *a);
    u->nacls--;
    return true;
}

void srv_users_drop_kg(srv_users *u, const char *kg) {
    size_t o = 0;
    for (size_t i = 0; i < u->nacls; i++) {
        if (strcmp(u->acls[i].kg, kg) == 0)
            free_acl(&u->acls[i]);
        else
            u->acls[o++] = u->acls[i];
    }
    u->nacls = o;
}

/* ---- the file ---- */

static const char HEADER[] = "# inputlayer-server identities, format 1. Written by the server.\n";

static void put_time(il_buf *b, int64_t t) {
    if (t < 0)
        il_buf_puts(b, "\t-");
    else
        il_buf_printf(b, "\t%lld", (long long)t);
}

void srv_users_format(const srv_users *u, il_buf *out) {
    il_buf_puts(out, HEADER);
    for (size_t i = 0; i < u->nusers; i++)
        il_buf_printf(out, "user\t%s\t%s\t%s\n", u->users[i].name, srv_role_name(u->users[i].role),
                      u->users[i].hash);
    for (size_t i = 0; i < u->nkeys; i++) {
        const srv_key *k = &u->keys[i];
        il_buf_printf(out, "key\t%s\t%s\t", k->label, k->owner);
        for (int j = 0; j < 32; j++) il_buf_printf(out, "%02x", k->sha[j]);
        put_time(out, k->created_ms);
        put_time(out, k->expires_ms);
        put_time(out, k->last_used_ms);
        il_buf_putc(out, '\n');
    }
    for (size_t i = 0; i < u->nacls; i++)
        il_buf_printf(out, "acl\t%s\t%s\t%s\n", u->acls[i].kg, u->acls[i].user,
                      srv_kg_role_name(u->acls[i].role));
}

bool srv_users_save(srv_users *u, char *err, size_t errlen) {
    il_buf b;
    il_buf_init(&b);
    srv_users_format(u, &b);
    il_buf tmp;
    il_buf_init(&tmp);
    il_buf_printf(&tmp, "%s.tmp", u->path);
    bool ok = false;
    int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ok = fchmod(fd, 0600) == 0;
        for (size_t off = 0; ok && off < b.len;) {
            ssize_t n = write(fd, b.data + off, b.len - off);
            if (n < 0 && errno == EINTR) continue;
            ok = n > 0;
            if (ok) off += (size_t)n;
        }
        ok = ok && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        ok = ok && rename(tmp.data, u->path) == 0;
        if (ok) {
            /* The rename itself must survive a crash. */
            char *dir = strdup(u->path);
            int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd >= 0) {
                fsync(dfd);
                close(dfd);
            }
            free(dir);
        }
    }
    if (!ok) {
        int e = errno;
        unlink(tmp.data);
        snprintf(err, errlen, "cannot write %s: %s", u->path, strerror(e));
    }
    il_buf_free(&tmp);
    il_buf_free(&b);
    return ok;
}

static bool parse_time(const char *s, int64_t *t) {
    if (strcmp(s, "-") == 0) {
        *t = -1;
        return true;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < 0) return false;
    *t = v;
    return true;
}

static bool hex32(const char *s, uint8_t out[32]) {
    if (strlen(s) != 64) return false;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
        out[i] = (uint8_t)v;
    }
    return true;
}

/* One record; fields are the tab-separated parts of the line. */
static const char *load_record(srv_users *u, char **f, size_t n) {
    if (strcmp(f[0], "user") == 0) {
        srv_role role;
        if (n != 4) return "a user record has 4 fields";
        if (!srv_name_ok(f[1], SRV_NAME_MAX)) return "invalid user name";
        if (!srv_role_parse(f[2], &role)) return "invalid role";
        if (strncmp(f[3], "$argon2", 7) != 0) return "invalid password hash";
        if (srv_users_find(u, f[1])) return "duplicate user";
        u->users = realloc(u->users, (u->nusers + 1) * sizeof *u->users);
        u->users[u->nusers++] = (srv_user){strdup(f[1]), strdup(f[3]), role};
        return NULL;
    }
    if (strcmp(f[0], "key") == 0) {
        if (n != 7) return "a key record has 7 fields";
        if (!srv_name_ok(f[1], SRV_NAME_MAX) || !srv_name_ok(f[2], SRV_NAME_MAX))
            return "invalid key label or owner";
        if (srv_users_key_by_label(u, f[1])) return "duplicate key label";
        uint8_t sha[32];
        int64_t created, expires, used;
        if (!hex32(f[3], sha)) return "invalid key hash";
        if (!parse_time(f[4], &created) || !parse_time(f[5], &expires) || !parse_time(f[6], &used))
            return "invalid time";
        srv_key *k = push_key(u, f[1], f[2]);
        memcpy(k->sha, sha, 32);
        k->created_ms = created;
        k->expires_ms = expires;
        k->last_used_ms = used;
        return NULL;
    }
    if (strcmp(f[0], "acl") == 0) {
        srv_kg_role role;
        if (n != 4) return "an acl record has 4 fields";
        if (!srv_name_ok(f[1], SRV_KG_NAME_MAX) || !srv_name_ok(f[2], SRV_NAME_MAX))
            return "invalid knowledge graph or user name";
        if (!srv_kg_role_parse(f[3], &role)) return "invalid knowledge graph role";
        srv_users_grant(u, f[1], f[2], role);
        return NULL;
    }
    return "unknown record type";
}

bool srv_users_load(srv_users *u, const char *path, char *err, size_t errlen) {
    memset(u, 0, sizeof *u);
    u->path = strdup(path);
    /* A random password nobody knows: unknown users are checked against it. */
    unsigned char rnd[16];
    if (RAND_bytes(rnd, sizeof rnd) != 1) abort();
    char pw[33];
    for (int i = 0; i < 16; i++) snprintf(pw + 2 * i, 3, "%02x", rnd[i]);
    u->dummy_hash = hash_password(pw);
    if (!u->dummy_hash) {
        snprintf(err, errlen, "cannot compute an argon2 hash");
        return false;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return true;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (len == 0 || line[0] == '#') continue;
        char *fields[8];
        size_t n = 0;
        for (char *p = line; n < 8;) {
            fields[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        const char *why = n >= 8 ? "too many fields" : load_record(u, fields, n);
        if (why) {
            snprintf(err, errlen, "%s line %d: %s", path, lineno, why);
            ok = false;
        }
    }
    free(line);
    fclose(f);
    return ok;
}

void srv_users_free(srv_users *u) {
    for (size_t i = 0; i < u->nusers; i++) {
        free(u->users[i].name);
        OPENSSL_cleanse(u->users[i].hash, strlen(u->users[i].hash));
        free(u->users[i].hash);
    }
    for (size_t i = 0; i < u->nkeys; i++) free_key(&u->keys[i]);
    for (size_t i = 0; i < u->nacls; i++) free_acl(&u->acls[i]);
    free(u->users);
    free(u->keys);
    free(u->acls);
    free(u->dummy_hash);
    free(u->path);
    memset(u, 0, sizeof *u);
}
