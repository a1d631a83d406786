/* The durable store: opening a data directory (recovery from its newest checkpoint and
 * the log after it), committing a statement's effects as one record, durability modes.
 * The log lives in DATA/wal/ and checkpoints in DATA/ckpt/, so the data directory can
 * hold other files (the server's credentials). */
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/backup.h"
#include "store/store_dirs.h"
#include "store/store_record.h"

static bool replay(void *ctx, uint64_t lsn, const void *payload, size_t len) {
    (void)lsn;
    store *st = ctx;
    if (!store_apply(st->e, payload, len, false)) return false;
    if (!store_apply(st->e, payload, len, true)) return false;
    /* The log since the checkpoint counts toward the next one across restarts: a server
       restarted more often than it writes max_log_bytes still takes checkpoints. */
    st->since_ckpt += WAL_RECORD_HEADER + len;
    return true;
}

store *store_open(il_engine *e, const char *data_dir, uint64_t seg_size, char **err) {
    return store_open_recover(e, data_dir, seg_size, false, err);
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

store *store_open_recover(il_engine *e, const char *data_dir, uint64_t seg_size, bool salvage,
                          char **err) {
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
    st->e = e;
    st->ckpt_dirfd = -1;
    store_effects_init(&st->fx);
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
    store_effects_free(&st->fx);
    free(st);
}

bool store_failed(const store *st) {
    return st && __atomic_load_n(&st->failed, __ATOMIC_ACQUIRE);
}

static void set_failed(store *st) {
    __atomic_store_n(&st->failed, true, __ATOMIC_RELEASE);
}

bool store_commit(store *st, char **err) {
    if (err) *err = NULL;
    if (!st) return true;
    store_effects_flush(&st->fx);
    bool ok = true;
    if (st->fx.payload.len) {
        ok = wal_append(st->w, st->fx.payload.data, st->fx.payload.len, err);
        if (!ok) set_failed(st);
        if (ok) store_ckpt_after_commit(st, WAL_RECORD_HEADER + st->fx.payload.len);
    }
    store_effects_reset(&st->fx);
    return ok;
}

void store_discard(store *st) {
    if (st) store_effects_reset(&st->fx);
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
