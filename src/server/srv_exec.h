/* Running a request's work with the engine lock held (srv_exec.c): a program, or opening
 * the session after authentication. Its frames go to the request's capture. */
#ifndef IL_SERVER_SRV_EXEC_H
#define IL_SERVER_SRV_EXEC_H

#include "server/server.h"

void srv_exec_run(srv_req *rq);
/* What a program is, from one pass over its statements: read_only, made of queries only
 * (the protocol's shared class); identity, one .user or .apikey command (the identity
 * store alone, run on the loop thread so that ending a credential never waits for the
 * engine). */
void srv_exec_classify(const char *prog, size_t len, bool *read_only, bool *identity);
/* The pool's `run` for requests. */
void srv_exec_job(srv_job *j);

#endif
