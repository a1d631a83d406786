/* Online backup of a store (private to src/store; docs/durability.md, "Backup"). An
 * export is a data directory that a server can start from: the checkpoint of a
 * consistent snapshot in ckpt/, the files the embedder keeps beside the store (the
 * server's identities), no log, and last the manifest inputlayer-backup.json listing
 * every file with its size and SHA-256. A directory without a manifest is not an export:
 * restore refuses it, so an export killed halfway can never be installed.
 *
 * Exporting (backup_export.c) claims the directory and takes the snapshot on the
 * engine's thread between two statements, then writes on a thread of its own holding no
 * engine lock. Restoring (backup_restore.c) checks every file against the manifest
 * before it installs anything. The manifest and the file helpers both use are in
 * backup_manifest.c. */
#ifndef IL_STORE_BACKUP_H
#define IL_STORE_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "inputlayer.h"
#include "store/store.h"

#define BACKUP_MANIFEST "inputlayer-backup.json"

/* ---- exports (backup_export.c) ---- */

typedef struct backup_exporter backup_exporter;

backup_exporter *backup_exporter_new(void);
/* Stops an export that is still running (removing its partial output) and frees. */
void backup_exporter_free(backup_exporter *x);
/* The directory exports go to (NULL: none, `.backup` is refused) and the embedder's
 * capture of its own files. */
void backup_exporter_configure(backup_exporter *x, const char *dir, il_backup_capture_fn capture,
                               void *ctx);
/* `.backup [name]`, on the engine's thread between two statements: claims DIR/<name>,
 * takes the host's snapshot (covering the log up to lsn) and the embedder's files, and
 * starts the writer. */
void backup_export_start(backup_exporter *x, const store_host *host, uint64_t lsn, const char *name,
                         store_backup_reply *out);
/* `.backup status`: the export running, or how the last one ended. */
void backup_export_status(backup_exporter *x, store_backup_reply *out);

/* ---- the manifest and files (backup_manifest.c) ---- */

typedef struct backup_entry {
    char *path;      /* relative to the export: "ckpt/ckpt-<lsn>.ckpt" or a plain name */
    uint64_t size;   /* bytes */
    char sha256[65]; /* lowercase hex */
} backup_entry;

typedef struct backup_manifest {
    uint64_t revision;    /* the log position the checkpoint covers */
    uint64_t held_us;     /* how long the capture held up commits */
    char *engine_version; /* of the engine that wrote it */
    char *created_at;     /* UTC, ISO 8601 */
    IL_VEC(backup_entry) files;
} backup_manifest;

void backup_manifest_free(backup_manifest *m);
/* Writes DIR/inputlayer-backup.json through a temporary file, fsync, rename and a sync
 * of the directory (dirfd). False and *err (malloc'ed) on failure; nothing is left. */
bool backup_manifest_write(int dirfd, const char *dir, const backup_manifest *m, char **err);
/* Reads and checks the manifest of the export in dir (format, version, safe relative
 * paths, one checkpoint named after the revision). False and *err (malloc'ed). */
bool backup_manifest_read(const char *dir, backup_manifest *m, char **err);

/* Whether name may be a file or export name: 1-200 bytes of letters, digits, '-', '_',
 * '.', not starting with '.'. */
bool backup_name_ok(const char *name);
/* Size and SHA-256 (hex) of the file at path under dirfd, read back from the file
 * system. Stops early, returning false with *why "stopped", once *stop is set (stop
 * may be NULL). False and *why (static text or strerror) when it cannot be read. */
bool backup_hash_file(int dirfd, const char *path, uint64_t *size, char sha256[65], const int *stop,
                      const char **why);
/* An error text "<what> <dir>/<name>: <strerror(errno)>" (malloc'ed). */
char *backup_errno_text(const char *what, const char *dir, const char *name);
/* fsync of a directory by path; false with errno set. */
bool backup_sync_dir(const char *path);
/* mkdir -p, owner-only (exports and data directories hold the whole state and the
 * credentials); *created (may be NULL): whether the last component was made here. False
 * with errno set. */
bool backup_make_dirs(const char *path, bool *created);

#endif
