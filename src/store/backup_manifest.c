/* The manifest of an export (backup.h) and the file helpers that exporting and restoring
 * share: SHA-256 of a file as it is on disk, directory syncs, the names an export may
 * hold. The manifest is JSON (written last, read first):
 *
 *   {"format": "inputlayer-backup", "format_version": 1, "engine_version": "0.1.0",
 *    "revision": N, "log_position": N, "created_at": "2025-01-31T12:00:00.123Z",
 *    "commits_held_us": X, "files": [{"path": ..., "size": ..., "sha256": ...}, ...]}
 *
 * The revision of an export is the log position its checkpoint covers, so both fields
 * hold the same number. A manifest that names a path outside the export, or anything but
 * one checkpoint named after its revision and plain files, is refused: restore copies
 * what it lists into a data directory. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "store/backup.h"
#include "store/ckpt.h"

static const char FORMAT[] = "inputlayer-backup";
enum { FORMAT_VERSION = 1, NAME_MAX_BYTES = 200, HASH_CHUNK = 1 << 20 };

char *backup_errno_text(const char *what, const char *dir, const char *name) {
    const char *why = strerror(errno);
    size_t n = strlen(what) + strlen(dir) + strlen(name) + strlen(why) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s %s%s%s: %s", what, dir, *name ? "/" : "", name, why);
    return s;
}

bool backup_sync_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = fsync(fd) == 0;
    int e = errno;
    close(fd);
    errno = e;
    return ok;
}

bool backup_make_dirs(const char *path, bool *created) {
    char *buf = strdup(path);
    bool ok = true;
    for (char *p = buf + 1; *p && ok; p++) {
        if (*p != '/') continue;
        *p = 0;
        ok = mkdir(buf, 0700) == 0 || errno == EEXIST;
        *p = '/';
    }
    bool made = ok && mkdir(buf, 0700) == 0;
    ok = made || (ok && errno == EEXIST);
    if (created) *created = made;
    free(buf);
    return ok;
}

bool backup_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > NAME_MAX_BYTES || name[0] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

bool backup_hash_file(int dirfd, const char *path, uint64_t *size, char sha256[65], const int *stop,
                      const char **why) {
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = errno == ENOENT ? "missing" : strerror(errno);
        return false;
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    unsigned char *buf = malloc(HASH_CHUNK);
    uint64_t total = 0;
    *why = ok ? NULL : "SHA-256 is not available";
    while (ok) {
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
            *why = "stopped";
            ok = false;
            break;
        }
        ssize_t k = read(fd, buf, HASH_CHUNK);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            *why = strerror(errno);
            ok = false;
        } else if (k == 0) {
            break;
        } else {
            total += (uint64_t)k;
            ok = EVP_DigestUpdate(ctx, buf, (size_t)k) == 1;
        }
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (ok && (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)) {
        *why = "SHA-256 failed";
        ok = false;
    }
    if (ok) {
        for (int i = 0; i < 32; i++) snprintf(sha256 + 2 * i, 3, "%02x", md[i]);
        *size = total;
    }
    free(buf);
    EVP_MD_CTX_free(ctx);
    close(fd);
    return ok;
}

void backup_manifest_free(backup_manifest *m) {
    for (uint32_t i = 0; i < m->files.n; i++) free(m->files.v[i].path);
    il_vec_free(m->files);
    free(m->engine_version);
    free(m->created_at);
    memset(m, 0, sizeof *m);
}

static bool write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

bool backup_manifest_write(int dirfd, const char *dir, const backup_manifest *m, char **err) {
    json_t *files = json_array();
    for (uint32_t i = 0; i < m->files.n; i++) {
        const backup_entry *f = &m->files.v[i];
        json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "path", f->path, "size",
                                               (json_int_t)f->size, "sha256", f->sha256));
    }
    json_t *root =
        json_pack("{s:s, s:i, s:s, s:I, s:I, s:s, s:I, s:o}", "format", FORMAT, "format_version",
                  FORMAT_VERSION, "engine_version", m->engine_version, "revision",
                  (json_int_t)m->revision, "log_position", (json_int_t)m->revision, "created_at",
                  m->created_at, "commits_held_us", (json_int_t)m->held_us, "files", files);
    char *json = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    static const char TMP[] = BACKUP_MANIFEST ".tmp";
    int fd = openat(dirfd, TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && json;
    if (!ok) *err = backup_errno_text("cannot create", dir, TMP);
    if (ok && (!write_all(fd, json, strlen(json)) || !write_all(fd, "\n", 1) || fsync(fd) != 0)) {
        *err = backup_errno_text("cannot write", dir, TMP);
        ok = false;
    }
    if (fd >= 0) close(fd);
    /* the rename makes the export whole at once; the directory sync makes that durable */
    if (ok && (renameat(dirfd, TMP, dirfd, BACKUP_MANIFEST) != 0 || fsync(dirfd) != 0)) {
        *err = backup_errno_text("cannot install", dir, BACKUP_MANIFEST);
        ok = false;
    }
    if (!ok) {
        unlinkat(dirfd, TMP, 0);
        unlinkat(dirfd, BACKUP_MANIFEST, 0);
    }
    free(json);
    return ok;
}

static bool hex64(const char *s) {
    if (strlen(s) != 64) return false;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* The path an entry may have: the checkpoint ckpt/<name of the revision's checkpoint>,
 * or a plain file beside it that is not one of the store's own names. */
static bool entry_path_ok(const char *path, uint64_t revision, bool *is_ckpt) {
    char ckpt[80], name[64];
    ckpt_file_name(name, sizeof name, revision);
    snprintf(ckpt, sizeof ckpt, "ckpt/%s", name);
    *is_ckpt = strcmp(path, ckpt) == 0;
    if (*is_ckpt) return true;
    return backup_name_ok(path) && strcmp(path, "wal") != 0 && strcmp(path, "ckpt") != 0 &&
           strncmp(path, BACKUP_MANIFEST, sizeof BACKUP_MANIFEST - 1) != 0;
}

static bool read_entries(json_t *files, backup_manifest *m, char **err) {
    size_t i;
    json_t *f;
    size_t nckpt = 0;
    json_array_foreach(files, i, f) {
        const char *path = NULL, *sha = NULL;
        json_int_t size = -1;
        if (json_unpack(f, "{s:s, s:I, s:s}", "path", &path, "size", &size, "sha256", &sha) != 0 ||
            size < 0 || !hex64(sha)) {
            *err = strdup("a file entry is not {\"path\", \"size\", \"sha256\"}");
            return false;
        }
        bool is_ckpt;
        if (!entry_path_ok(path, m->revision, &is_ckpt)) {
            *err = il_format("it lists '%s', which an export cannot hold", path);
            return false;
        }
        for (uint32_t j = 0; j < m->files.n; j++)
            if (strcmp(m->files.v[j].path, path) == 0) {
                *err = il_format("it lists '%s' twice", path);
                return false;
            }
        nckpt += is_ckpt;
        backup_entry e = {.path = strdup(path), .size = (uint64_t)size};
        memcpy(e.sha256, sha, 65);
        il_vec_push(m->files, e);
    }
    if (nckpt != 1) {
        *err = strdup("it lists no checkpoint of its revision");
        return false;
    }
    return true;
}

bool backup_manifest_read(const char *dir, backup_manifest *m, char **err) {
    memset(m, 0, sizeof *m);
    size_t n = strlen(dir) + sizeof BACKUP_MANIFEST + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, BACKUP_MANIFEST);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    bool ok = false;
    char *why = NULL;
    if (!root) {
        if (access(dir, F_OK) != 0)
            why = il_format("cannot open %s: %s", dir, strerror(errno));
        else if (access(path, F_OK) != 0)
            why = il_format(
                "%s has no manifest (%s): it is not an export, or one that did not finish", dir,
                BACKUP_MANIFEST);
        else
            why = il_format("%s: %s", path, jerr.text);
        *err = why;
        free(path);
        return false;
    }
    const char *format = NULL, *version = NULL, *created = NULL;
    json_int_t fv = 0, revision = -1, position = -1, held = 0;
    json_t *files = NULL;
    if (json_unpack(root, "{s:s, s:I, s:s, s:I, s:I, s:s, s:I, s:o}", "format", &format,
                    "format_version", &fv, "engine_version", &version, "revision", &revision,
                    "log_position", &position, "created_at", &created, "commits_held_us", &held,
                    "files", &files) != 0 ||
        strcmp(format, FORMAT) != 0 || !json_is_array(files) || revision < 0 ||
        position != revision || held < 0) {
        why = strdup("not an InputLayer backup manifest");
    } else if (fv != FORMAT_VERSION) {
        why = strdup("a manifest format this version does not read");
    } else {
        m->revision = (uint64_t)revision;
        m->held_us = (uint64_t)held;
        m->engine_version = strdup(version);
        m->created_at = strdup(created);
        ok = read_entries(files, m, &why);
    }
    json_decref(root);
    if (!ok) {
        *err = il_format("%s: %s", path, why);
        free(why);
        backup_manifest_free(m);
    }
    free(path);
    return ok;
}
