/* The durable store: opening a data directory (recovery from its newest checkpoint and
 * the log after it), committing a statement's effects as one record, durability modes.
 * The log lives in DATA/wal/ and checkpoints in DATA/ckpt/, so the data directory can
 * hold other files (the server's credentials). */
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/backup.h"
#include "store/store_dirs.h"
#include "store/store_state.h"

static bool replay(void *ctx, uint64_t lsn, const void *payload, size_t len) {
    (void)lsn;
    store *st = ctx;
    if (!st->host.apply(st->host.ctx, payload, len, false)) return false;
    if (!st->host.apply(st->host.ctx, payload, len, true)) return false;
    /* The log since the checkpoint counts toward the next one across restarts: a server
       restarted more often than it writes max_log_bytes still takes checkpoints. */
    st->since_ckpt += WAL_RECORD_HEADER + len;
    return true;
}

store *store_open(const store_host *host, const char *data_dir, uint64_t seg_size, char **err) {
    return store_open_recover(host, data_dir, seg_size, false, err);
}

/* The message of an open refused because recovery would lose acknowledged commits: what
 * is damaged, that nothing changed, and the way to start anyway. */
static char *refusal(const store *st, const char *data_dir, const char *wal_msg) {
    il_buf msg;
    il_buf_init(&msg);
    il_buf_printf(&msg, "cannot recover %s up to its last acknowledged commit: ", data_dir);
    store_ckpt_describe_bad(st, &msg);
    il_buf_printf(&msg,
                  "%s. Nothing was changed. To start from what is readable, losing what is "
                  "not, start with --recover=salvage: it moves the damaged files aside "
                  "(*.bad, *.cut) rather than deleting them",
                  wal_msg);
    return msg.data;
}

store *store_open_recover(const store_host *host, const char *data_dir, uint64_t seg_size,
                          bool salvage, char **err) {
    if (err) *err = NULL;
    if (!store_private_dir(data_dir)) {
        if (err) {
            size_t n = strlen(data_dir) + strlen(strerror(errno)) + 32;
            *err = malloc(n);
            snprintf(*err, n, "cannot create %s: %s", data_dir, strerror(errno));
        }
        return NULL;
    }
    size_t n = strlen(data_dir) + 8;
    char *dir = malloc(n);
    snprintf(dir, n, "%s/wal", data_dir);
    store *st = calloc(1, sizeof *st);
    st->host = *host;
    st->ckpt_dirfd = -1;
    if (!store_ckpt_open(st, data_dir, err)) {
        free(dir);
        store_close(st);
        return NULL;
    }
    /* the newest valid checkpoint is loaded once the log's lock is held, then the log
       after its position is replayed */
    wal_recovery rec = {.salvage = salvage};
    char *wal_err = NULL;
    st->w = wal_open_after(dir, seg_size, &rec, store_ckpt_recover, replay, st, &wal_err);
    free(dir);
    if (!st->w) {
        if (rec.refused) {
            char *msg = refusal(st, data_dir, wal_err);
            free(wal_err);
            wal_err = msg;
        }
        if (err)
            *err = wal_err;
        else
            free(wal_err);
        store_close(st);
        return NULL;
    }
    store_ckpt_set_aside_bad(st);
    if (wal_salvaged_to(st->w)) {
        /* bridges the numbers salvage skipped: the next open starts from it */
        char *ckpt_err = NULL;
        if (!store_checkpoint(st, &ckpt_err)) {
            if (err)
                *err = il_format("salvage of %s: cannot write the checkpoint of what was "
                                 "recovered: %s",
                                 data_dir, ckpt_err ? ckpt_err : "?");
            free(ckpt_err);
            store_close(st);
            return NULL;
        }
    }
    return st;
}

void store_close(store *st) {
    if (!st) return;
    backup_exporter_free(st->backup); /* stops an export still running */
    store_ckpt_close(st);
    wal_close(st->w);
    free(st);
}

bool store_failed(const store *st) {
    return st && __atomic_load_n(&st->failed, __ATOMIC_ACQUIRE);
}

static void set_failed(store *st) {
    __atomic_store_n(&st->failed, true, __ATOMIC_RELEASE);
}

bool store_commit(store *st, const void *payload, size_t len, bool undoable, bool *written,
                  char **err) {
    if (err) *err = NULL;
    if (written) *written = true;
    if (!st) return true;
    bool ok = true;
    if (len) {
        uint64_t lsn = wal_next_lsn(st->w);
        char *why = NULL;
        ok = wal_append(st->w, payload, len, &why);
        bool not_written = !ok && wal_next_lsn(st->w) == lsn;
        /* A sync of earlier records that failed (before a new segment) stops writes
           whatever became of this one. */
        if (!ok && wal_sync_failed(st->w)) set_failed(st);
        if (ok) {
            if (__atomic_exchange_n(&st->rolled_back, false, __ATOMIC_ACQ_REL))
                fprintf(stderr, "inputlayer: the write-ahead log is written again; writes go on\n");
            store_ckpt_after_commit(st, WAL_RECORD_HEADER + len);
        } else if (not_written && undoable) {
            /* Nothing of the record is in the log: the caller takes the statement back,
               and the next write tries the log again. */
            int e = wal_failure_errno(st->w);
            bool full = (e == ENOSPC || e == EDQUOT) && !store_failed(st);
            /* Said once, not at every write refused while the disk stays full. */
            if (!__atomic_exchange_n(&st->rolled_back, true, __ATOMIC_ACQ_REL))
                fprintf(stderr,
                        "inputlayer: error: %s; the statement was rolled back; writes are "
                        "refused until the log can be written again (each write tries it)\n",
                        why ? why : "writing the log failed");
            if (err)
                *err = il_format("%s: %s; nothing of it was applied. Writes are refused until "
                                 "the log can be written again; reads go on",
                                 full ? "Storage full" : "Storage error",
                                 why ? why : "writing the log failed");
            if (written) *written = false;
        } else {
            fprintf(stderr,
                    "inputlayer: error: %s; the statement's effects are in memory but perhaps "
                    "not on disk: writes are refused until a checkpoint rewrites the state "
                    "(tried at the next write) or the server restarts\n",
                    why ? why : "writing the log failed");
            if (err)
                *err = il_format("Storage error: %s; the statement's effects may not survive a "
                                 "restart",
                                 why ? why : "write failed");
            set_failed(st);
        }
        free(why);
    }
    return ok;
}

bool store_repair(store *st, char **err) {
    if (err) *err = NULL;
    if (!store_failed(st)) return true;
    /* The records written since the last good sync are set apart in segments of their
       own, and a checkpoint of the state in memory, synced, stands in for them. */
    char *why = NULL;
    bool ok = wal_set_aside_segment(st->w, &why) && store_ckpt_rewrite(st, &why);
    if (ok) {
        wal_covered(st->w, wal_next_lsn(st->w) - 1);
        __atomic_store_n(&st->failed, false, __ATOMIC_RELEASE);
        fprintf(stderr,
                "inputlayer: the state in memory was rewritten into a checkpoint at log "
                "position %" PRIu64 "; writes are accepted again\n",
                wal_next_lsn(st->w) - 1);
    } else if (err) {
        *err = il_format("Storage error: the write-ahead log failed earlier and rewriting the "
                         "state into a checkpoint failed too (%s); writes are refused until it "
                         "works (tried at each write) or the server restarts; reads go on",
                         why ? why : "unknown error");
    }
    free(why);
    return ok;
}

const char *store_problem(store *st) {
    if (!st) return NULL;
    if (store_failed(st))
        return "the write-ahead log failed to sync or to write: writes are refused until the "
               "state is rewritten into a checkpoint (tried at each write) or the server "
               "restarts; reads go on";
    if (wal_unwritable(st->w) || __atomic_load_n(&st->rolled_back, __ATOMIC_ACQUIRE))
        return wal_failure_errno(st->w) == ENOSPC || wal_failure_errno(st->w) == EDQUOT
                   ? "the disk is full: the write-ahead log cannot be written, writes are "
                     "refused until there is space (tried at each write); reads go on"
                   : "the write-ahead log cannot be written: writes are refused until it can "
                     "(tried at each write); reads go on";
    return NULL;
}

void store_set_durability(store *st, il_durability mode, unsigned batch_ms) {
    wal_sync_mode m = mode == IL_DURABILITY_BATCHED ? WAL_SYNC_BATCHED
                      : mode == IL_DURABILITY_ASYNC ? WAL_SYNC_ASYNC
                                                    : WAL_SYNC_IMMEDIATE;
    wal_set_mode(st->w, m, batch_ms);
}

void store_set_segment_bytes(store *st, uint64_t bytes) {
    wal_set_segment_size(st->w, bytes);
}

bool store_sync(store *st, char **err) {
    if (err) *err = NULL;
    bool ok = wal_sync(st->w, err);
    if (!ok) set_failed(st);
    return ok;
}

void store_set_group_commit(store *st, bool on) {
    wal_set_deferred(st->w, on);
}

uint64_t store_written_lsn(store *st) {
    return wal_written_lsn(st->w);
}

uint64_t store_durable_lsn(store *st) {
    return wal_durable_lsn(st->w);
}

uint64_t store_syncs(store *st) {
    return wal_syncs(st->w);
}

uint64_t store_log_bytes(const store *st) {
    return wal_bytes(st->w);
}

uint64_t store_log_records(const store *st) {
    return wal_next_lsn(st->w) - 1;
}
