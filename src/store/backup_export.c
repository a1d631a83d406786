/* Online exports (backup.h): `.backup [name]` and `.backup status`.
 *
 * On the engine's thread, between two statements: the destination DIR/<name> is
 * claimed (created, or found empty), then the checkpoint snapshot of the stored state
 * and the embedder's files are captured; that capture is all commits wait for. The
 * writer thread then encodes and writes the checkpoint into <dest>/ckpt/, writes the
 * embedder's files, syncs every file and directory, reads every file back for its
 * SHA-256, and writes the manifest last. It holds no engine lock: the snapshot is a
 * copy, and a stored value's string is interned for good (base/intern.h).
 *
 * A failure, or a shutdown while it runs, removes everything the export created, so an
 * export directory is either whole (with its manifest) or gone. One export runs at a
 * time; its outcome is kept for `.backup status` until the next one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "store/backup.h"
#include "store/ckpt.h"

typedef struct extra_file {
    char *name; /* a plain file name of the data directory */
    void *data;
    size_t len;
} extra_file;

struct il_backup_capture {
    IL_VEC(extra_file) files;
};

typedef struct export_job {
    pthread_t thread;
    ckpt_snapshot *snap; /* freed by the writer once encoded */
    il_backup_capture cap;
    uint64_t lsn;
    uint64_t held_us; /* how long the capture held up the engine */
    char *parent;     /* the backup directory */
    char *dest;       /* parent/<name> */
    bool created_dest;
    bool created_ckpt_dir; /* dest/ckpt, by the writer */
    uint32_t nwritten;     /* the embedder's files the writer created, in order */
    char created_at[32];
    struct timespec started; /* when the capture ended and the writer began */
    int stop;                /* atomic: set at shutdown, the writer stops and cleans up */
    int done;                /* atomic: set by the writer when it has finished */
    /* the outcome, valid once done */
    bool ok;
    char *err;
    size_t files;
    uint64_t bytes;
    double write_ms;
} export_job;

struct backup_exporter {
    char *dir; /* where exports go; NULL: `.backup` is refused */
    il_backup_capture_fn capture;
    void *ctx;
    export_job *job;  /* running, or finished and not yet reaped (engine thread) */
    export_job *last; /* the last that finished, for .backup status; NULL: none yet */
};

static double ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- the capture of the embedder's files ---- */

void il_backup_add_file(il_backup_capture *cap, const char *name, const void *data, size_t len) {
    if (!backup_name_ok(name) || strcmp(name, "wal") == 0 || strcmp(name, "ckpt") == 0 ||
        strncmp(name, BACKUP_MANIFEST, sizeof BACKUP_MANIFEST - 1) == 0)
        return;
    for (uint32_t i = 0; i < cap->files.n; i++)
        if (strcmp(cap->files.v[i].name, name) == 0) return;
    extra_file f = {strdup(name), malloc(len ? len : 1), len};
    if (len) memcpy(f.data, data, len);
    il_vec_push(cap->files, f);
}

static void capture_free(il_backup_capture *cap) {
    for (uint32_t i = 0; i < cap->files.n; i++) {
        free(cap->files.v[i].name);
        free(cap->files.v[i].data);
    }
    il_vec_free(cap->files);
}

static void job_free(export_job *j) {
    if (!j) return;
    if (j->snap) ckpt_snapshot_free(j->snap);
    capture_free(&j->cap);
    free(j->parent);
    free(j->dest);
    free(j->err);
    free(j);
}

/* ---- the writer ---- */

static bool stopped(export_job *j) {
    return __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE) != 0;
}

static bool write_file(int dirfd, const char *name, const void *data, size_t len, bool *created) {
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    *created = fd >= 0;
    if (fd < 0) return false;
    const char *p = data;
    bool ok = true;
    for (size_t n = len; ok && n;) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        ok = k > 0;
        if (ok) {
            p += k;
            n -= (size_t)k;
        }
    }
    ok = ok && fsync(fd) == 0;
    int e = errno;
    close(fd);
    errno = e;
    return ok;
}

/* Removes whatever the export created (the manifest's own write cleans up after
 * itself): the directory is whole or gone. */
static void remove_partial(export_job *j, int destfd, const char *ckpt_name) {
    if (destfd >= 0 && j->created_ckpt_dir) {
        char path[128];
        snprintf(path, sizeof path, "ckpt/%s", ckpt_name);
        unlinkat(destfd, path, 0);
        unlinkat(destfd, "ckpt", AT_REMOVEDIR);
    }
    for (uint32_t i = 0; destfd >= 0 && i < j->nwritten; i++)
        unlinkat(destfd, j->cap.files.v[i].name, 0);
    if (j->created_dest) rmdir(j->dest);
    backup_sync_dir(j->parent);
}

/* Hashes every file the export holds into m (the checkpoint first), counting them. */
static bool hash_files(export_job *j, int destfd, const char *ckpt_name, backup_manifest *m) {
    size_t n = j->cap.files.n + 1;
    for (size_t i = 0; i < n; i++) {
        backup_entry e = {0};
        e.path = i == 0 ? il_format("ckpt/%s", ckpt_name) : strdup(j->cap.files.v[i - 1].name);
        il_vec_push(m->files, e);
        backup_entry *f = &m->files.v[m->files.n - 1];
        const char *why;
        if (!backup_hash_file(destfd, f->path, &f->size, f->sha256, &j->stop, &why)) {
            if (!stopped(j))
                j->err = il_format("cannot read back %s/%s: %s", j->dest, f->path, why);
            return false;
        }
        j->bytes += f->size;
    }
    j->files = n;
    return true;
}

static bool write_export(export_job *j, int destfd, const char *ckpt_name) {
    char *ckpt_dir = il_format("%s/ckpt", j->dest);
    int ckptfd = -1;
    j->created_ckpt_dir = mkdirat(destfd, "ckpt", 0700) == 0;
    bool ok = j->created_ckpt_dir &&
              (ckptfd = openat(destfd, "ckpt", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0;
    if (!ok) j->err = backup_errno_text("cannot create", ckpt_dir, "");
    il_buf image;
    il_buf_init(&image);
    if (ok) {
        ckpt_snapshot_encode(j->snap, &image);
        ckpt_snapshot_free(j->snap); /* its memory goes back before the slow part */
        j->snap = NULL;
    }
    if (ok && stopped(j)) ok = false;
    /* written, fsynced, renamed into place and the directory synced */
    if (ok) ok = ckpt_file_write(ckptfd, ckpt_dir, j->lsn, image.data, image.len, &j->err);
    il_buf_free(&image);
    for (uint32_t i = 0; ok && i < j->cap.files.n; i++) {
        const extra_file *f = &j->cap.files.v[i];
        bool created;
        ok = write_file(destfd, f->name, f->data, f->len, &created);
        j->nwritten += created;
        if (!ok) j->err = backup_errno_text("cannot write", j->dest, f->name);
    }
    if (ok && (fsync(ckptfd) != 0 || fsync(destfd) != 0)) {
        j->err = backup_errno_text("cannot sync", j->dest, "");
        ok = false;
    }
    if (ckptfd >= 0) close(ckptfd);
    free(ckpt_dir);
    if (!ok || stopped(j)) return false;
    backup_manifest m = {.revision = j->lsn, .held_us = j->held_us};
    m.engine_version = strdup(IL_ENGINE_VERSION);
    m.created_at = strdup(j->created_at);
    ok = hash_files(j, destfd, ckpt_name, &m) && !stopped(j) &&
         backup_manifest_write(destfd, j->dest, &m, &j->err);
    backup_manifest_free(&m);
    if (ok) {
        struct stat sb;
        if (fstatat(destfd, BACKUP_MANIFEST, &sb, 0) == 0) j->bytes += (uint64_t)sb.st_size;
        j->files++;
        /* the export's own entry in the backup directory */
        if (!backup_sync_dir(j->parent)) {
            j->err = backup_errno_text("cannot sync", j->parent, "");
            ok = false;
        }
    }
    return ok;
}

static void *writer(void *arg) {
    export_job *j = arg;
    char ckpt_name[64];
    ckpt_file_name(ckpt_name, sizeof ckpt_name, j->lsn);
    int destfd = open(j->dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool ok = destfd >= 0;
    if (!ok) j->err = backup_errno_text("cannot open", j->dest, "");
    ok = ok && write_export(j, destfd, ckpt_name);
    if (!ok) {
        if (!j->err) j->err = strdup("stopped by the shutdown of the engine");
        remove_partial(j, destfd, ckpt_name);
        fprintf(stderr,
                "inputlayer: warning: backup: the export of revision %" PRIu64
                " to %s failed: %s; its partial output was removed\n",
                j->lsn, j->dest, j->err);
    }
    if (destfd >= 0) close(destfd);
    j->ok = ok;
    j->write_ms = ms_since(&j->started);
    if (ok)
        fprintf(stderr,
                "inputlayer: backup: exported revision %" PRIu64 " to %s (%zu files, %" PRIu64
                " bytes; commits held %" PRIu64 " us, written in %.0f ms)\n",
                j->lsn, j->dest, j->files, j->bytes, j->held_us, j->write_ms);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* ---- the engine's side ---- */

backup_exporter *backup_exporter_new(void) {
    return calloc(1, sizeof(backup_exporter));
}

/* Joins a finished export (or, with wait, the running one) and keeps its outcome. */
static void reap(backup_exporter *x, bool wait) {
    export_job *j = x->job;
    if (!j || (!wait && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))) return;
    pthread_join(j->thread, NULL);
    x->job = NULL;
    job_free(x->last);
    x->last = j;
}

void backup_exporter_free(backup_exporter *x) {
    if (!x) return;
    if (x->job) __atomic_store_n(&x->job->stop, 1, __ATOMIC_RELEASE);
    reap(x, true);
    job_free(x->last);
    free(x->dir);
    free(x);
}

void backup_exporter_configure(backup_exporter *x, const char *dir, il_backup_capture_fn capture,
                               void *ctx) {
    free(x->dir);
    x->dir = dir && *dir ? strdup(dir) : NULL;
    x->capture = capture;
    x->ctx = ctx;
}

static void reply_error(store_backup_reply *out, char *msg) {
    out->ok = false;
    out->lines[0] = msg;
}

/* The UTC time now as `prefix` + strftime(date) + ".mmmZ". */
static void utc_now(char *out, size_t cap, const char *prefix, const char *date) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[24];
    strftime(when, sizeof when, date, &tm);
    snprintf(out, cap, "%s%s.%03dZ", prefix, when, (int)(ts.tv_nsec / 1000000));
}

static bool dir_empty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    bool empty = true;
    for (struct dirent *de; empty && (de = readdir(d));)
        empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
    closedir(d);
    return empty;
}

/* Creates the destination, or accepts an empty directory there. NULL, or the error. */
static char *claim(export_job *j) {
    if (!backup_make_dirs(j->parent, NULL))
        return backup_errno_text("cannot create", j->parent, "");
    if (mkdir(j->dest, 0700) == 0) {
        j->created_dest = true;
        return NULL;
    }
    if (errno != EEXIST) return backup_errno_text("cannot create", j->dest, "");
    struct stat sb;
    if (stat(j->dest, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return il_format("%s already exists and is not a directory", j->dest);
    if (!dir_empty(j->dest)) return il_format("%s already exists and is not empty", j->dest);
    return NULL;
}

static const char DISABLED[] = "`.backup` is disabled: no backup directory is configured (set "
                               "storage.backup_dir in the server's configuration)";

void backup_export_start(backup_exporter *x, const store_host *host, uint64_t lsn, const char *name,
                         store_backup_reply *out) {
    memset(out, 0, sizeof *out);
    if (!x || !x->dir) {
        reply_error(out, strdup(DISABLED));
        return;
    }
    reap(x, false);
    if (x->job) {
        reply_error(out, il_format("an export is already running (revision %" PRIu64
                                   " to %s); check progress with .backup status",
                                   x->job->lsn, x->job->dest));
        return;
    }
    char fallback[64];
    if (!name) {
        utc_now(fallback, sizeof fallback, "checkpoint-", "%Y%m%dT%H%M%S");
        name = fallback;
    }
    if (!backup_name_ok(name)) {
        reply_error(out,
                    il_format("invalid backup name '%s': use letters, digits, '-', '_' and '.', "
                              "not starting with '.' (at most 200 bytes)",
                              name));
        return;
    }
    export_job *j = calloc(1, sizeof *j);
    j->parent = strdup(x->dir);
    j->dest = il_format("%s/%s", x->dir, name);
    j->lsn = lsn;
    char *err = claim(j);
    if (err) {
        reply_error(out, err);
        job_free(j);
        return;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    j->snap = host->snapshot(host->ctx, lsn);
    if (x->capture) x->capture(x->ctx, &j->cap);
    j->held_us = (uint64_t)(ms_since(&t0) * 1000.0);
    utc_now(j->created_at, sizeof j->created_at, "", "%Y-%m-%dT%H:%M:%S");
    clock_gettime(CLOCK_MONOTONIC, &j->started);
    if (pthread_create(&j->thread, NULL, writer, j) != 0) {
        reply_error(out, il_format("cannot start the export's thread: %s", strerror(errno)));
        remove_partial(j, -1, "");
        job_free(j);
        return;
    }
    x->job = j;
    out->ok = true;
    out->lines[0] =
        il_format("Exporting the checkpoint at revision %" PRIu64 " to %s.", lsn, j->dest);
    out->lines[1] = il_format(
        "Commits were held for %" PRIu64 " us; check progress with .backup status.", j->held_us);
}

void backup_export_status(backup_exporter *x, store_backup_reply *out) {
    memset(out, 0, sizeof *out);
    if (!x || !x->dir) {
        reply_error(out, strdup(DISABLED));
        return;
    }
    reap(x, false);
    out->ok = true;
    const export_job *j = x->job ? x->job : x->last;
    if (!j) {
        out->lines[0] = strdup("No export yet.");
    } else if (x->job) {
        out->lines[0] = il_format("Export running: revision %" PRIu64 " to %s.", j->lsn, j->dest);
        out->lines[1] =
            il_format("Commits were held for %" PRIu64 " us; writing for %.0f ms so far.",
                      j->held_us, ms_since(&j->started));
    } else if (j->ok) {
        out->lines[0] =
            il_format("Last export complete: revision %" PRIu64 " in %s.", j->lsn, j->dest);
        out->lines[1] = il_format("%zu files, %" PRIu64 " bytes; commits held %" PRIu64
                                  " us, written in %.0f ms.",
                                  j->files, j->bytes, j->held_us, j->write_ms);
    } else {
        out->lines[0] = il_format("Last export failed: revision %" PRIu64 " to %s: %s.", j->lsn,
                                  j->dest, j->err);
        out->lines[1] = strdup("Its partial output was removed.");
    }
}
