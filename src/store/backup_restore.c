/* Restoring an export (backup.h) into a data directory before an engine opens it.
 *
 * Nothing is installed until the whole export checked out: its manifest reads, and
 * every file it lists is there with the listed size and SHA-256. The data directory
 * must hold no data (nothing in wal/ or ckpt/, none of the files to install). Each file
 * is then copied under a temporary name, synced and read back against the manifest
 * again (the copy is what counts), and only then renamed into place: the embedder's
 * files first, the checkpoint last, so that a data directory with a checkpoint has all
 * of them. Any failure removes what the restore created. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "store/backup.h"

static const char TMP_SUFFIX[] = ".restoring";

/* Checks every listed file of the export against the manifest. */
static char *verify(const char *src, int srcfd, const backup_manifest *m) {
    for (uint32_t i = 0; i < m->files.n; i++) {
        const backup_entry *f = &m->files.v[i];
        uint64_t size;
        char sha[65];
        const char *why;
        if (!backup_hash_file(srcfd, f->path, &size, sha, NULL, &why))
            return il_format("%s/%s: %s", src, f->path, why);
        if (size != f->size)
            return il_format("%s/%s: %" PRIu64 " bytes where the manifest lists %" PRIu64
                             " (truncated or changed since the export)",
                             src, f->path, size, f->size);
        if (strcmp(sha, f->sha256) != 0)
            return il_format("%s/%s: SHA-256 mismatch (damaged or changed since the export)", src,
                             f->path);
    }
    return NULL;
}

static bool has_entries(int dirfd, const char *sub) {
    int fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    bool any = false;
    for (struct dirent *de; !any && (de = readdir(d));)
        any = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* Why the data directory cannot take the export, or NULL. */
static char *refusal(const char *dest, int destfd, const backup_manifest *m) {
    if (has_entries(destfd, "wal") || has_entries(destfd, "ckpt"))
        return il_format(
            "%s already holds data (wal/ or ckpt/ is not empty); restore into a new or "
            "empty data directory",
            dest);
    for (uint32_t i = 0; i < m->files.n; i++)
        if (faccessat(destfd, m->files.v[i].path, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            return il_format("%s/%s already exists; restore into a new or empty data directory",
                             dest, m->files.v[i].path);
    return NULL;
}

static bool copy_fd(int in, int out) {
    char buf[1 << 16];
    for (;;) {
        ssize_t k = read(in, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return false;
        if (k == 0) return true;
        for (ssize_t off = 0; off < k;) {
            ssize_t w = write(out, buf + off, (size_t)(k - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return false;
            off += w;
        }
    }
}

/* Copies one file to <path>.restoring under the data directory, synced, and checks the
 * copy against the manifest. */
static char *copy_in(const char *src, int srcfd, const char *dest, int destfd,
                     const backup_entry *f) {
    char *tmp = il_format("%s%s", f->path, TMP_SUFFIX);
    int in = openat(srcfd, f->path, O_RDONLY | O_CLOEXEC);
    int out = openat(destfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    char *err = NULL;
    if (in < 0)
        err = backup_errno_text("cannot read", src, f->path);
    else if (out < 0)
        err = backup_errno_text("cannot create", dest, tmp);
    else if (!copy_fd(in, out) || fsync(out) != 0)
        err = backup_errno_text("cannot write", dest, tmp);
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    uint64_t size;
    char sha[65];
    const char *why;
    if (!err && !backup_hash_file(destfd, tmp, &size, sha, NULL, &why))
        err = il_format("cannot read back %s/%s: %s", dest, tmp, why);
    else if (!err && (size != f->size || strcmp(sha, f->sha256) != 0))
        err = il_format("%s/%s changed while it was copied", src, f->path);
    free(tmp);
    return err;
}

/* Removes what the restore created (the copies, and the files it installed before it
 * failed), leaving the data directory as it was. */
static void undo(int destfd, const backup_manifest *m, const bool *installed, bool made_ckpt) {
    for (uint32_t i = 0; i < m->files.n; i++) {
        char *tmp = il_format("%s%s", m->files.v[i].path, TMP_SUFFIX);
        unlinkat(destfd, tmp, 0);
        if (installed[i]) unlinkat(destfd, m->files.v[i].path, 0);
        free(tmp);
    }
    if (made_ckpt) unlinkat(destfd, "ckpt", AT_REMOVEDIR);
    fsync(destfd);
}

/* Renames the copies into place, the checkpoint last, and syncs the directories. */
static char *install(const char *dest, int destfd, const backup_manifest *m, bool *installed) {
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < m->files.n; i++) {
            const char *path = m->files.v[i].path;
            bool is_ckpt = strncmp(path, "ckpt/", 5) == 0;
            if (is_ckpt != (pass == 1)) continue;
            char *tmp = il_format("%s%s", path, TMP_SUFFIX);
            installed[i] = renameat(destfd, tmp, destfd, path) == 0;
            free(tmp);
            if (!installed[i]) return backup_errno_text("cannot install", dest, path);
        }
        char *dir = pass == 1 ? il_format("%s/ckpt", dest) : strdup(dest);
        bool ok = backup_sync_dir(dir);
        char *err = ok ? NULL : backup_errno_text("cannot sync", dir, "");
        free(dir);
        if (err) return err;
    }
    return NULL;
}

static char *restore(const char *src, const char *dest, const backup_manifest *m,
                     il_restore_info *info) {
    int srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (srcfd < 0) return backup_errno_text("cannot open", src, "");
    char *err = verify(src, srcfd, m);
    bool made_dest = false, made_ckpt = false;
    if (!err && !backup_make_dirs(dest, &made_dest))
        err = backup_errno_text("cannot create", dest, "");
    int destfd = err ? -1 : open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!err && destfd < 0) err = backup_errno_text("cannot open", dest, "");
    if (!err) err = refusal(dest, destfd, m);
    bool accepted = !err; /* from here on, what is in the directory is ours to remove */
    bool *installed = calloc(m->files.n + 1, sizeof *installed);
    if (!err) {
        made_ckpt = mkdirat(destfd, "ckpt", 0700) == 0;
        if (!made_ckpt && errno != EEXIST) err = backup_errno_text("cannot create", dest, "ckpt");
    }
    for (uint32_t i = 0; !err && i < m->files.n; i++)
        err = copy_in(src, srcfd, dest, destfd, &m->files.v[i]);
    if (!err) err = install(dest, destfd, m, installed);
    if (err && accepted) undo(destfd, m, installed, made_ckpt);
    free(installed);
    if (destfd >= 0) close(destfd);
    if (err && made_dest) rmdir(dest);
    close(srcfd);
    if (!err && info) {
        info->revision = m->revision;
        info->files = m->files.n;
        info->bytes = 0;
        for (uint32_t i = 0; i < m->files.n; i++) info->bytes += m->files.v[i].size;
    }
    return err;
}

bool il_backup_restore(const char *backup_dir, const char *data_dir, il_restore_info *info,
                       char **err) {
    char *why = NULL;
    backup_manifest m;
    if (!backup_manifest_read(backup_dir, &m, &why)) {
        if (err)
            *err = why;
        else
            free(why);
        return false;
    }
    why = restore(backup_dir, data_dir, &m, info);
    backup_manifest_free(&m);
    if (err)
        *err = why;
    else
        free(why);
    return why == NULL;
}
