/* Checkpoints (private to src/store): a compact image of an engine's stored state (its
 * graphs, their relations with schemas and facts, and persistent rules), compressed
 * with zstd into one file per checkpoint, named by the log position it covers.
 *
 * Taking one has two halves so that writers wait only for the first: a snapshot
 * (ckpt_snapshot_take, on the engine's thread) copies the catalog and the raw words of
 * every stored tuple; encoding, compressing and writing the file (ckpt_snapshot_write)
 * may then run on another thread while the engine goes on. Derived relations and views
 * are not in the image: they are rebuilt from the rules. */
#ifndef IL_STORE_CKPT_H
#define IL_STORE_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "kg/kg.h"

typedef struct ckpt_snapshot ckpt_snapshot;

/* A consistent copy of e's stored state, covering the log up to lsn. */
ckpt_snapshot *ckpt_snapshot_take(il_engine *e, uint64_t lsn);
uint64_t ckpt_snapshot_lsn(const ckpt_snapshot *s);
/* Encodes the image (uncompressed) into out. Safe on any thread: it reads only the
 * snapshot and the global intern tables. */
void ckpt_snapshot_encode(const ckpt_snapshot *s, il_buf *out);
void ckpt_snapshot_free(ckpt_snapshot *s);

/* Rebuilds the stored state of e, whose catalog must be fresh (just the default graph),
 * from an uncompressed image. False when it does not decode; e may then be partly
 * filled and must be reset before anything else is loaded into it. */
bool ckpt_image_load(il_engine *e, const void *image, size_t len);

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
