/* Bootstrap credentials: the admin password and the bootstrap API key come from
 * INPUTLAYER_ADMIN_PASSWORD / INPUTLAYER_BOOTSTRAP_API_KEY, else from
 * <data-dir>/credentials.toml, else they are generated and written there (mode 0600).
 * The password is kept as an argon2id hash, the key as its SHA-256. */
#include <argon2.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
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
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    fchmod(fd, 0600);
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "# Generated bootstrap credentials of inputlayer-server.\n"
                     "admin_password = \"%s\"\napi_key = \"%s\"\n",
                     pw, key);
    bool ok = n > 0 && write(fd, buf, (size_t)n) == n;
    return close(fd) == 0 && ok;
}

bool srv_auth_bootstrap(srv_auth *a, const char *data_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/credentials.toml", data_dir);
    const char *env_pw = getenv("INPUTLAYER_ADMIN_PASSWORD");
    const char *env_key = getenv("INPUTLAYER_BOOTSTRAP_API_KEY");
    if (env_key && !*env_key) env_key = NULL;
    char *file = read_text(path);
    char *pw = env_pw ? strdup(env_pw) : file ? file_value(file, "admin_password") : NULL;
    char *key = env_key ? strdup(env_key) : file ? file_value(file, "api_key") : NULL;
    bool generated = false;
    if (!pw) {
        pw = malloc(65);
        srv_random_hex(pw, 32);
        generated = true;
    }
    if (!key) {
        key = malloc(65);
        srv_random_hex(key, 32);
        generated = true;
    }
    free(file);
    bool ok = true;
    if (generated) {
        if (!write_file(path, pw, key)) {
            fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(errno));
            ok = false;
        } else {
            size_t kl = strlen(key);
            fprintf(stderr,
                    "\n=== INITIAL ADMIN CREDENTIALS CREATED ===\nAdmin API key: ****%s\n"
                    "==========================================\n\n"
                    "Full credentials (API key and password) saved to: %s\n"
                    "Retrieve them with:  cat %s\n\n",
                    kl > 4 ? key + kl - 4 : key, path, path);
        }
    }
    if (ok) {
        unsigned char salt[16];
        RAND_bytes(salt, sizeof salt);
        /* The original's argon2 parameters (v=19, m=19456 KiB, t=2, p=1). */
        size_t enclen = argon2_encodedlen(2, 19456, 1, sizeof salt, 32, Argon2_id);
        a->admin_hash = malloc(enclen);
        if (argon2id_hash_encoded(2, 19456, 1, pw, strlen(pw), salt, sizeof salt, 32, a->admin_hash,
                                  enclen) != ARGON2_OK) {
            fprintf(stderr, "ERROR: cannot hash the admin password\n");
            ok = false;
        }
        SHA256((const unsigned char *)key, strlen(key), a->key_sha);
    }
    OPENSSL_cleanse(pw, strlen(pw));
    OPENSSL_cleanse(key, strlen(key));
    free(pw);
    free(key);
    return ok;
}

bool srv_auth_password(const srv_auth *a, const char *user, const char *pw) {
    /* Verify even for an unknown user so that both cost the same. */
    bool ok = argon2id_verify(a->admin_hash, pw, strlen(pw)) == ARGON2_OK;
    return ok && strcmp(user, "admin") == 0;
}

bool srv_auth_key(const srv_auth *a, const char *key, size_t len) {
    unsigned char sha[32];
    SHA256((const unsigned char *)key, len, sha);
    return CRYPTO_memcmp(sha, a->key_sha, sizeof sha) == 0;
}

void srv_auth_free(srv_auth *a) {
    free(a->admin_hash);
    a->admin_hash = NULL;
}
