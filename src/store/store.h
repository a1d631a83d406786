/* The durable store of an engine opened on a data directory: the write-ahead log
 * (wal.h) of every committed statement's record, checkpoints, and recovery from them.
 *
 * The store deals in records and bytes only: what a record or a checkpoint image means
 * is the engine's business (src/kg/record.h). The engine hands store_commit the encoded
 * record of a statement, which is written and synced before the statement's result goes
 * back; at recovery the store hands the engine each record to apply and the newest
 * checkpoint image to load (store_host), and for a checkpoint or a backup it asks the
 * engine for a snapshot of its stored state (ckpt.h). */
#ifndef IL_STORE_STORE_H
#define IL_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inputlayer.h"

typedef struct store store;
typedef struct ckpt_snapshot ckpt_snapshot;

/* What the store needs of the engine it keeps durable; every call is on the engine's
 * thread. */
typedef struct store_host {
    void *ctx;
    /* Applies one record's payload (doit) or only checks that it decodes completely (doit
       false), so that a record is applied whole or, when malformed, not at all. */
    bool (*apply)(void *ctx, const void *payload, size_t len, bool doit);
    /* Loads an uncompressed checkpoint image into the fresh engine; false when it does not
       decode (the engine may then be partly filled: reset follows). */
    bool (*load_image)(void *ctx, const void *image, size_t len);
    /* Back to a fresh engine (just the default graph) after an image failed halfway. */
    void (*reset)(void *ctx);
    /* A consistent copy of the stored state, covering the log up to lsn (ckpt.h). */
    ckpt_snapshot *(*snapshot)(void *ctx, uint64_t lsn);
} store_host;

/* Opens data_dir (creating it 0700 when missing) and replays its newest checkpoint and
 * its log into the host, whose state must be fresh (just the default graph). NULL and *err
 * (malloc'ed) when the directory cannot be used, or when recovery cannot reach the last
 * acknowledged commit (damaged checkpoints the log does not make up for, damaged synced records):
 * nothing on disk is changed then. A torn tail (past the last sync) is cut with a warning. seg_size
 * 0 means the default segment size. */
store *store_open(const store_host *host, const char *data_dir, uint64_t seg_size, char **err);
/* store_open; with salvage, damage that store_open refuses is cut instead: recovery
 * starts from what is readable and moves the damaged files aside (docs/durability.md). */
store *store_open_recover(const store_host *host, const char *data_dir, uint64_t seg_size,
                          bool salvage, char **err);
void store_close(store *st);

/* True after a sync failed, or a record failed that could not be taken back: what is in
 * memory may be ahead of the disk, so the engine refuses writes until store_repair. */
bool store_failed(const store *st);
/* Rewrites the state in memory into a checkpoint after such a failure (the records since
 * the last good sync set apart in segments it covers whole), so that writes can go on.
 * True when nothing failed or it worked; false and *err (malloc'ed) otherwise. */
bool store_repair(store *st, char **err);
/* Why writes are refused or failing now (a static text), or NULL; safe from any thread. */
const char *store_problem(store *st);

/* Writes one statement's record (payload, len; nothing when len is 0) and syncs as the
 * durability mode says. False and *err (malloc'ed, the whole message for the statement's
 * result) when the record could not be made durable. When nothing of it reached the log
 * and the caller can undo the statement (undoable), *written is false: the caller must
 * undo it, and the store stays usable. Otherwise the memory may be ahead of the disk and
 * store_failed is true until store_repair. */
bool store_commit(store *st, const void *payload, size_t len, bool undoable, bool *written,
                  char **err);

void store_set_durability(store *st, il_durability mode, unsigned batch_ms);
/* Syncs everything written; safe from any thread while statements commit (wal_sync). */
bool store_sync(store *st, char **err);
/* Group commit (il_engine_set_group_commit): in immediate mode store_commit writes the
 * record and leaves the sync to store_sync. */
void store_set_group_commit(store *st, bool on);
/* The last record written, and the last one on disk; safe from any thread. */
uint64_t store_written_lsn(store *st);
uint64_t store_durable_lsn(store *st);
/* fdatasyncs of log records since the store opened; safe from any thread. */
uint64_t store_syncs(store *st);
/* Writes a checkpoint of the stored state now and waits until it is durable, then
 * deletes the log and checkpoints the one before it made unnecessary (`.compact`).
 * Nothing is written when nothing changed since the last one. False and *err
 * (malloc'ed) when it failed; the log still holds everything then. */
bool store_checkpoint(store *st, char **err);
/* The log size after which a checkpoint starts in the background (0: never). */
void store_set_checkpoint_bytes(store *st, uint64_t bytes);
/* The size of log segments from now on (0: the default, 16 MiB). */
void store_set_segment_bytes(store *st, uint64_t bytes);
/* The log position the newest durable checkpoint covers (0: none); with wait, after the
 * one in flight has finished. */
uint64_t store_checkpoint_lsn(store *st, bool wait);
/* How long the last checkpoint's snapshot held up the engine, in milliseconds. */
double store_checkpoint_pause_ms(const store *st);
/* Online backup (backup.h): where `.backup` writes exports (NULL: refused) and the
 * embedder's capture of its own files. */
void store_set_backup(store *st, const char *dir, il_backup_capture_fn capture, void *ctx);
/* The reply to `.backup` or `.backup status`: message lines, or (ok false) one error. */
typedef struct store_backup_reply {
    bool ok;
    char *lines[2]; /* malloc'ed; lines[1] may be NULL */
} store_backup_reply;
/* `.backup [name]` (name NULL: the default), between two statements. */
void store_backup_start(store *st, const char *name, store_backup_reply *out);
void store_backup_status(store *st, store_backup_reply *out);
void store_backup_reply_free(store_backup_reply *r);

/* Bytes and records in the log. */
uint64_t store_log_bytes(const store *st);
uint64_t store_log_records(const store *st);

#endif
