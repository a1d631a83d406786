/* The server's part of online backup (srv_backup.h): the backup directory's place
 * relative to the data directory, and the identity store's file in every export. The
 * export itself (claim, snapshot, writer thread, manifest) is the engine's
 * (il_backup_start, il_backup_poll). */
#include "server/srv_backup.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The absolute, symlink-free form of a path whose last components may not exist yet. */
static char *resolve(const char *path) {
    char *real = realpath(path, NULL);
    if (real || errno != ENOENT) return real;
    char *copy = strdup(path);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/') copy[--n] = 0;
    char *slash = strrchr(copy, '/');
    const char *parent = ".", *base = copy;
    if (slash == copy) {
        parent = "/";
        base = copy + 1;
    } else if (slash) {
        *slash = 0;
        parent = copy;
        base = slash + 1;
    }
    char *up = strcmp(parent, path) == 0 ? NULL : resolve(parent);
    char *out = NULL;
    if (up && strcmp(base, ".") == 0) {
        out = strdup(up);
    } else if (up && strcmp(base, "..") == 0) {
        out = strdup(dirname(up));
    } else if (up) {
        size_t m = strlen(up) + strlen(base) + 2;
        out = malloc(m);
        snprintf(out, m, "%s%s%s", up, strcmp(up, "/") == 0 ? "" : "/", base);
    }
    free(up);
    free(copy);
    return out;
}

static bool inside(const char *path, const char *dir) {
    size_t n = strlen(dir);
    if (strcmp(dir, "/") == 0) return true;
    return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

bool srv_backup_prepare(const srv_config *cfg, char **dir, char *err, size_t errlen) {
    *dir = NULL;
    if (!cfg->backup_dir || !cfg->backup_dir[0]) return true;
    char *backup = resolve(cfg->backup_dir);
    char *data = resolve(cfg->data_dir); /* it may not exist yet */
    bool ok = false;
    if (!backup || !data) {
        snprintf(err, errlen, "storage.backup_dir: cannot resolve %s: %s",
                 backup ? cfg->data_dir : cfg->backup_dir, strerror(errno));
    } else if (inside(backup, data)) {
        snprintf(err, errlen,
                 "storage.backup_dir (%s) is inside the data directory (%s); keep exports "
                 "outside it",
                 backup, data);
    } else if (!il_backup_make_dirs(backup)) {
        snprintf(err, errlen, "storage.backup_dir: cannot create %s: %s", backup, strerror(errno));
    } else {
        ok = true;
    }
    free(data);
    if (ok)
        *dir = backup;
    else
        free(backup);
    return ok;
}

static void capture_identities(void *ctx, il_backup_capture *cap) {
    srv_server *s = ctx;
    il_buf text;
    il_buf_init(&text);
    pthread_mutex_lock(&s->users_lock);
    srv_users_format(&s->users, &text);
    pthread_mutex_unlock(&s->users_lock);
    il_backup_add_file(cap, SRV_USERS_FILE, text.data, text.len);
    il_buf_free(&text);
}

void srv_backup_attach(srv_server *s, const char *dir) {
    il_engine_set_backup(s->engine, dir, capture_identities, s);
}
