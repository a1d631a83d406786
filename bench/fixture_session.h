/* Connections of the benchmark fixtures (bench/fixtures.c, bench/fixture_first.c,
 * bench/views_fixture.c) to inputlayer-server over /ws: the command-line options naming
 * the server, opening and authenticating with an API key, creating the fixtures'
 * knowledge graph, running a program and waiting for its result while skipping the pushes
 * that every connection of a graph receives (notifications, notices), loading bulk
 * statements, and telling the frames apart. Also the clock and what /proc tells of the
 * server process (CPU time, memory). */
#ifndef IL_BENCH_FIXTURE_SESSION_H
#define IL_BENCH_FIXTURE_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ws_client.h"

enum { FX_OK = 0, FX_FAILED = 1, FX_USAGE = 2, FX_INVALID = 3 };

typedef struct fx_target {
    const char *host, *port, *api_key;
    int timeout_ms; /* per send and per receive */
} fx_target;

typedef enum fx_frame_kind {
    FX_FRAME_PUSH, /* a notification or a notice: not for the fixture */
    FX_FRAME_RESULT,
    FX_FRAME_ERROR,
    FX_FRAME_DELTA,
    FX_FRAME_SUBSCRIPTION_ERROR,
    FX_FRAME_UNKNOWN,
} fx_frame_kind;

/* ---- command line ---- */

/* Parses a decimal in [min, max]. */
bool fx_parse_long(const char *s, long min, long max, long *out);

/* The defaults: 127.0.0.1, a 60 s timeout, the API key from $INPUTLAYER_API_KEY. */
void fx_target_defaults(fx_target *t);

/* Takes `key value` when key is one of the options every fixture program has: --port,
 * --host, --api-key, --timeout-ms, --server-pid (into *server_pid). Returns 1 when taken,
 * 0 when key is not one of them, -1 for a bad value. */
int fx_target_arg(fx_target *t, pid_t *server_pid, const char *key, const char *value);

/* For a key that was not taken or had a bad value: reports it with the program's usage
 * on stderr and returns FX_USAGE. */
int fx_bad_arg(const char *prog, const char *key, const char *value, void (*usage)(FILE *f));
/* An option of one fixture: `--name N` with N in [min, max] into *num, or `--name TEXT`
 * into *text (an entry with neither is not offered). */
typedef struct fx_opt {
    const char *name;
    long min, max;
    long *num;
    const char **text;
} fx_opt;

/* Parses argv[2..] as `--key value` pairs: the options every fixture has
 * (fx_target_arg) and opts, then checks the target is complete. Returns FX_OK after
 * --help (the usage printed), FX_USAGE for a bad or missing argument (reported), and -1
 * to go on. */
int fx_parse_options(int argc, char **argv, const char *prog, fx_target *t, pid_t *server_pid,
                     const fx_opt *opts, size_t nopts, void (*usage)(FILE *f));

/* Whether the options every fixture program needs were given (--port, and --api-key or
 * $INPUTLAYER_API_KEY); says so on stderr when not. */
bool fx_target_complete(const char *prog, const fx_target *t);

/* ---- the clock ---- */

uint64_t fx_now_ns(void);
void fx_sleep_ns(uint64_t ns);

/* ---- connections and requests ---- */

/* Connects to /ws?kg=KG and authenticates. Returns the connection, or NULL with the
 * reason in why. */
ws_client *fx_open(const fx_target *t, const char *kg, char *why, size_t why_len);

/* Creates knowledge graph kg (from a connection to `default`, closed again) and opens a
 * connection to it into *ws. FX_OK, or FX_FAILED / FX_INVALID with the reason in why. */
int fx_create_graph(const fx_target *t, const char *kg, ws_client **ws, char *why, size_t why_len);

fx_frame_kind fx_classify(const json_t *frame);

/* The kind of a frame from its text, without building its JSON when it is a push (the
 * server writes "type" first): a connection of a graph with many writers reads one
 * notification per write. Anything else is parsed and returned in *frame (the caller
 * frees it; NULL for a push or text that is not JSON). */
fx_frame_kind fx_classify_text(const char *msg, size_t len, json_t **frame);

/* Sends execute{id, program} without waiting. FX_OK, or FX_FAILED with the reason. */
int fx_send_execute(ws_client *ws, const char *id, const char *program, char *why, size_t why_len);

/* Waits for the reply with that id, skipping pushes. The reply must be a `result` with no
 * statement errors and not truncated. On FX_OK the result is returned in *result (the
 * caller frees it; result may be NULL), and when at_ns is not NULL the time its frame was
 * read, before it was parsed (a big result takes the client a while to parse). Otherwise
 * FX_FAILED (connection) or FX_INVALID (a wrong reply), with the reason in why. */
int fx_await_result(ws_client *ws, const char *id, json_t **result, uint64_t *at_ns, char *why,
                    size_t why_len);

/* fx_await_result in two steps, for a caller that can check some replies from their text:
 * fx_await_frame waits for the next frame that is not a push and returns its text (valid
 * until the next read on ws) and when it was read; fx_result_of_text checks that text as
 * fx_await_result does and returns the result. */
int fx_await_frame(ws_client *ws, const char *id, const char **msg, size_t *len, uint64_t *at_ns,
                   char *why, size_t why_len);
int fx_result_of_text(const char *id, const char *msg, size_t len, json_t **result, char *why,
                      size_t why_len);

/* fx_send_execute, then fx_await_result. */
int fx_execute(ws_client *ws, const char *id, const char *program, json_t **result, char *why,
               size_t why_len);

/* N of a write's "Inserted N fact(s) into ..." message row, or -1 when the result is not
 * that message. */
long long fx_inserted_count(const json_t *result);

/* Runs bulk-insert statements one after another (a gg_stmt_fn: gen_graph.h), adding up
 * the facts the server reports it inserted. */
typedef struct fx_loader {
    ws_client *ws;
    long statements;
    size_t inserted;
    int status; /* FX_OK until a statement fails */
    char why[512];
} fx_loader;

int fx_load_statement(void *loader, const char *stmt, size_t len);

/* ---- the server process ---- */

/* The CPU time of every thread of process pid so far, in nanoseconds (the first field of
 * /proc/PID/task/TID/schedstat), or -1 when it cannot be read. */
int64_t fx_process_cpu_ns(pid_t pid);

/* Resident and peak resident memory (VmRSS, VmHWM of /proc/PID/status) in KiB; false
 * when they cannot be read. */
bool fx_process_memory_kb(pid_t pid, long *rss_kb, long *hwm_kb);

#endif
