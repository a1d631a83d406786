/* Log records and checkpoint images of the catalog (private to src/kg): what the store
 * (src/store) keeps as bytes. A record holds the effects of one statement or
 * transaction, as a sequence of operations. Operations name their graph once (OP_GRAPH)
 * and apply to it until the next OP_GRAPH; tuple changes come in runs of one relation
 * and one direction, in the order the statement made them, so replaying them in order
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
 * Names and texts are length-prefixed strings, numbers varints (store/store_codec.h).
 *
 * A record is encoded at the commit from the commit's delta (kg.h, kg_delta): its tuples,
 * and the operations the engine appended to it as it made them (kg_rec_*; a no-op when
 * the engine has no store, i.e. in memory and during recovery); kg_rec_commit hands the
 * record to the store. Only effects on stored state are logged: facts of stored
 * relations, schemas, persistent rules, vector indexes and knowledge graphs; derived
 * relations and views are recomputed from them, session state is not durable. */
#ifndef IL_KG_RECORD_H
#define IL_KG_RECORD_H

#include "kg/kg.h"
#include "store/store.h"
#include "store/store_codec.h"

enum kg_rec_op {
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

/* ---- operations appended to the commit's delta, and the record (record.c) ---- */

void kg_rec_rel_clear(const kg_graph *g, const char *rel);
void kg_rec_rel_drop(const kg_graph *g, const char *rel);
void kg_rec_schema(const kg_graph *g, const iql_schema *sc);
/* A clause added to a persistent rule: the text of the statement that added it (it
 * parses back to the same clause), or, when text is NULL, the clause printed. */
void kg_rec_rule_add(const kg_graph *g, const char *text, size_t len, const iql_rule *clause);
void kg_rec_rule_drop(const kg_graph *g, const char *name);
void kg_rec_rule_remove(const kg_graph *g, const char *name, uint32_t index);
void kg_rec_rule_clear(const kg_graph *g, const char *name);
void kg_rec_index_create(const kg_graph *g, const kg_index_def *def);
void kg_rec_index_drop(const kg_graph *g, const char *name);
void kg_rec_kg_create(il_engine *e, const char *name);
void kg_rec_kg_drop(il_engine *e, const char *name);

/* Encodes the commit's delta into one record and hands it to the store (store_commit:
 * the arguments and the result are its). */
bool kg_rec_commit(il_engine *e, bool undoable, bool *written, char **err);
void kg_rec_free(il_engine *e);

/* A schema as OP_SCHEMA carries it (also in checkpoint images): relation, columns. */
void kg_rec_put_schema(il_buf *b, const iql_schema *sc);
/* Decodes one into the arena; false when malformed. */
bool kg_rec_get_schema(codec_reader *r, il_arena *ar, iql_schema *sc);
/* A vector index's definition as OP_INDEX_CREATE carries it (also in checkpoint images). */
void kg_rec_put_index(il_buf *b, const kg_index_def *d);
/* Decodes one (malloc'ed strings: kg_index_def_free); false when malformed. */
bool kg_rec_get_index(codec_reader *r, kg_index_def *d);

/* ---- recovery (recover.c) ---- */

/* Opens the store of data_dir for e, whose catalog must be fresh (just the default graph),
 * recovering the stored state from it (store_open_recover). */
store *kg_store_open(il_engine *e, const char *data_dir, uint64_t seg_size, bool salvage,
                     char **err);
/* Applies one record's payload to the catalog; with doit false it only checks that it
 * decodes completely (store_host.apply). */
bool kg_rec_apply(il_engine *e, const void *payload, size_t len, bool doit);

/* ---- checkpoint images (image.c) ---- */

/* A snapshot of the stored state for a checkpoint covering the log up to lsn. */
ckpt_snapshot *kg_image_snapshot(il_engine *e, uint64_t lsn);
/* Rebuilds the stored state of e, whose catalog must be fresh, from an uncompressed
 * image. False when it does not decode; e may then be partly filled (kg_image_reset). */
bool kg_image_load(il_engine *e, const void *image, size_t len);
/* Back to a fresh catalog (just the default graph). */
void kg_image_reset(il_engine *e);

#endif
