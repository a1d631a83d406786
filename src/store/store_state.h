/* The store's own state (private to src/store): the log, checkpoints and backups of one
 * data directory, and the engine it keeps durable (store_host). */
#ifndef IL_STORE_STORE_STATE_H
#define IL_STORE_STORE_STATE_H

#include <pthread.h>

#include "base/buf.h"
#include "store/store.h"
#include "store/wal.h"

struct store {
    store_host host;
    wal *w;
    bool failed;      /* memory may be ahead of the log: writes wait for store_repair */
    bool rolled_back; /* the last record could not be written and its statement was undone */
    /* checkpoints (store_ckpt.c) */
    char *ckpt_dir;
    int ckpt_dirfd;
    uint64_t ckpt_lsn;      /* the log position of the newest durable checkpoint (0: none) */
    uint64_t max_log_bytes; /* log written since the last checkpoint that starts one (0: never) */
    uint64_t since_ckpt;    /* log bytes written since the last checkpoint's snapshot */
    double last_pause_ms;   /* how long the last snapshot held the engine */
    struct ckpt_job *job;   /* the checkpoint being written in the background, or NULL */
    /* damaged checkpoints found at open, set aside once recovery is known to proceed */
    struct store_bad_ckpt {
        uint64_t lsn;
        const char *why;
    } * bad_ckpts;
    size_t nbad_ckpts;
    /* online backup (store_backup.c); NULL until a backup directory is set */
    struct backup_exporter *backup;
};

/* Checkpoints (store_ckpt.c). Opens DATA/ckpt (creating it 0700). */
bool store_ckpt_open(store *st, const char *data_dir, char **err);
/* A wal_start_fn: loads the newest valid checkpoint into the engine, setting damaged
 * ones (store_ckpt_set_aside_bad); returns its log position (0: none). */
uint64_t store_ckpt_recover(void *ctx);
/* After the log's recovery: renames the damaged checkpoints found by store_ckpt_recover
 * to *.bad, with a warning each. Not called when the open is refused (nothing changes). */
void store_ckpt_set_aside_bad(store *st);
/* Appends to msg the damaged checkpoints found, for the message of a refused open. */
void store_ckpt_describe_bad(const store *st, il_buf *msg);
/* Writes a checkpoint of the state in memory now, even after the log failed, and waits
 * until it is durable (store_repair). */
bool store_ckpt_rewrite(store *st, char **err);
/* After a record of `bytes` was appended: finishes a completed background checkpoint,
 * and starts one when the log has grown past the limit. */
void store_ckpt_after_commit(store *st, uint64_t bytes);
/* Waits for a checkpoint in flight and closes DATA/ckpt. */
void store_ckpt_close(store *st);

#endif
