/* The store's side of online backup (backup.h): the exporter it owns, the log position
 * an export covers, and the refusal after a failed write (what is in memory may then be
 * ahead of the disk, and an export of it would hold what a restart of this directory
 * cannot bring back). */
#include <stdlib.h>
#include <string.h>

#include "store/backup.h"
#include "store/store_state.h"

void store_set_backup(store *st, const char *dir, il_backup_capture_fn capture, void *ctx) {
    if (!st->backup) st->backup = backup_exporter_new();
    backup_exporter_configure(st->backup, dir, capture, ctx);
}

void store_backup_start(store *st, const char *name, store_backup_reply *out) {
    if (st && st->backup && st->failed) {
        memset(out, 0, sizeof *out);
        out->lines[0] = strdup("the write-ahead log failed earlier; no export until a write "
                               "has rewritten the state into a checkpoint or the engine is "
                               "reopened");
        return;
    }
    backup_export_start(st ? st->backup : NULL, st ? &st->host : NULL,
                        st ? wal_next_lsn(st->w) - 1 : 0, name, out);
}

void store_backup_status(store *st, store_backup_reply *out) {
    backup_export_status(st ? st->backup : NULL, out);
}

void store_backup_reply_free(store_backup_reply *r) {
    free(r->lines[0]);
    free(r->lines[1]);
    memset(r, 0, sizeof *r);
}
