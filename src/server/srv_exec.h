/* Running a request's work with the engine lock held (srv_exec.c): a program, a read
 * (srv_read.h), or opening the session after authentication. Its frames go to the
 * request's capture. */
#ifndef IL_SERVER_SRV_EXEC_H
#define IL_SERVER_SRV_EXEC_H

#include "server/server.h"
#include "server/srv_authz.h"

void srv_exec_run(srv_req *rq);
/* A program's statements, prepared once (il_prepare: split and parsed); NULL when it has
 * none. They share one il_prepared, which srv_exec_free_stmts frees. */
srv_stmt *srv_exec_split(const char *prog, size_t len, size_t *n);
void srv_exec_free_stmts(srv_stmt *sts, size_t n);
/* What a program is, from its statements: read_only, made of queries only (the
 * protocol's shared class); identity, one .user or .apikey command (the identity store
 * alone, run on the loop thread so that ending a credential never waits for the
 * engine); fact_writes (may be NULL), made of inserts and deletes of given facts only
 * (cheap: the loop may run them inline). */
void srv_exec_classify(const srv_stmt *sts, size_t n, bool *read_only, bool *identity,
                       bool *fact_writes);
/* The pool's `run` for requests. */
void srv_exec_job(srv_job *j);
/* Whether a request reads only and may run on a pinned session beside writers (docs/
 * server.md, "Reads beside writes"): a program of queries or a `read`, with no
 * expect_revision (checked against the live revision). */
bool srv_exec_pinnable(const srv_req *rq);
/* The pool's `pin` and `unpin` for those. */
bool srv_exec_pin(srv_job *j);
/* The job's pin_published: a pinnable read pins the revision a write published, and
 * notes that revision (engine lock busy, not held). */
bool srv_exec_pin_published(srv_job *j);
void srv_exec_unpin(srv_job *j);

/* For the request kinds that run statements (srv_read.c too), in their job: */
/* False when the connection's credential ended: the request then closes the connection
 * with the credential's notice instead of answering. */
bool srv_exec_credential_ok(srv_req *rq);
/* Runs one statement on the connection's session under the request's guards (cancel,
 * deadline, memory, the inline budget): statement i of p, prepared, as il_execute runs it,
 * or with `stored` as il_query_stored does, cut to max_result_rows. NULL when the request
 * stopped (its reply is then the stop's error) or overran its inline budget and must run
 * again on the pool. */
il_result *srv_exec_guarded(srv_req *rq, const il_prepared *p, size_t i, bool stored);
/* The error code of a statement that failed, from its message. */
const char *srv_exec_error_code(const char *msg);

#endif
