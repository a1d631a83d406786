/* Credentials at start and per request. On the first start (an empty identity store) the
 * admin user and the `bootstrap` API key are created: the password comes from
 * INPUTLAYER_ADMIN_PASSWORD, else <credentials file>, else http.auth.bootstrap_admin_password,
 * else it is generated; the key from INPUTLAYER_BOOTSTRAP_API_KEY, else the file, else it is
 * generated. What was generated is written to the credentials file (mode 0600). Later
 * starts use the store and ignore those sources, as the original does. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server.h"

void srv_random_hex(char *out, size_t nbytes) {
    unsigned char buf[64];
    if (nbytes > sizeof buf) nbytes = sizeof buf;
    if (RAND_bytes(buf, (int)nbytes) != 1) abort();
    for (size_t i = 0; i < nbytes; i++) snprintf(out + 2 * i, 3, "%02x", buf[i]);
    out[2 * nbytes] = 0;
}

/* Reads `name = "value"` from a credentials file written by write_file. */
static char *file_value(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) != 0) continue;
        const char *q = p + n;
        while (*q == ' ') q++;
        if (*q++ != '=') continue;
        while (*q == ' ') q++;
        if (*q++ != '"') continue;
        const char *e = strchr(q, '"');
        if (!e) return NULL;
        return strndup(q, (size_t)(e - q));
    }
    return NULL;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 4097);
    size_t n = fread(buf, 1, 4096, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static bool write_file(const char *path, const char *pw, const char *key) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    fchmod(fd, 0600);
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b,
                  "# Generated bootstrap credentials of inputlayer-server.\n"
                  "admin_password = \"%s\"\napi_key = \"%s\"\n",
                  pw, key);
    bool ok = write(fd, b.data, b.len) == (ssize_t)b.len;
    OPENSSL_cleanse(b.data, b.len);
    il_buf_free(&b);
    return close(fd) == 0 && ok;
}

static char *random_secret(void) {
    char *s = malloc(65);
    srv_random_hex(s, 32);
    return s;
}

static void forget(char *secret) {
    if (!secret) return;
    OPENSSL_cleanse(secret, strlen(secret));
    free(secret);
}

bool srv_auth_bootstrap(srv_server *s) {
    const srv_config *cfg = s->cfg;
    const char *env_pw = getenv("INPUTLAYER_ADMIN_PASSWORD");
    const char *env_key = getenv("INPUTLAYER_BOOTSTRAP_API_KEY");
    if (env_key && !*env_key) env_key = NULL;
    if (s->users.nusers > 0) {
        if (env_pw || env_key)
            fprintf(stderr,
                    "WARNING: %s already holds users: INPUTLAYER_ADMIN_PASSWORD and "
                    "INPUTLAYER_BOOTSTRAP_API_KEY are used on the first start only\n",
                    s->users.path);
        return true;
    }
    il_buf path;
    il_buf_init(&path);
    if (cfg->credentials_file && cfg->credentials_file[0])
        il_buf_puts(&path, cfg->credentials_file);
    else
        il_buf_printf(&path, "%s/credentials.toml", cfg->data_dir);
    char *file = read_text(path.data);
    char *file_pw = file ? file_value(file, "admin_password") : NULL;
    char *pw = env_pw    ? strdup(env_pw)
               : file_pw ? strdup(file_pw)
               : cfg->bootstrap_admin_password && cfg->bootstrap_admin_password[0]
                   ? strdup(cfg->bootstrap_admin_password)
                   : NULL;
    forget(file_pw);
    char *key = env_key ? strdup(env_key) : file ? file_value(file, "api_key") : NULL;
    if (file) OPENSSL_cleanse(file, strlen(file));
    free(file);
    bool generated = false;
    if (!pw) {
        pw = random_secret();
        generated = true;
    }
    if (!key) {
        key = random_secret();
        generated = true;
    }
    bool ok = true;
    if (generated) {
        if (!write_file(path.data, pw, key)) {
            fprintf(stderr, "ERROR: cannot write %s: %s\n", path.data, strerror(errno));
            ok = false;
        } else {
            size_t kl = strlen(key);
            fprintf(stderr,
                    "\n=== INITIAL ADMIN CREDENTIALS CREATED ===\nAdmin API key: ****%s\n"
                    "==========================================\n\n"
                    "Full credentials (API key and password) saved to: %s\n"
                    "Retrieve them with:  cat %s\n\n",
                    kl > 4 ? key + kl - 4 : key, path.data, path.data);
        }
    }
    char err[512];
    if (ok && (!srv_users_add(&s->users, "admin", pw, SRV_ROLE_ADMIN) ||
               !srv_users_add_key(&s->users, "bootstrap", "admin", key, -1))) {
        fprintf(stderr, "ERROR: cannot hash the admin password\n");
        ok = false;
    }
    if (ok && !srv_users_save(&s->users, err, sizeof err)) {
        fprintf(stderr, "ERROR: %s\n", err);
        ok = false;
    }
    forget(pw);
    forget(key);
    il_buf_free(&path);
    return ok;
}

srv_user *srv_auth_current(srv_conn *c, enum srv_notice *why_out) {
    srv_users *u = &c->srv->users;
    srv_user *user = srv_users_find(u, c->user);
    enum srv_notice why = SRV_N_CREDENTIAL_REVOKED;
    if (user && c->via == SRV_VIA_KEY) {
        srv_key *k = srv_users_key_by_id(u, c->key_id);
        if (!k || strcmp(k->owner, c->user) != 0) {
            user = NULL;
        } else if (srv_key_expired(k, srv_wall_ms())) {
            user = NULL;
            why = SRV_N_CREDENTIAL_EXPIRED;
        }
    }
    /* Normally the fence closed the connection when the credential ended; this catches an
     * expiry that the timer has not reached yet. */
    *why_out = why;
    return user;
}
