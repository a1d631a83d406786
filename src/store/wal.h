/* The write-ahead log: an append-only sequence of records in preallocated segment
 * files (DIR/wal-<first lsn, 16 hex digits>.log).
 *
 * What it guarantees:
 *  - A record is whole or absent. Each carries its length, its log sequence number and
 *    a CRC32C over both and the payload; recovery accepts a record only when all three
 *    check out and the numbers run on without a gap.
 *  - In WAL_SYNC_IMMEDIATE mode wal_append returns only after fdatasync, so a record
 *    that was appended survives a crash of the process or of the machine.
 *    WAL_SYNC_BATCHED syncs at most every batch_ms (a crash loses at most that window);
 *    WAL_SYNC_ASYNC leaves it to the kernel (a process crash loses nothing, a power
 *    loss may lose the tail). No mode ever exposes a partial record.
 *  - Each record carries the last lsn a completed sync covered when it was written. At
 *    recovery, a torn or corrupt record that no later record says was synced is a torn
 *    tail: the log ends there, with a warning on stderr; the bytes after it are kept in
 *    a side file and cleared so that later appends cannot run on into stale records,
 *    and later segments are set aside (renamed *.cut). Damage to records a sync had
 *    covered (acknowledged ones) refuses to open, changing nothing, unless salvage was
 *    asked for: then it is cut the same way.
 *  - One process at a time: the directory is locked (flock) while the log is open. */
#ifndef IL_STORE_WAL_H
#define IL_STORE_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wal wal;

typedef enum wal_sync_mode {
    WAL_SYNC_IMMEDIATE,
    WAL_SYNC_BATCHED,
    WAL_SYNC_ASYNC,
} wal_sync_mode;

enum {
    WAL_SEGMENT_HEADER = 16, /* magic (8) + first lsn (8) */
    WAL_RECORD_HEADER = 24,  /* length (4) + crc32c (4) + lsn (8) + synced lsn (8) */
};

/* Called for every valid record, in order. Returning false means the payload is not a
 * record this program can apply: the log is cut before it, as if it were corrupt. */
typedef bool (*wal_record_fn)(void *ctx, uint64_t lsn, const void *payload, size_t len);

/* Opens (creating when needed) the log in dir, replays it through fn, and leaves it
 * ready to append after the last valid record. seg_size is the preallocated size of a
 * segment (0: the default, 16 MiB). NULL and *err (malloc'ed) when the directory
 * cannot be used at all. */
wal *wal_open(const char *dir, uint64_t seg_size, wal_record_fn fn, void *ctx, char **err);
/* Called once the directory is locked, before the replay: the lsn up to which a
 * checkpoint already holds the effects (0: none). Those records are not replayed. */
typedef uint64_t (*wal_start_fn)(void *ctx);
/* What recovery may do, and why it refused. */
typedef struct wal_recovery {
    bool salvage; /* in: cut at damaged synced records instead of refusing */
    bool refused; /* out: the open failed because recovery would lose synced records */
} wal_recovery;
/* wal_open, replaying only the records after the position `start` returns. When the log
 * ends before that position, appends continue right after it (in a new segment). When
 * the log starts after it, or synced records are damaged, the open fails (rec->refused)
 * unless rec->salvage; rec NULL: refuse. wal_open refuses too. */
wal *wal_open_after(const char *dir, uint64_t seg_size, wal_recovery *rec, wal_start_fn start,
                    wal_record_fn fn, void *ctx, char **err);
/* Appends one record, syncing as the mode says. False and *err (malloc'ed) on an I/O
 * error: the record may or may not be in the log, and the caller must stop writing. */
bool wal_append(wal *w, const void *payload, size_t len, char **err);
/* After wal_append failed without writing its record (wal_next_lsn did not move): the
 * write failed (the disk is full, or an I/O error) and the next append first clears what
 * it left and goes on in a new segment; true until that works. wal_failure_errno says
 * why the last write failed (ENOSPC for a full disk). */
bool wal_unwritable(const wal *w);
int wal_failure_errno(const wal *w);
/* After a failed fdatasync, whose pages may be lost while the page cache looks clean:
 * wal_sync fails at once, never trying those pages again, until wal_covered. */
bool wal_sync_failed(wal *w);
/* Starts a new segment (unless the current one holds no record), so that every record
 * written so far is in segments a checkpoint taken now covers whole. */
bool wal_set_aside_segment(wal *w, char **err);
/* A durable checkpoint holds the effects of every record up to lsn: they count as synced,
 * and a failed sync before it no longer stops syncs. */
void wal_covered(wal *w, uint64_t lsn);
/* Forces everything appended so far to disk. Safe to call from any thread while records
 * are appended: a sync running meanwhile is waited for, and what it did not cover is
 * synced with one more fdatasync (so concurrent callers share syncs: group commit). */
bool wal_sync(wal *w, char **err);
/* In WAL_SYNC_IMMEDIATE mode, wal_append no longer syncs: the caller acknowledges a
 * record only once wal_durable_lsn covers it, calling wal_sync (from any thread). */
void wal_set_deferred(wal *w, bool deferred);
/* The last record wholly written, and the last one a completed sync covers. */
uint64_t wal_written_lsn(wal *w);
uint64_t wal_durable_lsn(wal *w);
/* fdatasyncs that made records durable, since the log was opened. */
uint64_t wal_syncs(wal *w);
void wal_set_mode(wal *w, wal_sync_mode mode, unsigned batch_ms);
/* The size of segments from now on (0: the default): the segment being appended to ends
 * once it holds that many bytes, and new ones are preallocated to it. */
void wal_set_segment_size(wal *w, uint64_t seg_size);
wal_sync_mode wal_mode(const wal *w);
/* The next record's sequence number (one more than the records in the log). */
uint64_t wal_next_lsn(const wal *w);
/* Bytes of records in the log (all segments, headers included). */
uint64_t wal_bytes(const wal *w);
/* Deletes the segments whose records all have an lsn <= lsn (a checkpoint holds them).
 * The segment being appended to is never deleted. */
void wal_drop_before(wal *w, uint64_t lsn);
/* Nonzero after a salvage that set aside whole records numbered up to the lsn it
 * returns: the log goes on after them (so no number is given twice) in a new segment,
 * and the caller must write a checkpoint of the recovered state at once, or the next
 * open finds the numbers in between missing. */
uint64_t wal_salvaged_to(const wal *w);
/* The first lsn of the oldest segment on disk. */
uint64_t wal_first_lsn(const wal *w);
/* Syncs and closes. */
void wal_close(wal *w);

#endif
