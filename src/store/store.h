/* The durable store of an engine opened on a data directory: the write-ahead log
 * (wal.h) of every committed statement's effects, and recovery from it.
 *
 * The engine notes each effect as it makes it (store_note_*; every note is a no-op
 * when the store is NULL, i.e. in memory-only engines and during recovery), then
 * store_commit writes one record for the whole statement and syncs it before the
 * statement's result goes back. Only effects on stored state are noted: facts of
 * stored relations, schemas, persistent rules and knowledge graphs; derived
 * relations and views are recomputed from them, session state is not durable. */
#ifndef IL_STORE_STORE_H
#define IL_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kg/kg.h"

typedef struct store store;

/* Opens data_dir (creating it 0700 when missing) and replays its log into e, whose
 * catalog must be fresh (just the default graph). NULL and *err (malloc'ed) when the
 * directory cannot be used, or when recovery cannot reach the last acknowledged commit
 * (damaged checkpoints the log does not make up for, damaged synced records): nothing
 * on disk is changed then. A torn tail (past the last sync) is cut with a warning.
 * seg_size 0 means the default segment size. */
store *store_open(il_engine *e, const char *data_dir, uint64_t seg_size, char **err);
/* store_open; with salvage, damage that store_open refuses is cut instead: recovery
 * starts from what is readable and moves the damaged files aside (docs/durability.md). */
store *store_open_recover(il_engine *e, const char *data_dir, uint64_t seg_size, bool salvage,
                          char **err);
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

void store_note_tuple(store *st, const kg_graph *g, const char *rel, const val_t *t, uint32_t arity,
                      int sign);
void store_note_rel_clear(store *st, const kg_graph *g, const char *rel);
void store_note_rel_drop(store *st, const kg_graph *g, const char *rel);
void store_note_schema(store *st, const kg_graph *g, const iql_schema *sc);
/* A clause added to a persistent rule: the text of the statement that added it (it
 * parses back to the same clause), or, when text is NULL, the clause printed. */
void store_note_rule_add(store *st, const kg_graph *g, const char *text, size_t len,
                         const iql_rule *clause);
void store_note_rule_drop(store *st, const kg_graph *g, const char *name);
void store_note_rule_remove(store *st, const kg_graph *g, const char *name, uint32_t index);
void store_note_rule_clear(store *st, const kg_graph *g, const char *name);
void store_note_index_create(store *st, const kg_graph *g, const kg_index_def *def);
void store_note_index_drop(store *st, const kg_graph *g, const char *name);
void store_note_kg_create(store *st, const char *name);
void store_note_kg_drop(store *st, const char *name);

/* Writes the noted effects of the statement as one record (nothing when it changed
 * nothing) and syncs as the durability mode says. False and *err (malloc'ed, the whole
 * message for the statement's result) when the record could not be made durable. When
 * nothing of it reached the log and the caller can undo the statement (undoable), *written
 * is false: the caller must undo it, and the store stays usable. Otherwise the memory may
 * be ahead of the disk and store_failed is true until store_repair. */
bool store_commit(store *st, bool undoable, bool *written, char **err);
/* Drops the noted effects without writing them (the statement was refused). */
void store_discard(store *st);

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
