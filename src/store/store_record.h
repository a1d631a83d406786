/* The payload of a log record: the effects of one statement, as a sequence of
 * operations (private to src/store). Operations name their graph once (OP_GRAPH) and
 * apply to it until the next OP_GRAPH; tuple changes come in runs of one relation and
 * one direction, in the order the statement made them, so replaying them in order
 * reproduces the statement exactly (a tuple deleted then inserted again stays).
 *
 *   OP_GRAPH name
 *   OP_INSERT | OP_DELETE  rel arity count value*(arity*count)
 *   OP_REL_CLEAR rel          OP_REL_DROP rel (facts and schema)
 *   OP_SCHEMA rel ncols (name kind dim has_name [type_name])*
 *   OP_RULE_ADD text          (a statement that parses to the clause)
 *   OP_RULE_DROP name         OP_RULE_REMOVE name index(1-based)    OP_RULE_CLEAR name
 *   OP_KG_CREATE name         OP_KG_DROP name
 *   OP_INDEX_CREATE name rel column col metric m ef_construction ef_search
 *   OP_INDEX_DROP name
 *
 * Names and texts are length-prefixed strings, numbers varints (store_codec.h). */
#ifndef IL_STORE_STORE_RECORD_H
#define IL_STORE_STORE_RECORD_H

#include <pthread.h>

#include "base/buf.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store/wal.h"

enum store_op {
    OP_GRAPH = 1,
    OP_INSERT,
    OP_DELETE,
    OP_REL_CLEAR,
    OP_REL_DROP,
    OP_SCHEMA,
    OP_RULE_ADD,
    OP_RULE_DROP,
    OP_RULE_REMOVE,
    OP_RULE_CLEAR,
    OP_KG_CREATE,
    OP_KG_DROP,
    OP_INDEX_CREATE,
    OP_INDEX_DROP,
};

/* The statement's effects being collected (store_effects.c). */
typedef struct store_effects {
    il_buf payload;
    char *graph;   /* the graph the payload's operations apply to now, or NULL */
    char *run_rel; /* the open run of tuple changes, or NULL */
    int run_sign;  /* +1 inserts, -1 deletes */
    uint32_t run_arity;
    uint64_t run_count;
    il_buf run_vals;
} store_effects;

struct store {
    il_engine *e;
    wal *w;
    store_effects fx;
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

void store_effects_init(store_effects *fx);
void store_effects_free(store_effects *fx);
/* Closes the open run into the payload. */
void store_effects_flush(store_effects *fx);
/* Empties the payload for the next statement. */
void store_effects_reset(store_effects *fx);

/* A schema as OP_SCHEMA carries it (also in checkpoint images): relation, columns. */
void store_put_schema(il_buf *b, const iql_schema *sc);
/* Decodes one into the arena; false when malformed. */
bool store_get_schema(codec_reader *r, il_arena *ar, iql_schema *sc);

/* A vector index's definition as OP_INDEX_CREATE carries it (also in checkpoint images). */
void store_put_index(il_buf *b, const kg_index_def *d);
/* Decodes one (malloc'ed strings: kg_index_def_free); false when malformed. */
bool store_get_index(codec_reader *r, kg_index_def *d);

/* Applies one record's payload to the engine's catalog (store_apply.c). With doit
 * false it only checks that the payload decodes completely, so a record is either
 * applied whole or, when malformed, not at all. */
bool store_apply(il_engine *e, const void *payload, size_t len, bool doit);

#endif
