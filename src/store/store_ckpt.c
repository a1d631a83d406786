/* Checkpoints of the store: recovery from the newest valid one, taking one when the log
 * has grown past a size (in the background) or on demand (`.compact`, synchronously),
 * and deleting what a newer checkpoint makes unnecessary.
 *
 * What is kept: the two newest checkpoints and the log since the older of them. Losing
 * the newest file (or finding it damaged) then still recovers everything from the one
 * before and the log after it. Deleting happens on the engine's thread once the new
 * checkpoint is durable, so a crash at any point leaves a recoverable directory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/ckpt.h"
#include "store/store_dirs.h"
#include "store/store_state.h"

enum { DEFAULT_MAX_LOG = 64 << 20 };

struct ckpt_job {
    pthread_t thread;
    ckpt_snapshot *snap;
    int dirfd;
    const char *dir;
    bool ok;
    char *err;
    int done; /* set (atomically) by the writer thread when it has finished */
};

static double ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

bool store_ckpt_open(store *st, const char *data_dir, char **err) {
    size_t n = strlen(data_dir) + 8;
    st->ckpt_dir = malloc(n);
    snprintf(st->ckpt_dir, n, "%s/ckpt", data_dir);
    st->max_log_bytes = DEFAULT_MAX_LOG;
    if (!store_private_dir(st->ckpt_dir)) goto fail;
    st->ckpt_dirfd = open(st->ckpt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->ckpt_dirfd < 0) goto fail;
    return true;
fail:
    if (err) {
        const char *why = strerror(errno);
        size_t m = strlen(st->ckpt_dir) + strlen(why) + 16;
        *err = malloc(m);
        snprintf(*err, m, "cannot open %s: %s", st->ckpt_dir, why);
    }
    return false;
}

/* Notes a damaged checkpoint; it is renamed only once recovery is known to proceed. */
static void note_bad(store *st, uint64_t lsn, const char *why) {
    st->bad_ckpts = realloc(st->bad_ckpts, (st->nbad_ckpts + 1) * sizeof *st->bad_ckpts);
    st->bad_ckpts[st->nbad_ckpts].lsn = lsn;
    st->bad_ckpts[st->nbad_ckpts].why = why;
    st->nbad_ckpts++;
}

void store_ckpt_set_aside_bad(store *st) {
    for (size_t i = 0; i < st->nbad_ckpts; i++) {
        char name[64], bad[72];
        ckpt_file_name(name, sizeof name, st->bad_ckpts[i].lsn);
        snprintf(bad, sizeof bad, "%s.bad", name);
        fprintf(stderr,
                "inputlayer: warning: checkpoint %s/%s: %s; falling back to the one before it "
                "and the log since (moved aside to %s)\n",
                st->ckpt_dir, name, st->bad_ckpts[i].why, bad);
        renameat(st->ckpt_dirfd, name, st->ckpt_dirfd, bad);
    }
    free(st->bad_ckpts);
    st->bad_ckpts = NULL;
    st->nbad_ckpts = 0;
}

void store_ckpt_describe_bad(const store *st, il_buf *msg) {
    for (size_t i = 0; i < st->nbad_ckpts; i++) {
        char name[64];
        ckpt_file_name(name, sizeof name, st->bad_ckpts[i].lsn);
        il_buf_printf(msg, "checkpoint %s/%s is damaged (%s); ", st->ckpt_dir, name,
                      st->bad_ckpts[i].why);
    }
}

uint64_t store_ckpt_recover(void *ctx) {
    store *st = ctx;
    size_t n;
    uint64_t *lsns = ckpt_file_list(st->ckpt_dirfd, &n);
    uint64_t loaded = 0;
    while (n && !loaded) {
        uint64_t lsn = lsns[--n];
        unsigned char *image;
        size_t len;
        const char *why = NULL;
        if (!ckpt_file_read(st->ckpt_dirfd, lsn, &image, &len, &why)) {
            note_bad(st, lsn, why);
            continue;
        }
        if (st->host.load_image(st->host.ctx, image, len)) {
            loaded = lsn;
        } else {
            st->host.reset(st->host.ctx);
            note_bad(st, lsn, "its image does not decode");
        }
        free(image);
    }
    free(lsns);
    st->ckpt_lsn = loaded;
    return loaded;
}

static void *write_job(void *arg) {
    struct ckpt_job *j = arg;
    il_buf image;
    il_buf_init(&image);
    ckpt_snapshot_encode(j->snap, &image);
    j->ok = ckpt_file_write(j->dirfd, j->dir, ckpt_snapshot_lsn(j->snap), image.data, image.len,
                            &j->err);
    il_buf_free(&image);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Keeps the newest two checkpoints and the log since the older one. */
static void drop_covered(store *st, uint64_t newest) {
    uint64_t previous = st->ckpt_lsn;
    st->ckpt_lsn = newest;
    if (!previous) return;
    wal_drop_before(st->w, previous);
    size_t n;
    uint64_t *lsns = ckpt_file_list(st->ckpt_dirfd, &n);
    for (size_t i = 0; i < n; i++) {
        if (lsns[i] >= previous) continue;
        char name[64];
        ckpt_file_name(name, sizeof name, lsns[i]);
        unlinkat(st->ckpt_dirfd, name, 0);
    }
    free(lsns);
}

/* Waits for the background checkpoint (when wait) or looks whether it has finished, and
 * when it has, deletes what it made unnecessary. False when it failed (*err then says
 * why, when err is given). */
static bool reap(store *st, bool wait, char **err) {
    struct ckpt_job *j = st->job;
    if (!j || (!wait && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))) return true;
    pthread_join(j->thread, NULL);
    st->job = NULL;
    bool ok = j->ok;
    if (ok) {
        drop_covered(st, ckpt_snapshot_lsn(j->snap));
    } else {
        /* the log still holds everything: a failed checkpoint loses nothing */
        fprintf(stderr, "inputlayer: warning: checkpoint failed: %s\n", j->err);
        if (err) {
            *err = j->err;
            j->err = NULL;
        }
    }
    ckpt_snapshot_free(j->snap);
    free(j->err);
    free(j);
    return ok;
}

static void start_job(store *st) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct ckpt_job *j = calloc(1, sizeof *j);
    j->snap = st->host.snapshot(st->host.ctx, wal_next_lsn(st->w) - 1);
    j->dirfd = st->ckpt_dirfd;
    j->dir = st->ckpt_dir;
    st->last_pause_ms = ms_since(&t0);
    st->since_ckpt = 0;
    if (pthread_create(&j->thread, NULL, write_job, j) != 0) {
        write_job(j); /* no thread to be had: write it here, late rather than never */
        st->job = j;
        reap(st, true, NULL);
        return;
    }
    st->job = j;
}

void store_ckpt_after_commit(store *st, uint64_t bytes) {
    reap(st, false, NULL);
    st->since_ckpt += bytes;
    if (!st->job && !st->failed && st->max_log_bytes && st->since_ckpt >= st->max_log_bytes)
        start_job(st);
}

bool store_checkpoint(store *st, char **err) {
    if (err) *err = NULL;
    reap(st, true, NULL); /* an earlier one in flight first: files complete in order */
    if (st->failed) {
        if (err) *err = strdup("the write-ahead log failed earlier");
        return false;
    }
    if (wal_next_lsn(st->w) - 1 == st->ckpt_lsn) return true; /* nothing new to cover */
    start_job(st);
    return reap(st, true, err);
}

bool store_ckpt_rewrite(store *st, char **err) {
    if (err) *err = NULL;
    reap(st, true, NULL);
    if (wal_next_lsn(st->w) - 1 == st->ckpt_lsn) return true; /* it holds everything already */
    start_job(st);
    return reap(st, true, err);
}

void store_set_checkpoint_bytes(store *st, uint64_t bytes) {
    st->max_log_bytes = bytes;
}

double store_checkpoint_pause_ms(const store *st) {
    return st->last_pause_ms;
}

uint64_t store_checkpoint_lsn(store *st, bool wait) {
    reap(st, wait, NULL);
    return st->ckpt_lsn;
}

void store_ckpt_close(store *st) {
    reap(st, true, NULL);
    if (st->ckpt_dirfd > 0) close(st->ckpt_dirfd);
    free(st->ckpt_dir);
    free(st->bad_ckpts);
}
