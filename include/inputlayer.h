/* InputLayer embedding API: open an engine, open sessions on it, execute IQL
 * statements, and read their results (messages, errors, or tables of values).
 * Everything the CLI and the server do goes through these functions.
 *
 * An engine holds the knowledge graphs; a session holds one client's current graph,
 * session facts and session rules. A result is owned by the caller until
 * il_result_free. Not thread-safe yet: one thread at a time per engine (the statements of
 * an engine may run on different threads one after another); the guards below are the
 * exception, see il_limits. */
#ifndef INPUTLAYER_H
#define INPUTLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct il_engine il_engine;
typedef struct il_session il_session;
typedef struct il_result il_result;
/* A value in a result row; format it with il_value_format. */
typedef uint64_t il_value;

/* Opens an engine. data_dir NULL keeps everything in memory. Returns NULL and sets
 * *err (malloc'ed, may be NULL) on failure, also when recovery of data_dir cannot reach
 * its last acknowledged commit (damaged checkpoints or log records; nothing is changed
 * then, docs/durability.md "Recovery"). */
il_engine *il_engine_open(const char *data_dir, char **err);
typedef enum il_recover_mode {
    IL_RECOVER_STRICT,  /* refuse to open when acknowledged commits cannot be recovered */
    IL_RECOVER_SALVAGE, /* open what is readable, moving damaged files aside */
} il_recover_mode;
/* il_engine_open with the choice of what recovery does with damage it cannot repair. */
il_engine *il_engine_open_recover(const char *data_dir, il_recover_mode mode, char **err);
void il_engine_close(il_engine *e);

/* The longest the views of the engine may take to catch up with one commit (or to be
 * built); 0, the default, is no bound. A view whose rows a write would make grow past it
 * (a recursion that no longer reaches a fixpoint, say `dist(X, Z, D) <- dist(X, Y, D0),
 * edge(Y, Z), D = D0 + 1` once the edges have a cycle) stops being maintained: it fails
 * with an error (view_error) until the rules change, and the write itself stands. */
void il_engine_set_view_budget(il_engine *e, uint64_t ns);

/* Whether reads make persistent rules maintained (on, the default): the first query that
 * reads a persistent rule with no argument bound keeps the rule's rows as a maintained
 * view, which later reads read and writes keep current (docs/engine.md, "Which rules are
 * maintained"). Off: every read evaluates, and the rules maintained so far stop being
 * maintained. Standing queries (subscriptions) keep their own views either way. */
void il_engine_set_maintained_views(il_engine *e, bool on);

/* How many threads one statement's evaluation may use, the calling thread included (big
 * recursion shares its work out to them: a closure's searches, a partitioned fixpoint's
 * partitions, semi-naive rounds; the result is the same on any number). 0 sets the
 * default: the CPUs online, at most IL_EVAL_THREADS_MAX. Per session, il_limits.threads
 * overrides it. */
#define IL_EVAL_THREADS_MAX 64
void il_engine_set_eval_threads(il_engine *e, unsigned n);
unsigned il_engine_eval_threads(const il_engine *e);

/* When a write's result may be returned (docs/durability.md). IMMEDIATE (the default):
 * after its log record is on disk (fdatasync). BATCHED: the log is synced at most every
 * batch_ms, so a power loss may lose that window of acknowledged writes. ASYNC: the
 * kernel writes the log when it likes; a crash of the process loses nothing, a power
 * loss may lose the tail. */
typedef enum il_durability {
    IL_DURABILITY_IMMEDIATE,
    IL_DURABILITY_BATCHED,
    IL_DURABILITY_ASYNC,
} il_durability;
/* False for an engine without a data directory. */
bool il_engine_set_durability(il_engine *e, il_durability mode, unsigned batch_ms);
/* Forces every acknowledged write to disk (for BATCHED and ASYNC: a timer or shutdown
 * calls it). True when there is nothing to sync; false and *err (malloc'ed) on failure. */
bool il_engine_sync(il_engine *e, char **err);
/* Group commit, for an embedder that runs statements on one thread and acknowledges them
 * on another: in IMMEDIATE mode a statement's record is written but not synced when it
 * returns; the embedder acknowledges it only once il_engine_log_durable() has reached
 * the il_engine_log_written() it saw after the statement, calling il_engine_sync from a
 * thread of its own, which covers every record written meanwhile with one fdatasync.
 * Nothing may observe (or be told about) a statement's effects before then. These three
 * calls, unlike the others, are safe while another thread runs a statement. False for
 * an engine without a data directory. */
bool il_engine_set_group_commit(il_engine *e, bool on);
/* Log positions: the last record written, and the last one synced (0 in memory). */
uint64_t il_engine_log_written(il_engine *e);
uint64_t il_engine_log_durable(il_engine *e);
/* fdatasyncs that made log records durable since the engine opened (any thread). */
uint64_t il_engine_log_syncs(il_engine *e);
/* Why writes fail or are refused now (a full disk, a failed sync; docs/durability.md),
 * as a sentence, or NULL when the log is fine or there is none. Any thread. */
const char *il_engine_storage_problem(il_engine *e);
/* Checkpoints (docs/durability.md): once the log has grown by `bytes` since the last
 * checkpoint, a compressed image of the stored state is written in the background and
 * the log it makes unnecessary is deleted (0: only on `.compact`; default 64 MiB).
 * False for an engine without a data directory. */
bool il_engine_set_checkpoint_bytes(il_engine *e, uint64_t bytes);
/* The size of the log's segment files from now on (0: the default, 16 MiB): the one
 * being appended to ends at that size. A checkpoint deletes old log a whole segment at a
 * time, so smaller segments free space sooner. False for an engine without a data
 * directory. */
bool il_engine_set_log_segment_bytes(il_engine *e, uint64_t bytes);

/* The engine's version, as backups record it. */
#define IL_ENGINE_VERSION "0.1.0"

/* Online backup (docs/durability.md, "Backup"). `.backup [name]` captures the stored
 * state between two statements and writes it in the background, on a thread of its own,
 * as a data directory DIR/<name> that il_backup_restore can install; `.backup status`
 * tells how the last export went. Without a directory (the default) `.backup` is
 * refused. `capture`, when not NULL, is called on the engine's thread at the moment of
 * the capture, to add the files the embedder keeps in the data directory itself (the
 * server's identity store) as they are at that moment. False for an engine without a
 * data directory. */
typedef struct il_backup_capture il_backup_capture;
typedef void (*il_backup_capture_fn)(void *ctx, il_backup_capture *cap);
bool il_engine_set_backup(il_engine *e, const char *dir, il_backup_capture_fn capture, void *ctx);
/* Adds DATA/<name> with these contents to the export being captured. The name is a plain
 * file name (letters, digits, '-', '_', '.', not starting with '.'); other names, and
 * the names the store uses itself, are ignored. */
void il_backup_add_file(il_backup_capture *cap, const char *name, const void *data, size_t len);

/* `.backup [name]` without a statement: claims DIR/<name> (name NULL: a name made from
 * the time), captures the stored state and starts writing the export in the background.
 * Its result is the statement's: a MESSAGE (where the export goes, how long commits were
 * held) or an ERROR ("Backup error: ..."). On the engine's thread, between statements. */
il_result *il_backup_start(il_engine *e, const char *name);
/* `.backup status` without a statement: a MESSAGE saying whether an export is running or
 * how the last one ended, or an ERROR when backups are not configured. */
il_result *il_backup_poll(il_engine *e);
/* Creates the directory path and its missing parents, owner-only (the backup directory,
 * before il_engine_set_backup). False with errno set when it cannot. */
bool il_backup_make_dirs(const char *path);

typedef struct il_restore_info {
    uint64_t revision; /* the log position the export holds */
    size_t files;      /* files installed */
    uint64_t bytes;    /* their size */
} il_restore_info;
/* Installs the export in backup_dir into data_dir (created when missing), before an
 * engine opens it: every file the manifest lists must be there with its size and
 * SHA-256, and data_dir must hold no data yet (no files in wal/ or ckpt/, none of the
 * files to install). False and *err (malloc'ed) otherwise, leaving data_dir as it was. */
bool il_backup_restore(const char *backup_dir, const char *data_dir, il_restore_info *info,
                       char **err);

/* Change notifications: what a statement changed in persistent state, for a server to
 * tell its clients. */
typedef enum il_change_kind {
    IL_CHANGE_FACTS,  /* stored facts of one relation */
    IL_CHANGE_RULE,   /* a persistent rule */
    IL_CHANGE_GRAPH,  /* a knowledge graph */
    IL_CHANGE_SCHEMA, /* a relation's declared schema, or the relation itself (.rel drop) */
} il_change_kind;

typedef struct il_change {
    il_change_kind kind;
    const char *graph;     /* the knowledge graph (for GRAPH: the one created or dropped) */
    const char *name;      /* FACTS, SCHEMA: the relation; RULE: the rule; GRAPH: NULL */
    const char *operation; /* FACTS: "insert" | "delete" | "update" (both, in one statement);
                              RULE: "registered" | "removed" | "dropped";
                              GRAPH, SCHEMA: "created" | "dropped" */
    uint64_t count;        /* FACTS: facts added + removed, never 0; otherwise 0 */
} il_change;

/* Receives the changes of one statement (or transaction), in the order they were made: at
 * most one FACTS record per relation (netted: a fact removed and added back in the same
 * statement or transaction is no change). The records and their strings are valid during the call
 * only. */
typedef void (*il_change_fn)(void *ctx, const il_change *changes, size_t n);

/* Sets (fn NULL: removes) the engine's change hook. It is called once per statement that
 * changed persistent state (once per committed transaction, see il_txn_begin), after the
 * change is visible to queries and its log record is committed (with a data directory),
 * on the thread that executed the statement, before il_execute (il_txn_commit) returns.
 * Never for a statement that changed nothing (a duplicate insert, a delete of missing
 * facts, re-registering a clause the rule has) nor for one that failed. Session facts,
 * rules and schemas are not persistent state and are never reported, nor is anything in
 * the system graph `_internal`. The hook must not execute statements on the engine. */
void il_engine_set_change_hook(il_engine *e, il_change_fn fn, void *ctx);

il_session *il_session_open(il_engine *e);
void il_session_close(il_session *s);
/* The name of the session's current knowledge graph (valid until it changes). */
const char *il_session_graph(const il_session *s);
/* Whether a knowledge graph of that name exists. */
bool il_engine_has_graph(il_engine *e, const char *name);
/* Switches the session to a knowledge graph, as `.kg use <graph>` does (its result), without
 * parsing anything. */
il_result *il_session_use(il_session *s, const char *graph);

/* Reading beside writers (docs/engine.md, "Concurrency"). il_session_pin, called where the
 * engine's statements are serialized (the engine is not safe for concurrent statements),
 * fixes the session's graph as it is now: its stored relations, its rules, and the rows
 * of its maintained rules, at the cost of a copy-on-write snapshot of each relation and a
 * copy of each rule. Until il_session_unpin, the session may execute queries (`?...`),
 * explanations (`.why`, `.why full`, `.why_not`) and listings (`.kg`, `.kg list`,
 * `.status`, `.rel`, `.rule`, `.session` and their forms showing one; `.kg list` and
 * `.status` read the graphs as of the pin) on another thread while other sessions
 * execute anything; what they read is the pinned revision, and its memory stays
 * until the unpin. The
 * session's own facts and rules are read with it, as ever. False (nothing pinned) when a
 * transaction is open or the graph has vector indexes: such reads run serialized, as
 * before. Any other statement executed while pinned is refused. */
bool il_session_pin(il_session *s);
/* Ends the pin: the session reads its graph as it is again (the graph named now: one
 * dropped meanwhile left the session on `default`, its session state cleared, as for any
 * session on a dropped graph). Any thread, serialized or not (beside other sessions'
 * statements; never beside the session's own): it releases what the pin held, and leaves
 * the rest to the next serialized call (a statement, a pin): freeing the pinned copy,
 * clearing that session state, and adding to the stored relations the indexes pinned
 * queries had to build for themselves, so that the next pinned read finds them. */
void il_session_unpin(il_session *s);
/* Whether the session is pinned. */
bool il_session_pinned(const il_session *s);
/* Pins the session without being serialized (any thread, beside a statement running; the
 * session itself not in use) on the revision its graph published: a write, when pinned
 * reads ran in the last second, publishes before it changes anything the latest
 * committed revision of its graph and of every other graph a session is on, and a write
 * to a graph withdraws that graph's (writes to other graphs leave it up). So a reader
 * that finds the engine busy with a write, or with anything after one, need not wait for
 * it. False (nothing pinned) when nothing is published now: pin where statements are
 * serialized instead. Unpin as any pin. */
bool il_session_pin_published(il_session *s);
/* Whether the session's writes publish the revision before them whoever reads: on, each
 * write statement, and each transaction when it begins (its revision stays published
 * until it commits or rolls back), publishes, so that a read beside it never waits for it
 * (il_session_pin_published); off (the default), a write publishes only when pinned reads
 * ran in the last second. Publishing costs the write a pin (docs/engine.md). An embedder
 * that takes reads while a write runs on another thread turns it on for writes that may
 * be long; serialized. */
void il_session_set_publish(il_session *s, bool on);
/* Whether no write to the session's graph has committed since the revision the session
 * pinned (any thread; a write that failed may count; writes to other graphs do not). A
 * reader that reports a revision it took from elsewhere after pinning asks this
 * afterwards: true, and the revision it took is the pinned one. */
bool il_session_pin_current(const il_session *s);
/* The bound on the memory old versions hold for pinned reads (nodes the writers replaced
 * while a pin could reach them, relations cleared or dropped under one), 0 = none (the
 * default). Past it, the oldest pinned read stops with IL_STOP_SNAPSHOT_TOO_OLD at its
 * next check, its unpin frees what only it held, and so on while still past it. The
 * memory is counted for the whole process (il_snapshot_memory_bytes); any thread. */
void il_engine_set_snapshot_memory(il_engine *e, uint64_t bytes);
/* Bytes that old versions hold in the process now; any thread. */
uint64_t il_snapshot_memory_bytes(void);

/* Executes one statement (see il_next_statement for splitting a script). Never NULL. */
il_result *il_execute(il_session *s, const char *text, size_t len);
/* Runs one query (`?...`) over the session's knowledge graph as stored: its persistent
 * rules and stored facts; the session's own facts and rules take no part (a server's
 * snapshot reads). Under the session's limits, like il_execute. A TABLE of the query's
 * rows (sorted, annotated, offset and limit as il_execute's), cut to max_rows when
 * max_rows > 0 (il_result_total_rows tells how many there were); an ERROR when it fails
 * or is not a query; a PARSE_ERROR when it does not parse. Never NULL. */
il_result *il_query_stored(il_session *s, const char *text, size_t len, size_t max_rows);
void il_result_free(il_result *r);

/* ---- transactions: several statements of a session committed as one ----
 * Between il_txn_begin and il_txn_commit, il_execute applies each statement in memory
 * (later statements and their queries see it) but commits nothing: il_txn_commit writes
 * all their effects as ONE log record, reports them to the change hook in ONE call (facts
 * netted over the whole transaction) and brings maintained views up to date once;
 * il_txn_rollback undoes every change the statements made to stored facts, schemas and
 * persistent rules, and to the session's facts, rules and schemas, writes nothing and
 * reports nothing. A statement that fails inside a transaction changes nothing, as
 * always; whether to go on or roll back is the caller's choice. Statements that cannot be
 * undone (IL_TXN_OUTSIDE) are refused inside a transaction with an ERROR. One transaction
 * at a time per engine: statements of other sessions are refused while it is open. */
typedef enum il_txn_part {
    IL_TXN_READS,   /* changes no persistent state: queries, session facts, rules and
                       schemas, type declarations, statements that do not parse */
    IL_TXN_WRITES,  /* changes stored facts, schemas or persistent rules */
    IL_TXN_OUTSIDE, /* cannot join a transaction: other meta commands (knowledge graphs,
                       .rel drop, .index, .compact, .session, inspection commands ...) */
} il_txn_part;
/* How the statement would take part in a transaction (parsed, not executed). */
il_txn_part il_statement_txn_part(const char *text, size_t len);
/* Opens a transaction on the session. False when one is open on the engine already. */
bool il_txn_begin(il_session *s);
/* Commits the session's transaction. False and *err (malloc'ed) when its log record
 * could not be made durable. When nothing of it reached the log (the disk is full: *err
 * starts with "Storage full"), the transaction is rolled back and *undone set; otherwise
 * the changes stay in memory (the outcome is unknown, as for a single statement whose
 * record failed) and are not reported. */
bool il_txn_commit_or_undo(il_session *s, bool *undone, char **err);
/* il_txn_commit_or_undo without the flag. */
bool il_txn_commit(il_session *s, char **err);
/* Undoes the session's transaction. */
void il_txn_rollback(il_session *s);

/* ---- prepared statements: a program parsed once ----
 * il_prepare splits a program into statements as the CLI reads a script, parses each
 * once and keeps the trees; an embedder reads what it needs to authorize and route each
 * statement (its kind, the graph a `.kg` command names, the relations it reads and
 * writes), then runs it with il_execute_prepared, which parses nothing. A prepared
 * program belongs to no engine and no session: preparing and reading it are safe on any
 * thread; running statement i is il_execute's rules. */
typedef struct il_prepared il_prepared;

typedef enum il_statement_kind {
    IL_STATEMENT_INVALID,        /* does not parse: il_prepared_error tells why */
    IL_STATEMENT_UNTERMINATED,   /* brackets still open at its end: not parsed */
    IL_STATEMENT_QUERY,          /* ?goal, ... */
    IL_STATEMENT_INSERT,         /* +rel(...), +rel[...] */
    IL_STATEMENT_DELETE,         /* -rel(...), -rel[...] */
    IL_STATEMENT_COND_DELETE,    /* -rel(args) <- body */
    IL_STATEMENT_UPDATE,         /* -rel(...), +rel(...) <- body */
    IL_STATEMENT_RULE,           /* +head <- body: a persistent rule */
    IL_STATEMENT_DROP_RULE,      /* -name */
    IL_STATEMENT_SCHEMA,         /* +rel(col: type, ...) */
    IL_STATEMENT_TYPE_DECL,      /* type Name: ... */
    IL_STATEMENT_SESSION_RULE,   /* head <- body */
    IL_STATEMENT_SESSION_FACT,   /* rel(constants) */
    IL_STATEMENT_SESSION_SCHEMA, /* rel(col: type, ...) */
    IL_STATEMENT_META,           /* a `.` command: il_prepared_meta tells which */
} il_statement_kind;

/* The meta commands. */
typedef enum il_meta_command {
    IL_META_NONE, /* not a meta command */
    IL_META_KG_SHOW,
    IL_META_KG_LIST,
    IL_META_KG_CREATE,
    IL_META_KG_USE,
    IL_META_KG_DROP,
    IL_META_KG_ACL_LIST,
    IL_META_KG_ACL_GRANT,
    IL_META_KG_ACL_REVOKE,
    IL_META_REL_LIST,
    IL_META_REL_SHOW,
    IL_META_REL_DROP,
    IL_META_RULE_LIST,
    IL_META_RULE_SHOW,
    IL_META_RULE_DEF,
    IL_META_RULE_DROP,
    IL_META_RULE_DROP_PREFIX,
    IL_META_RULE_REMOVE,
    IL_META_RULE_CLEAR,
    IL_META_RULE_EDIT,
    IL_META_SESSION_LIST,
    IL_META_SESSION_CLEAR,
    IL_META_SESSION_DROP_INDEX,
    IL_META_SESSION_DROP_NAME,
    IL_META_CLEAR_PREFIX,
    IL_META_COMPACT,
    IL_META_BACKUP,
    IL_META_BACKUP_STATUS,
    IL_META_STATUS,
    IL_META_DEBUG,
    IL_META_WHY,
    IL_META_WHY_FULL,
    IL_META_WHY_NOT,
    IL_META_INDEX_LIST,
    IL_META_INDEX_CREATE,
    IL_META_INDEX_DROP,
    IL_META_INDEX_STATS,
    IL_META_INDEX_REBUILD,
    IL_META_HELP,
    IL_META_QUIT,
    IL_META_LOAD,
    IL_META_USER,
    IL_META_APIKEY,
    IL_META_AGENT,
} il_meta_command;

/* Prepares a program (several statements, or one). Never NULL; free it with
 * il_prepared_free. Every byte is kept: a statement holding a NUL parses, or does not,
 * exactly as il_execute would parse its text. */
il_prepared *il_prepare(const char *text, size_t len);
void il_prepared_free(il_prepared *p);
/* The number of statements. */
size_t il_prepared_count(const il_prepared *p);
/* Statement i's text as split (lines trimmed and joined), NUL-terminated, *len bytes. */
const char *il_prepared_text(const il_prepared *p, size_t i, size_t *len);
il_statement_kind il_prepared_kind(const il_prepared *p, size_t i);
il_meta_command il_prepared_meta(const il_prepared *p, size_t i);
/* A meta command's arguments as typed, k = 0, 1, 2 (NULL when absent): for `.kg use`,
 * `.kg create`, `.kg drop` and `.kg acl ...` argument 0 is the graph, for `.kg acl grant`
 * 1 the user and 2 the role. */
const char *il_prepared_arg(const il_prepared *p, size_t i, unsigned k);
/* The graph statement i names (`.kg use/create/drop/acl`), or NULL: the session's. */
const char *il_prepared_graph(const il_prepared *p, size_t i);
/* The rest of a meta command's line (`.why`, `.debug`, `.user`, `.apikey`, ...), or NULL. */
const char *il_prepared_meta_text(const il_prepared *p, size_t i);
/* Why statement i does not parse (without the "Parse error: " prefix), or NULL. */
const char *il_prepared_error(const il_prepared *p, size_t i);
/* How statement i would take part in a transaction (il_statement_txn_part). */
il_txn_part il_prepared_txn_part(const il_prepared *p, size_t i);
/* Whether statement i of p only reads and keeps nothing, and so may run pinned: a query
 * (the first read of a persistent rule with nothing bound, which makes the rule a
 * maintained view, makes it on the pin; the graph adopts it after the unpin), an
 * explanation (`.why`, `.why full`, `.why_not`), or a listing of the session's graph or
 * session (`.kg` alone, `.rel`, `.rel <name>`, `.rule`, `.rule <name>`, `.rule def
 * <name>`, `.session`); also a statement that does not parse (its error is all it does).
 * Any thread. */
bool il_prepared_pinnable(const il_prepared *p, size_t i);
/* The relations statement i names in its session's graph: fn(ctx, name, writes) for each
 * place one appears, in order (a name may come more than once), written ones (inserted into,
 * deleted from, a rule's or schema's relation) with writes true, those read (a query's or body's
 * atoms) false. Session facts, rules and schemas write no stored relation: their heads are not
 * reported; nor are the arguments of meta commands (il_prepared_arg has them). */
typedef void (*il_relation_fn)(void *ctx, const char *name, bool writes);
void il_prepared_relations(const il_prepared *p, size_t i, il_relation_fn fn, void *ctx);
/* Runs statement i of p as il_execute runs its text, without parsing it again. */
il_result *il_execute_prepared(il_session *s, const il_prepared *p, size_t i);
/* Runs statement i of p as il_query_stored runs its text. */
il_result *il_query_stored_prepared(il_session *s, const il_prepared *p, size_t i, size_t max_rows);
/* Statements parsed by this process so far (il_execute, il_prepare, and the engine's own
 * parses: recovery, maintained views), from any thread. */
uint64_t il_statements_parsed(void);

/* ---- standing queries: subscriptions and their deltas ----
 * A subscription keeps the rows of a query over a knowledge graph's persistent rules and
 * stored facts (the session's own facts and rules take no part) and collects the rows
 * that each statement adds and removes (docs/engine.md, "Standing queries"). The
 * subscriptions of one graph whose queries differ only in the int and string constants
 * of the goal atom form a family that shares one maintained view: its rows are routed to
 * each member by those constants (the key), so a write costs what it changed, not the
 * number of subscribers. After each statement (or transaction) that may have changed
 * something, the embedder calls il_subs_route and reads the changes of the subscriptions
 * it returns. Rows are arrays of il_sub_arity values back to back, read in bulk; a
 * string value stays valid while the subscription is open. Every call here is on the
 * engine's thread (il_engine_subscriptions excepted), and every subscription is closed
 * before its engine (il_engine_close frees those left open: their handles dangle). */
typedef struct il_sub il_sub;

/* Subscribes to `?query` over the session's current graph: NULL and *err (malloc'ed, may
 * be NULL: no reason known) when the query does not parse, does not run or cannot be
 * maintained (limit(...), unstratified rules ...). ctx is the embedder's, returned
 * by il_sub_ctx. The subscription's rows are current at once (il_sub_rows); nothing of
 * them is a change. */
il_sub *il_subscribe(il_session *s, const char *query, size_t len, void *ctx, char **err);
/* How il_subscribe_beside lets other statements run while it computes: `release` lets go
 * of what serializes the engine's calls (the embedder's lock, held when it is called),
 * `retake` takes it again. */
typedef struct il_serializer {
    void (*release)(void *ctx);
    void (*retake)(void *ctx);
    void *ctx;
} il_serializer;
/* il_subscribe, for a query whose family has no view yet (the first subscription of its
 * shape on its graph), computing that view without holding up other statements: it pins
 * the session's graph (il_session_pin), releases the serializer, computes the view on the
 * pinned revision, retakes it, and catches the view up with the commits made meanwhile
 * (a rule change or a drop of the graph meanwhile: computed again, serialized). Other
 * calls may then run on the engine while it computes, this session's excepted. The
 * rows are current as of the return, as il_subscribe's. */
il_sub *il_subscribe_beside(il_session *s, const char *query, size_t len, void *ctx,
                            const il_serializer *ser, char **err);
/* Subscribes to n queries at once (ser may be NULL: serialized throughout): the new
 * families' views are computed on one pin, and every subscription's rows are current as
 * of the return, the same revision for all. subs gets the n subscriptions; false, with
 * *failed the index of the query refused and *err as il_subscribe's, when one cannot be
 * made: then none is. */
bool il_subscribe_all(il_session *s, size_t n, const char *const *queries, const size_t *lens,
                      void *ctx, const il_serializer *ser, il_sub **subs, size_t *failed,
                      char **err);
/* Ends the subscription (the last member of a family closes its view) and frees it,
 * with the changes it held. */
void il_sub_close(il_sub *sub);
void *il_sub_ctx(const il_sub *sub);
/* The width of the rows (the query's columns). */
uint32_t il_sub_arity(const il_sub *sub);
/* Column i's header, as the query's table names it (a variable's name, a constant's
 * text, "col<i>"); NULL past the last column. Valid while the subscription is open. */
const char *il_sub_column(const il_sub *sub, uint32_t i);
/* Why the subscription has no rows any more (its graph was dropped, a rule change made
 * its query fail, it grew past il_engine_set_view_budget), or NULL. A failed family may
 * work again after the next change of rules; until then it routes nothing. */
const char *il_sub_error(const il_sub *sub);
/* The current rows (the query's result as a set), malloc'ed into *rows (free() it; NULL
 * when empty), arity values each. Returns the number of rows. */
size_t il_sub_rows(const il_sub *sub, il_value **rows);

/* Routes what the statements since the last call changed to the subscriptions of the
 * engine: each family's view delta is taken once and each changed row appended to the
 * changes of the members of its key. Returns the subscriptions that got rows, linked by
 * il_sub_next_touched (NULL: none); *error_changed (not NULL) is set when a family's view
 * failed, or works again, since the last call. */
il_sub *il_subs_route(il_engine *e, bool *error_changed);
il_sub *il_sub_next_touched(const il_sub *sub);

/* A subscription's changes: rows added and rows removed, each of il_sub_arity values back
 * to back, exactly the difference from its last delivered result (a row that came and
 * went in between is in neither). Valid until the next call that changes the
 * subscription. */
typedef struct il_sub_delta {
    const il_value *added;
    size_t nadded;
    const il_value *removed;
    size_t nremoved;
} il_sub_delta;
/* The changes to deliver: those held (il_sub_hold) while any are, else those routed
 * since il_sub_clear. */
il_sub_delta il_sub_changes(const il_sub *sub);
/* The changes were delivered (or given up): forgets the routed and the held ones. */
void il_sub_clear(il_sub *sub);
/* For an embedder that cannot deliver now (a client not reading): folds the routed
 * changes into the held ones, netted (a row added now cancels a held removal), and
 * clears the routed ones; il_sub_changes then returns the held changes until
 * il_sub_clear. */
void il_sub_hold(il_sub *sub);
/* The rows held (added + removed). */
size_t il_sub_held(const il_sub *sub);

/* Families (maintained views) and subscriptions open on the engine; any thread. */
void il_engine_subscriptions(il_engine *e, uint64_t *views, uint64_t *subs);

/* Whether `text` is one standing query as a subscription may have it: a single `?` query
 * (a script's statement: lines trimmed and joined) without limit(...) or sort
 * annotations. Returns the statement's text (malloc'ed, NUL-terminated), or NULL and
 * *why (malloc'ed) the reason, a phrase to follow the query's name ("must start with
 * '?'", "does not parse: ..."). */
char *il_standing_query(const char *text, size_t len, char **why);

/* ---- precondition scopes ---- */
typedef void (*il_name_fn)(void *ctx, const char *name);
/* The engine's knowledge graphs (`.kg list`'s): fn (may be NULL) once per name, in name
 * order. Returns how many there are. */
size_t il_engine_graphs(il_engine *e, il_name_fn fn, void *ctx);
/* The relations of the session's graph in the scope of `names`: the names themselves,
 * every relation derived from them through persistent rules (rules whose bodies read
 * one, transitively), and everything those derived relations are derived from (their
 * contents change with it). fn is called once per relation of the scope. Returns n when
 * every name is a relation (stored facts or a declared schema) or a persistent rule of
 * the graph, else the index of the first that is none (fn is then never called). */
size_t il_graph_scope(il_session *s, const char *const *names, size_t n, il_name_fn fn, void *ctx);

/* ---- guards: stopping a statement by cancel, deadline or memory ----
 * A statement is stopped only before it begins to apply anything: before it starts, and
 * while it evaluates (queries, `.why`, the bodies of conditional deletes and atomic
 * updates), at checks made every few thousand tuples. Applying a write and maintaining
 * views are never interrupted. A stopped statement's result is an ERROR of one line, and
 * nothing was applied. */

/* A memory budget shared by statements running at the same time (the server's
 * max_total_query_memory_bytes). Thread-safe. */
typedef struct il_mem_budget il_mem_budget;
il_mem_budget *il_mem_budget_new(uint64_t limit_bytes); /* 0 = unlimited (still counts) */
void il_mem_budget_free(il_mem_budget *b);
/* The live bytes that statements running now hold against the budget. */
uint64_t il_mem_budget_used(const il_mem_budget *b);

/* Guards for the statements a session executes next (until changed). */
typedef struct il_limits {
    /* Non-NULL and non-zero: stop (a cancel or a disconnect). Set from any thread, with
       an atomic or volatile store; it is read with an atomic load. */
    const volatile int *cancel;
    /* CLOCK_MONOTONIC time in ns after which the statement stops; 0 = none. */
    uint64_t deadline_ns;
    uint64_t max_memory_bytes; /* live bytes of the statement's working data; 0 = no limit */
    il_mem_budget *budget;     /* may be NULL; must outlive the statements using it */
    unsigned threads; /* evaluation threads (il_engine_set_eval_threads); 0: the engine's */
} il_limits;
/* Copies the limits (NULL clears them). Without limits a statement runs to its end. */
void il_session_set_limits(il_session *s, const il_limits *l);

typedef enum il_stop {
    IL_STOP_NONE,
    IL_STOP_CANCELLED,
    IL_STOP_DEADLINE,
    IL_STOP_MEMORY, /* over max_memory_bytes */
    IL_STOP_BUDGET, /* the shared budget was used up */
    /* a pinned read, the oldest, while old versions held over il_engine_set_snapshot_memory */
    IL_STOP_SNAPSHOT_TOO_OLD,
} il_stop;
/* Why a statement was stopped (its result is an ERROR and nothing was applied), else NONE. */
il_stop il_result_stop(const il_result *r);
/* The error text of a stop (the original server's words; "" for NONE), for results and
 * for a server that refuses a request before it reaches the engine. */
const char *il_stop_message(il_stop why);
/* The peak of the statement's accounted live bytes (for metrics and the server's
 * release-after-peak policy); counted whether or not limits are set. */
uint64_t il_result_peak_bytes(const il_result *r);
/* The most threads one step of the statement's evaluation ran on, the calling thread
 * included (il_engine_set_eval_threads, il_limits.threads): 1 when it ran on one. */
unsigned il_result_threads(const il_result *r);

typedef enum il_result_kind {
    IL_RESULT_MESSAGE,     /* lines of text */
    IL_RESULT_TABLE,       /* named columns and rows of values */
    IL_RESULT_ERROR,       /* the statement failed; one or more lines of text */
    IL_RESULT_PARSE_ERROR, /* the statement did not parse; nothing was done */
} il_result_kind;

/* What kind of statement produced the result, for clients that follow up on some
 * (the CLI's session counters and its query after a session rule). */
typedef enum il_stmt_class {
    IL_STMT_OTHER,
    IL_STMT_QUERY,
    IL_STMT_SESSION_RULE, /* il_result_rule_head gives the head and its effective arity */
    IL_STMT_SESSION_FACT,
    IL_STMT_KG_SWITCH,     /* .kg use / .kg create: the session was cleared */
    IL_STMT_SESSION_CLEAR, /* .session clear */
    IL_STMT_REL_SHOW,      /* .rel <name>: a table of the relation's rows */
    IL_STMT_CLIENT_ONLY,   /* .help, .quit, .load: not executed by the engine */
} il_stmt_class;

il_result_kind il_result_kind_of(const il_result *r);
il_stmt_class il_result_stmt_class(const il_result *r);

/* Lines of a MESSAGE, ERROR or PARSE_ERROR result (parse errors without the
 * "Parse error: " prefix). */
size_t il_result_nlines(const il_result *r);
const char *il_result_line(const il_result *r, size_t i);

/* TABLE results. Rows are in the engine's order (sorted, then :asc/:desc, offset, limit). */
size_t il_result_ncols(const il_result *r);
const char *il_result_col(const il_result *r, size_t i);
size_t il_result_nrows(const il_result *r);
/* The rows a query's table had before it was cut (to il_query_stored's max_rows, or to
 * il_execute's 100000): il_result_nrows when nothing was cut. */
size_t il_result_total_rows(const il_result *r);
/* The row's values; a row may be wider than the column list (extra values are not
 * shown by the CLI). *width receives the number of values. */
const il_value *il_result_row(const il_result *r, size_t i, size_t *width);

/* For the result of `.why ?query` (and `.why full ?query`): the proof trees of its rows
 * as a JSON array, one DAG {"version", "query", "roots", "nodes"} per row (docs/server.md,
 * "Proof trees"); for `.why_not`, one DAG of why_not nodes. Valid until the result is
 * freed. NULL for any other result. */
const char *il_result_proof_trees(const il_result *r);

/* Where row i of a query's table comes from: "persistent" (the graph's stored facts and
 * persistent rules give it), "ephemeral" (only the session's facts or rules do), or
 * "unknown" (the session has none: the normal path; and any other result). */
const char *il_result_row_provenance(const il_result *r, size_t i);
/* For a query on a session with facts or rules of its own, or a query or rule with
 * warnings (a relation that does not exist, a body atom of the wrong arity, an equality
 * that never holds; docs/server.md): the result's `metadata` object as JSON
 * ({"has_ephemeral", "ephemeral_sources"?, "warnings"?}, protocol.md 2.4); NULL
 * otherwise. Valid until the result is freed. */
const char *il_result_metadata(const il_result *r);

/* Where a statement's time went, in nanoseconds: parsing, evaluating its rule programs,
 * proving its rows (`.why`, `.why_not`), and the rest (planning or finding the cached
 * plan, sorting and cutting the rows, a meta command's own work); total covers all four. */
typedef struct il_timing {
    uint64_t parse_ns, eval_ns, prove_ns, other_ns, total_ns;
} il_timing;
il_timing il_result_timing(const il_result *r);

/* For IL_STMT_SESSION_RULE: the head relation and the head's effective arity. */
const char *il_result_rule_head(const il_result *r, uint32_t *arity);
/* For IL_STMT_REL_SHOW: the relation name. */
const char *il_result_title(const il_result *r);

/* The text of a value as a table cell ("1", "2.5", "\"a\"", "null", "[1.0, 2.0]"), written
 * into buf (always NUL-terminated when cap > 0); returns the full length. */
size_t il_value_format(il_value v, char *buf, size_t cap);
/* True when the value is a number (right-aligned in tables, a JSON number on the wire). */
bool il_value_is_number(il_value v);

#ifdef __cplusplus
}
#endif

#endif
