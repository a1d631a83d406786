/* The data directory as the WebSocket crash test sees it between a kill and a restart:
 * the power-loss cut (the log zeroed after the length the server last reported synced,
 * through INPUTLAYER_TEST_SYNCED_LENGTH_FILE) and a look at which log segments and
 * checkpoints exist. */
#ifndef IL_CRASH_DISK_H
#define IL_CRASH_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a cut removed: whole records, and the bytes after the synced length that were not
 * zero (a torn record's start included); with pages kept, how many pages holding written
 * bytes were kept, and how many of those came after a page of written bytes that was
 * dropped (a hole before records that reached the disk). */
typedef struct disk_cut {
    long records;
    uint64_t bytes;
    long pages_kept;
    long kept_after_hole;
} disk_cut;

/* Reads the synced-length file ("wal-<16 hex>.log <16 digits>\n") and zeroes, in the log
 * directory wal_dir, every byte of that segment after the length and of every later
 * segment after its header, keeping the files' sizes (segments are preallocated).
 * Earlier segments are untouched: a segment is synced whole before the next one starts.
 * With keep, each page of a file (or its part after the synced length) is kept instead
 * with probability 1/2, drawn with rand_r(keep->rng): unsynced pages may reach the disk
 * in any order before a power loss. False with the reason in err when the file or the
 * segment it names is missing. */
typedef struct disk_keep {
    unsigned *rng;
    uint64_t page; /* bytes */
} disk_keep;
bool disk_cut_to_synced(const char *wal_dir, const char *synced_file, const disk_keep *keep,
                        disk_cut *out, char *err, size_t errlen);

/* Names in dir that start with prefix and end with suffix, sorted; *n of them. The caller
 * frees each and the array (disk_free_names). */
char **disk_list(const char *dir, const char *prefix, const char *suffix, size_t *n);
void disk_free_names(char **names, size_t n);

#endif
