/* Running a request's work with the engine lock held (srv_exec.c): a program, or opening
 * the session after authentication. Its frames go to the request's capture. */
#ifndef IL_SERVER_SRV_EXEC_H
#define IL_SERVER_SRV_EXEC_H

#include "server/server.h"

void srv_exec_run(srv_req *rq);
/* Whether a program is one .user or .apikey command: the identity store alone, run on
 * the loop thread so that ending a credential never waits for the engine. */
bool srv_exec_is_identity(const char *prog, size_t len);
/* The pool's `run` for requests. */
void srv_exec_job(srv_job *j);

#endif
