/* Checkpoints: a compact image of an engine's stored state, compressed with zstd into
 * one file per checkpoint, named by the log position it covers. What the image holds is
 * the engine's business (src/kg/image.c); the store writes, reads and keeps the files.
 *
 * Taking one has two halves so that writers wait only for the first: a snapshot, made by
 * the engine on its thread (store_host.snapshot), holds the image's bytes with the raw
 * words of stored tuples in between them; encoding the words, compressing and writing
 * the file may then run on another thread while the engine goes on. */
#ifndef IL_STORE_CKPT_H
#define IL_STORE_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "value/value.h"

typedef struct ckpt_snapshot ckpt_snapshot;

/* An empty snapshot covering the log up to lsn, for the engine to fill. */
ckpt_snapshot *ckpt_snapshot_new(uint64_t lsn);
/* Where the image's next bytes go. */
il_buf *ckpt_snapshot_bytes(ckpt_snapshot *s);
/* Appends n raw values (malloc'ed, taken over), encoded as values (store_codec.h) when
 * the image is encoded; bytes added afterwards follow them. The words must stay
 * meaningful without the engine: a stored value's string, long integer or vector is
 * interned for good (base/intern.h). */
void ckpt_snapshot_add_values(ckpt_snapshot *s, val_t *vals, size_t n);
uint64_t ckpt_snapshot_lsn(const ckpt_snapshot *s);
/* Encodes the image (uncompressed) into out. Safe on any thread: it reads only the
 * snapshot and the global intern tables. */
void ckpt_snapshot_encode(const ckpt_snapshot *s, il_buf *out);
void ckpt_snapshot_free(ckpt_snapshot *s);

/* ---- files (ckpt_file.c): DIR/ckpt-<lsn, 16 hex>.ckpt ----
 *
 *   magic "ILCKPT\0\1" | version u32 | lsn u64 | image length u64 | body length u64 |
 *   crc32c of the body u32 | crc32c of the preceding 40 header bytes u32 | body (zstd)
 */

/* Compresses the image and writes it atomically: a temporary file, fsync, rename,
 * fsync of the directory. False and *err (malloc'ed) on failure; no file is left. */
bool ckpt_file_write(int dirfd, const char *dir, uint64_t lsn, const void *image, size_t len,
                     char **err);
/* Reads and checks one checkpoint file; the decompressed image in *image (malloc'ed).
 * False and *why (static text) when it is unreadable, damaged or of another version. */
bool ckpt_file_read(int dirfd, uint64_t lsn, unsigned char **image, size_t *len, const char **why);
/* The lsns of the checkpoint files in the directory, ascending (malloc'ed, *n of them).
 * Leftover temporary files of an interrupted write are deleted. */
uint64_t *ckpt_file_list(int dirfd, size_t *n);
/* The file name of a checkpoint. */
void ckpt_file_name(char *out, size_t cap, uint64_t lsn);

#endif
