/* The catalog and sessions: knowledge graphs with their stored relations, schemas
 * and persistent rules; sessions with their current graph, session facts and session
 * rules. Private to the engine; the public face is include/inputlayer.h. */
#ifndef IL_KG_KG_H
#define IL_KG_KG_H

#include <pthread.h>
#include <time.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/intern.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "exec/guard.h"
#include "exec/hnsw.h"
#include "exec/rel.h"
#include "inputlayer.h"
#include "plan/params.h"
#include "iql/ast.h"
#include "views/view.h"

typedef struct kg_relation {
    char *name;
    rel_t *data;        /* NULL until the first insert fixes the arity */
    iql_schema *schema; /* declared columns (in the graph's arena), or NULL */
} kg_relation;

typedef struct kg_rule {
    char *name;
    IL_VEC(iql_rule *) clauses; /* in the rule's arena, in the order they were added */
    il_arena arena;
    /* new at its creation and at every change of its clauses (kg_rule_changed), unique in
       the process: a pin's copy of the rule is shared while it holds (pin.c) */
    uint64_t gen;
    /* pin.c: its copy in the graph's latest rules copy, valid while that copy's serial is
       copy_serial */
    struct kg_rule *copy;
    uint64_t copy_serial;
} kg_rule;

typedef struct plan_program plan_program;

/* A vector index's definition (`.index create`), as the log and checkpoints keep it. */
typedef struct kg_index_def {
    char *name, *rel, *column;
    uint32_t col; /* the column's position, from the schema when it was created */
    hnsw_metric metric;
    uint32_t m, ef_construction, ef_search;
} kg_index_def;

/* A vector index over one column of a relation's stored facts (indexes.c). The graph
 * mirrors the facts: kept in step with each change as it is made, and rebuilt from the
 * facts when it has missed one (a transaction rolled back, a relation cleared). A pinned
 * copy of a graph (pin.c) has its own entries, each a reference on the live index's HNSW
 * graph and the revision of it the pin reads (kg_indexes_pin). */
typedef struct kg_graph kg_graph;
typedef struct kg_index {
    kg_index_def def;
    kg_graph *g;
    hnsw *graph;             /* NULL until built, and after `.index rebuild` */
    const rel_t *synced;     /* the facts the graph mirrors (NULL: none yet) */
    uint64_t synced_changes; /* their rel_changes() when the graph last matched them */
    bool pinned;             /* a pinned copy's: searches read `at`, never build */
    hnsw_rev at;             /* the pinned revision of `graph` */
} kg_index;

/* A compiled query program kept for the next query of the same text, or of the same
 * shape (the text with its parameters, plan/params.h, as `$0i`, `$1s` ...) (plans.c). */
typedef struct kg_plan_entry {
    char *key;            /* the query rule's text or shape; NULL when the slot is free */
    uint64_t version;     /* the graph's version when it was built */
    size_t stored_tuples; /* stored facts it read when built (join order estimates) */
    uint64_t used;        /* last use, for eviction */
    /* NULL for a shape whose programs depend on its values: each is kept by its text */
    plan_program *prog;
    plan_params params; /* a shape's: where the values go */
    /* A shape met once: the values its program was built with (malloc'ed; NULL once
       the shape's next query with other values decided it) */
    val_t *values;
    il_intern_scope *strings; /* the query's own strings its constants may be, or NULL */
} kg_plan_entry;

enum { KG_PLAN_CACHE_SIZE = 64 };

/* One stored relation's change in a commit as maintained views get it (src/views): only
 * tuples that really changed, netted (insert then delete is nothing). */
typedef view_delta_rel kg_delta_rel;

/* One entry of a commit's delta (delta.c). */
typedef enum kg_dkind {
    KD_TUPLES,  /* a run of tuples of one relation really inserted (sign +1) or deleted (-1) */
    KD_CLEARED, /* every fact of a relation removed at once (.clear prefix, .rel drop) */
    KD_OP,      /* a change of rules, schemas, indexes or graphs: its log operation */
} kg_dkind;

typedef struct kg_dentry {
    uint8_t kind;      /* kg_dkind */
    int8_t sign;       /* KD_TUPLES */
    bool vals;         /* the tuples' values are held (from `at`) */
    bool for_views;    /* the graph had maintained views when it happened */
    bool net;          /* the change hook nets this relation tuple by tuple */
    bool resets_graph; /* KD_OP of a dropped graph: the log names the next graph afresh */
    uint32_t arity;
    uint32_t change; /* its FACTS record in e->changes, or UINT32_MAX */
    struct kg_graph *g;
    char *graph; /* the graph's name (NULL: an operation naming its own graph) */
    char *rel;   /* KD_TUPLES, KD_CLEARED */
    uint64_t count;
    size_t at; /* the first value in kg_delta.vals, or the first byte in kg_delta.ops */
} kg_dentry;

/* What one commit (a statement, or a transaction) changed in stored state, in the order
 * it happened: held once, and read at the commit by the log, the maintained views, the
 * vector indexes and the change hook; undone backwards by a rollback (delta.c). */
typedef struct kg_delta {
    IL_VEC(kg_dentry) entries;
    IL_VEC(val_t) vals; /* the tuples, arity words each */
    il_buf ops;         /* the log operations of KD_OP entries, one after the other */
} kg_delta;

struct kg_graph {
    char *name;
    il_engine *e; /* the engine it belongs to (its durable store) */
    /* its latest committed revision, pinned for readers that cannot wait for the engine
       (pin.c, kg_publish), or NULL; set where statements are serialized, read under
       e->pins_mu */
    struct kg_published *published;
    /* writes that ended on it so far, each counted before anyone is told of it
       (kg_unpublish_written): a pin of it is current while this has not moved */
    _Atomic uint64_t commits;
    bool to_publish; /* kg_publish: a session other than the writer's is on it (serialized) */
    /* its rules as of one version, copied by the first pin of that version and shared by
       the pins after it (pin.c), or NULL; serialized */
    struct kg_rules_copy *rules_copy;
    IL_VEC(kg_relation *) rels;
    IL_VEC(kg_rule *) rules; /* catalog order: by first registration */
    il_strmap rel_names;     /* name -> kg_relation *, of every entry of rels */
    il_strmap rule_names;    /* name -> kg_rule *, of every entry of rules */
    il_arena arena;          /* schemas */
    uint64_t version;        /* bumped by every change to rules or to which relations hold facts */
    /* this graph's number in its engine, never reused (a pin's copy has its graph's) */
    uint64_t serial;
    kg_plan_entry plans[KG_PLAN_CACHE_SIZE];
    uint64_t plan_clock; /* ticks of plan cache use */
    /* Maintained views (src/views) over this graph; the commit's changes they have not
       seen yet (view_pending: tuples changed while they were open), and the netted
       delta handed to them at the commit (built from the engine's delta). delta.v[0,
       delta_used) are the running commit's relations, the rest empty and kept, most
       recently used first, for the next commits to fill (view_catalog.c); between
       commits delta_used is 0 and every entry is empty. */
    IL_VEC(view_t *) views;
    uint64_t view_pending;
    IL_VEC(kg_delta_rel) delta;
    uint32_t delta_used;
    /* The persistent rules read from maintained views (src/views/read_policy.h); NULL
       until a rule is first maintained. */
    struct read_policy *read_policy;
    IL_VEC(kg_index *) indexes; /* vector indexes, in creation order */
    /* A pinned copy (pin.c) of a graph: its relations are snapshots and its rules copies;
       what its maintained rules held (name -> snapshot) stands in for the read policy. */
    struct kg_pin *pin;
};

struct store;

/* One change of the running statement, for the change hook (changes.c). */
typedef struct kg_change {
    il_change_kind kind;
    char *graph;
    char *name;            /* NULL for GRAPH */
    const char *operation; /* static; for FACTS decided when the statement ends */
    uint64_t added, removed;
    /* FACTS of a relation the statement both deletes from and inserts into: the tuples
       added and removed so far, netted; NULL otherwise (the counters suffice) */
    rel_t *plus, *minus;
} kg_change;

struct il_engine {
    IL_VEC(kg_graph *) graphs;
    struct store *store;           /* the data directory's log (src/store), NULL in memory */
    struct kg_record *rec;         /* the log record being collected (record.c), or NULL */
    IL_VEC(il_session *) sessions; /* open sessions, moved off a graph that is dropped */
    uint64_t queries;
    time_t started;
    il_change_fn change_fn; /* il_engine_set_change_hook; NULL: changes are not recorded */
    void *change_ctx;
    IL_VEC(kg_change) changes; /* of the statement (or transaction) running now */
    kg_delta delta;            /* of the statement (or transaction) running now */
    struct kg_txn *txn;        /* the open transaction (txn.c), or NULL */
    uint64_t view_budget_ns;   /* il_engine_set_view_budget: 0 = unbounded */
    bool views_unmaintained;   /* il_engine_set_maintained_views(e, false) */
    uint32_t eval_threads;     /* il_engine_set_eval_threads (>= 1) */
    /* the families of standing queries (views/family.h, subscribe.c) */
    struct view_families *families;
    /* Pinned reads (pin.c): the numbers of the live pins, ascending, under pins_mu, and
       the bound on what old versions hold that their guards answer to. */
    pthread_mutex_t pins_mu;
    IL_VEC(uint64_t) pins;
    uint64_t pin_next;
    exec_snap_watch snap_watch;
    struct kg_pin_later *pins_later; /* unpins' work left for kg_pins_collect, under pins_mu */
    _Atomic bool pins_later_any;
    uint64_t graph_serials; /* graphs created so far (kg_graph.serial) */
    /* The graphs' names as of the last statement that created or dropped one, for pinned
       listings (`.kg list`, `.status`): replaced under pins_mu, read by pins under it
       (pin.c); graphs_moved: e->graphs changed since it was made (serialized). */
    struct kg_names *listed;
    bool graphs_moved;
    _Atomic uint64_t last_pin_ns; /* when a pin last began or ended (exec_clock_ns) */
};

/* Session facts of one relation: distinct tuples in insertion order. */
typedef struct sess_facts {
    char *rel;
    uint32_t arity;
    IL_VEC(val_t) vals; /* sess_fact_stride values per tuple */
    rel_t *set;         /* the same tuples, for deduplication */
} sess_facts;

/* Words per tuple in sess_facts.vals: a fact of no columns keeps one zero word, so that
 * it is counted and walked like any other. */
static inline uint32_t sess_fact_stride(const sess_facts *f) {
    return f->arity ? f->arity : 1;
}

struct il_session {
    il_engine *e;
    const char *text; /* the statement running now (for the log), or NULL */
    size_t text_len;
    kg_graph *kg;
    IL_VEC(sess_facts *) facts;
    IL_VEC(iql_rule *) rules; /* in rules_arena, insertion order */
    il_arena rules_arena;
    IL_VEC(iql_schema *) schemas; /* session schemas, in rules_arena */
    il_limits limits;             /* guards of the statements it runs next; zero: none */
    exec_guard *guard;            /* the running statement's (guards.c), or NULL */
    /* the running query's own strings (base/intern.h), entered while it evaluates, or NULL */
    il_intern_scope *strings;
    /* While pinned (il_session_pin): the graph the session is on, kg being its pinned
       copy; a drop of that graph moves it to `default` and asks for the reset the move
       makes, done at the unpin (the pinned reader still uses the session's state).
       Atomic: that drop writes it (under pins_mu) while the pinned read runs. */
    kg_graph *_Atomic pinned_live;
    bool reset_at_unpin;
    bool reset_pending;   /* that reset, left by the unpin to kg_pins_collect (pins_mu) */
    uint64_t pin_seq;     /* the pin's number (engine pins) while pinned */
    uint64_t pin_commits; /* its graph's commits as of the revision pinned */
    bool publish;         /* its writes publish the revision before them (il_session_set_publish) */
    uint64_t eval_ns;     /* the running statement's time in its programs' evaluation so far */
    uint64_t prove_ns;    /* and in proving rows (`.why`, `.why_not`) */
};

/* A query's evaluation runs inside its scope of strings, when it has one (engine.c). */
static inline il_intern_scope *kg_strings_enter(il_session *s) {
    return s->strings ? il_intern_scope_enter(s->strings) : NULL;
}
static inline void kg_strings_leave(il_session *s, il_intern_scope *previous) {
    if (s->strings) il_intern_scope_leave(previous);
}

struct il_result {
    il_result_kind kind;
    il_stmt_class cls;
    IL_VEC(char *) lines;
    IL_VEC(char *) cols;
    IL_VEC(val_t) cells; /* row-major, `width` values per row */
    size_t width;
    size_t nrows;
    char *rule_head;
    uint32_t rule_arity;
    il_stop stop; /* why the statement was stopped, or IL_STOP_NONE */
    char *title;
    uint64_t peak_bytes;      /* the peak of its counted working data (base/meter.h) */
    uint32_t threads_used;    /* the most threads one step of its evaluation ran on (0: none) */
    size_t total_rows;        /* a query's table: its rows before the cut to nrows (0: not cut) */
    char *proof_json;         /* `.why`: the rows' proof trees as a JSON array (why.c), or NULL */
    il_intern_scope *strings; /* strings only this result's query made, freed with it */
    il_timing timing;
    /* a query on a session with facts or rules of its own (provenance.c): per row an
       IL_PROV_*, and the `metadata` object as JSON; NULL on the normal path */
    uint8_t *provenance;
    char *metadata_json;
};

enum { IL_PROV_UNKNOWN, IL_PROV_PERSISTENT, IL_PROV_EPHEMERAL };

/* Warnings about a query (goal and body) or a rule (head and body) that runs but cannot
 * mean what it says (lint.c): a JSON array of strings (malloc'ed), or NULL for none. */
char *kg_lint(il_session *s, const iql_atom *head, const iql_atom *goal, const iql_literal *body,
              uint32_t nbody);
/* Adds them to r's `metadata.warnings` (creating the metadata) and frees them. */
void kg_lint_attach(il_result *r, char *warnings);

/* How the rows of a query on a session with facts or rules of its own were told apart
 * (provenance.c): every row persistent, or the ephemeral rows listed, or the persistent
 * rows listed (in word order, a counted block). */
typedef enum kg_split_kind {
    KG_SPLIT_ALL_PERSISTENT,
    KG_SPLIT_EPHEMERAL,
    KG_SPLIT_PERSISTENT
} kg_split_kind;
typedef IL_VEC(const char *) kg_name_vec;
typedef struct kg_split {
    kg_split_kind kind;
    val_t *rows;
    size_t nrows;
    /* the session's relations with facts and its rules that the query can read, found
       once for the split and for the result's metadata */
    kg_name_vec sources;
    uint32_t nrules;
} kg_split;
/* Frees what the split holds (after kg_provenance, or instead of it). */
void kg_split_free(kg_split *split);

/* kg_query_rows with the session, telling its rows apart into *split (provenance.c). */
const char *kg_query_rows_split(il_session *s, const iql_rule *q, val_t **rows, size_t *nrows,
                                uint32_t *arity, kg_split *split);
/* The query's rows with the session, and the ephemeral ones (KG_SPLIT_EPHEMERAL: those
 * the graph's own answer lacks) in one evaluation (query.c, prov_delta.c); leaves
 * split->kind KG_SPLIT_PERSISTENT with no rows and runs nothing when that is not possible
 * (prov_delta_sound). */
const char *kg_query_rows_delta(il_session *s, const iql_rule *q, val_t **rows, size_t *nrows,
                                uint32_t *arity, kg_split *split);
/* Rows of w words compared in word order (the order tuple_sort leaves them in), and
 * whether `row` is among n such rows sorted so (query.c). */
int kg_words_cmp(const val_t *a, const val_t *b, uint32_t n);
bool kg_rows_have(const val_t *rows, size_t n, uint32_t w, const val_t *row);
/* Sets r's provenance and metadata from the split (sorting its sources by name). */
void kg_provenance(il_result *r, kg_split *split);

/* ---- catalog (catalog.c) ---- */
kg_graph *kg_graph_find(il_engine *e, const char *name);
kg_graph *kg_graph_create(il_engine *e, const char *name);
void kg_graph_drop(il_engine *e, kg_graph *g);
/* Frees the graph's relations (their data, or the snapshots a pinned copy holds) and its
 * rules, and the maps that name them. */
void kg_catalog_free(kg_graph *g);
kg_relation *kg_rel_find(kg_graph *g, const char *name);
kg_relation *kg_rel_get(kg_graph *g, const char *name); /* creates an empty entry */
/* The relation's stored facts, created with this arity when missing. */
rel_t *kg_rel_data(kg_graph *g, kg_relation *r, uint32_t arity);
/* Drops the relation's stored facts. */
void kg_rel_drop_data(kg_graph *g, kg_relation *r);
kg_rule *kg_rule_find(kg_graph *g, const char *name);
/* Whether st only reads and keeps nothing: a query, an explanation (`.why`, `.why full`,
 * `.why_not`) or a listing of the session's graph or session (il_prepared_pinnable). Such
 * statements run on a pinned session. */
bool kg_stmt_reads_only(const iql_stmt *st);
kg_rule *kg_rule_get(kg_graph *g, const char *name); /* creates an empty rule */
/* Its clauses changed (or it is new): a new generation. Wherever clauses change. */
void kg_rule_changed(kg_rule *r);
void kg_rule_drop(kg_graph *g, kg_rule *r);
void kg_rule_add_clause(kg_graph *g, kg_rule *r, const iql_rule *clause);
/* A copy of clause appended to r's clauses, in r's arena (no version or undo: the
 * caller's). */
void kg_rule_push_clause(kg_rule *r, const iql_rule *clause);
/* ---- the commit's delta (delta.c) ---- */
/* A stored tuple really changed (sign +1 inserted, -1 deleted): appended to the delta,
 * its values kept when a reader needs them (the log, a rollback, views, indexes, a
 * netting change hook). */
void kg_delta_note(kg_graph *g, const char *rel, const val_t *t, uint32_t arity, int sign);
/* Every tuple of a relation is about to be removed (.clear prefix, .rel drop). */
void kg_delta_note_all_deleted(kg_graph *g, kg_relation *r);
/* Appends a log operation on graph g (NULL: one that names its own graph) and returns the
 * buffer its bytes go to; NULL when the engine has no log. */
il_buf *kg_delta_op(il_engine *e, const kg_graph *g, bool resets_graph);
/* The number of entries (a position for kg_delta_undo_to). */
uint32_t kg_delta_len(const il_engine *e);
/* Adds entry x's tuples (kept values) of d to plus and minus, netted: a tuple deleted and
 * inserted again, or inserted and deleted again, is no change. */
void kg_delta_net(const kg_delta *d, const kg_dentry *x, rel_t *plus, rel_t *minus);
/* Undoes the entries from the last back to position `at`, and forgets them. */
void kg_delta_undo_to(il_engine *e, uint32_t at);
/* Forgets the delta (after the commit, or the rollback). */
void kg_delta_reset(il_engine *e);
void kg_delta_free(il_engine *e);
/* Frees the netted delta of the graph's views, its kept entries included. */
void kg_delta_clear(kg_graph *g);
/* After a commit: the maintained views of every graph catch up with the commit's delta
 * (or rebuild after a change of rules) (view_catalog.c). */
void kg_views_commit(il_engine *e);
/* Effective output arity of a rule head (placeholders dropped, ranking aggregates expanded). */
uint32_t kg_head_arity(const iql_atom *head);
bool kg_head_has_agg(const iql_atom *head);

/* A copy of a schema in the arena. */
iql_schema *kg_schema_copy(il_arena *a, const iql_schema *sc);

/* ---- change records for the change hook (changes.c) ----
 * Statements note which relations, rules, graphs and schemas they change, in order; the
 * facts' counts come from the commit's delta when kg_changes_end hands the records to the
 * hook. Every note is a no-op without a hook. */
/* The FACTS record of a relation the delta starts a run of: its index in e->changes
 * (UINT32_MAX: not reported), and in *net whether tuples of this arity are netted. */
uint32_t kg_change_facts(kg_graph *g, const char *rel, uint32_t arity, bool *net);
/* The statement may remove and add back the same tuples of this relation (an atomic
 * update): its count must be netted tuple by tuple. */
void kg_change_net_facts(kg_graph *g, const char *rel, uint32_t arity);
/* A change of a rule, a graph or a schema (name NULL for a graph). */
void kg_change_note(il_engine *e, il_change_kind kind, const char *graph, const char *name,
                    const char *operation);
/* Ends the statement: hands its changes to the hook when it committed, then forgets them. */
void kg_changes_end(il_engine *e, bool committed);

/* ---- transactions (txn.c) ----
 * While a transaction is open (e->txn), the catalog and the statements record how to undo
 * each change they make; every record is a no-op without a transaction. */
/* (Stored tuples are undone from the commit's delta, in order with these.) */
/* The relation's catalog entry was created / its stored facts were created. */
void kg_undo_rel_created(kg_graph *g, kg_relation *r);
void kg_undo_data_created(kg_graph *g, kg_relation *r);
/* The relation's schema is about to change (old may be NULL). */
void kg_undo_schema(kg_graph *g, kg_relation *r, iql_schema *old);
/* The rule was created / a clause was appended to it. */
void kg_undo_rule_created(kg_graph *g, kg_rule *r);
void kg_undo_clause_added(kg_graph *g, kg_rule *r);
/* The rule is being dropped: true when the transaction took it over (detached from the
 * catalog at `index`, freed at commit), so the caller must not free it. */
bool kg_undo_rule_dropped(kg_graph *g, kg_rule *r, uint32_t index);
/* Clause `index` (0-based) was removed from the rule / all its clauses are being cleared. */
void kg_undo_clause_removed(kg_graph *g, kg_rule *r, iql_rule *clause, uint32_t index);
void kg_undo_rule_cleared(kg_graph *g, kg_rule *r);
/* Frees a rule (catalog.c), for a transaction that kept a dropped one. */
void kg_rule_free(kg_rule *r);
/* Whether the statement may run in the session now (no other session's transaction is
 * open, and inside one only joinable statements). NULL or the refusal. */
const char *kg_txn_refusal(il_session *s, const iql_stmt *st);
/* How a parsed statement takes part in a transaction. */
il_txn_part kg_stmt_txn_part(const iql_stmt *st);
/* Opens the transaction of one statement (only to undo it if its log record cannot be
 * written): the change hook counts its changes as for a statement outside one. */
void kg_txn_begin_statement(il_session *s);
/* Whether changes are netted over a transaction (one is open, and not a statement's own). */
bool kg_txn_nets_changes(const il_engine *e);
/* Whether the open transaction changed nothing stored yet (true when none is open). */
bool kg_txn_unchanged(const il_engine *e);

/* ---- vector indexes (indexes.c) ---- */
/* Below this many live vectors a search scans them all (faster than the graph there,
 * and exact); BENCHMARKS.md has the measurement. */
enum { KG_INDEX_EXACT_BELOW = 200 };
kg_index *kg_index_find(kg_graph *g, const char *name);
/* Adds an index from a definition (checked by the caller); the graph is built on first
 * use. */
kg_index *kg_index_add(kg_graph *g, const kg_index_def *def);
/* Removes one; false when there is none of that name. */
bool kg_index_drop(kg_graph *g, const char *name);
void kg_indexes_free(kg_graph *g);
/* Brings every index of the graph up to date with its facts (after recovery). */
void kg_indexes_build(kg_graph *g);
/* The relation's stored facts are being dropped. */
void kg_index_rel_dropped(kg_graph *g, const char *rel);
/* At a commit: the indexes of every graph follow the commit's delta, in order (or are
 * rebuilt before their next use when they cannot). */
void kg_indexes_commit(il_engine *e);
/* The indexes of `from` (a live graph, whose graphs are brought up to date first, or a
 * pinned copy) into the pinned copy `copy`, at the revision `from` has: serialized, or
 * on any thread holding `from` when it is a pinned copy. */
void kg_indexes_pin(kg_graph *copy, kg_graph *from);
/* The k nearest (plan_source.index_search): brings the graph up to date first, or on a
 * pinned copy searches its revision (any thread). */
size_t kg_index_search(void *index, val_t q, uint32_t k, uint32_t ef, hnsw_hit *out);
/* `.index list/create/drop/stats/rebuild`. */
il_result *kg_index_meta(il_session *s, const iql_meta *m);
void kg_index_def_free(kg_index_def *d);

/* ---- query shapes (shape.c) ---- */
/* A query rule's parameters: its int (within 2^53) and string constants that are an
 * atom's arguments or a comparison's constant side, each distinct value once. */
typedef struct kg_shape {
    uint32_t n;
    const iql_term **terms; /* the first term of each value */
    val_t *values;          /* their values */
    iql_rule key_rule;      /* the rule with `$0i`, `$1s` ... for them: its text is the key */
    /* made by kg_shape_others: */
    val_t *others;       /* other values of the same types, none of them a parameter */
    iql_rule other_rule; /* the rule with the other values */
} kg_shape;

/* Fills *out (in arena a) but for the other values, and returns true when q has
 * parameters. */
bool kg_shape_of(const iql_rule *q, il_arena *a, kg_shape *out);
/* Makes s's other values and rule (in arena a). */
void kg_shape_others(const iql_rule *q, il_arena *a, kg_shape *s);

/* ---- plan cache (plans.c) ---- */
/* The cached entry for this query text or shape, built against the graph as it is now,
 * or NULL. The caller runs its program (a shape's with its values bound first), then
 * resets it (plan_program_reset) before anything else. */
kg_plan_entry *kg_plan_lookup(kg_graph *g, const char *key);
/* Keeps a built program (taking ownership) and returns its entry; evicts the least
 * recently used one. `strings` (taken too, may be NULL) holds the query's own strings
 * (base/intern.h) that p's constants may be, as long as p is kept. */
kg_plan_entry *kg_plan_store(kg_graph *g, const char *key, plan_program *p,
                             il_intern_scope *strings);
/* A shape's entry decided: p (taken) with its parameters (taken) replaces its program, or
   with p NULL the shape is marked as kept by text. */
void kg_plan_decide(kg_graph *g, kg_plan_entry *e, plan_program *p, plan_params *params);
void kg_plan_cache_free(kg_graph *g);

/* pin.c: a pinned graph's statement installs its index provider (exec/snapidx.h) while it
 * runs; the rows a query reads for a maintained rule, from the read policy or, on a pinned
 * graph, from what it held at the pin. */
void kg_pin_enter(kg_graph *g);
void kg_pin_leave(kg_graph *g);
/* Serialized: does what unpins left (frees their copies, adds the indexes their queries
 * built, clears a session whose graph was dropped under its pin). */
void kg_pins_collect(il_engine *e);
/* Serialized, before session w writes (a statement, or a transaction at its begin; not
 * inside one), when w is set to publish or pinned reads ran lately: pins w's graph as it
 * is (its latest committed revision) for il_session_pin_published, and every other graph
 * a session is on (none of them changes while w writes), each unless it is published
 * already (its publication is still its latest revision: any write to it withdraws it)
 * or has vector indexes. Otherwise withdraws w's graph's publication, if another write
 * made one, so that w does not copy the nodes it changes for it. */
void kg_publish(il_session *w);
/* Serialized, when a write to g ends (a statement, a transaction's commit or rollback),
 * before anyone is told of it (the change hook): counts it on g and withdraws g's
 * publication, which is no longer its latest revision; the other graphs' stay. Makes the
 * list of graphs pins read anew when a graph was created or dropped. */
void kg_unpublish_written(il_engine *e, kg_graph *g);
/* Serialized: g's published revision goes (g is being dropped). */
void kg_unpublish(kg_graph *g);
/* Serialized: the list of graphs pins read (e->listed) is made anew from e->graphs when
 * a graph was created or dropped since it was made. */
void kg_graphs_relist(il_engine *e);
/* The names of the engine's graphs, sorted, in a malloc'ed array (*n of them): a pinned
 * session's as of its pin (the last list made before it), else the engine's now. Valid
 * until the statement ends. */
const char **kg_graph_names(il_session *s, uint32_t *n);
/* At the engine's close: the list of graphs goes. */
void kg_graphs_unlist(il_engine *e);
/* Serialized: g lets go of the copy of its rules that pins share (g is being dropped). */
void kg_pin_rules_release(kg_graph *g);
/* A pinned session's query that would make its goal's rule maintained: the view is made
 * on the pinned copy (its rows are then the query's), for the live graph to adopt at the
 * next serialized call after the unpin (kg_pins_collect). */
void kg_pin_note_query(il_session *s, const iql_query *q);
/* Serialized, s still pinned: view v, computed on s's pinned copy (opened with
 * own_clauses), goes to the live graph, caught up with the commits since the pin; false
 * (v untouched, still the copy's) when the live graph cannot take it: dropped, its rules
 * changed, a transaction open, or s pinned a publication. */
bool kg_pin_adopt_view(il_session *s, view_t *v);
bool kg_maintained_active(kg_graph *g);
const rel_t *kg_maintained_rows(kg_graph *g, const char *rel);

/* ---- sessions (session.c) ---- */
void sess_clear(il_session *s, size_t *nfacts, size_t *nrules);
sess_facts *sess_facts_find(il_session *s, const char *rel);
/* Adds a session fact; false when it was already there. */
bool sess_fact_add(il_session *s, const char *rel, const val_t *t, uint32_t arity);
size_t sess_fact_count(const il_session *s);
const iql_schema *sess_schema_find(const il_session *s, const char *rel);

/* ---- results (result.c) ---- */
il_result *res_new(il_result_kind kind);
il_result *res_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
il_result *res_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message `<before><n><middle><name><after>` on one line, as res_message would write
 * it with "%u" and "%s", without printf: every insert and delete replies with one. */
il_result *res_count_message(const char *before, unsigned n, const char *middle, const char *name,
                             const char *after);
il_result *res_parse_error(const char *msg);
void res_add_line(il_result *r, const char *line);
/* Adds every line of a multi-line text. */
void res_add_lines(il_result *r, const char *text);
void res_add_col(il_result *r, const char *name);

/* ---- statement guards (guards.c) ---- */
/* Starts the guard of the statement the session is about to run, from its limits, and
 * makes it the session's guard: evaluations (kg_query_rows, kg_query) check it and count
 * their memory against it. */
void kg_guard_begin(il_session *s, exec_guard *g);
/* Ends the statement's guard and returns the result to hand out: the stop's error when
 * the guard stopped the statement (r may then be anything, NULL included), else r, with
 * the peak of its counted memory. A guard stops a statement only while it evaluates,
 * which always comes before anything is applied. */
il_result *kg_guard_end(il_session *s, exec_guard *g, il_result *r);

/* ---- queries (query.c) ---- */
typedef struct kg_query_opts {
    bool with_session; /* session facts and rules take part */
    bool raw_headers;  /* `.why`: headers from the query head (`_c0` for constants) */
    size_t max_rows;   /* rows the table keeps at most; 0: the engine's 100000 */
    bool provenance;   /* a `?` statement: rows classified when the session has data */
} kg_query_opts;
/* Runs a query and returns a table (or an error). */
il_result *kg_query(il_session *s, const iql_query *q, kg_query_opts opts);
/* The rule that answers a query (query.c): head = the output columns (goal arguments,
 * then the new variables of the other literals), body = the goal and the literals. */
typedef struct query_shape {
    iql_rule rule;
    char **headers; /* one per head column */
    bool quirk_all; /* goal arity differs from the relation's: all its rows, colN headers */
} query_shape;
void kg_query_shape(il_session *s, const iql_query *q, kg_query_opts opts, il_arena *arena,
                    query_shape *out);
/* Runs a rule-shaped query (head = output columns) over persistent rules and stored
 * facts; rows come back in *rows (arity values each, in word order; a counted block to
 * free with il_mem_free; a query without columns gets one row, of no values, when its
 * body holds). Returns NULL or an error text (static or arena); when the
 * session's guard stopped it, the stop's text (il_stop_message). */
const char *kg_query_rows(il_session *s, const iql_rule *q, bool with_session, val_t **rows,
                          size_t *nrows, uint32_t *arity);

/* ---- statements (stmt.c, meta.c, validate.c) ---- */
il_result *kg_exec_stmt(il_session *s, const iql_stmt *st, il_arena *a);
/* A query statement over the graph as stored (il_query_stored): persistent rules and
 * stored facts only, the table cut to max_rows (0: the engine's 100000). Any other
 * statement is an ERROR. */
il_result *kg_exec_stored_query(il_session *s, const iql_stmt *st, size_t max_rows);
il_result *kg_exec_meta(il_session *s, const iql_meta *m, il_arena *a);
/* il_execute (il_query_stored when `stored`, max_rows 0 meaning its default) of a
 * statement parsed already: text is its source, st its tree (in an arena that outlives
 * the call), or NULL and err why it did not parse; parse_ns the time its parse took (the
 * result's timing counts it). */
il_result *kg_execute_parsed(il_session *s, const char *text, size_t len, const iql_stmt *st,
                             const char *err, uint64_t parse_ns, bool stored, size_t max_rows);
/* `.debug ?query`: the compiled program (query.c). */
il_result *kg_debug(il_session *s, const iql_meta *m, il_arena *a);
/* `.why ?query` / `.why full ?query`: the query's table with its rows' proof trees
 * (why.c). */
il_result *kg_why(il_session *s, const iql_meta *m, il_arena *a, bool full);
/* `.why_not rel(values)` (whynot.c). */
il_result *kg_why_not(il_session *s, const iql_meta *m, il_arena *a);
/* Validation of a rule (3.5). Returns NULL or the message (without any prefix). */
const char *kg_validate_rule(const iql_rule *r, il_arena *a);
/* Stratification of all persistent rules plus `extra`. NULL or the message. */
const char *kg_check_stratification(kg_graph *g, const iql_rule *extra, il_arena *a);

#endif
