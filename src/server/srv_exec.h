/* Running a request's work with the engine lock held (srv_exec.c): a program, or opening
 * the session after authentication. Its frames go to the request's capture. */
#ifndef IL_SERVER_SRV_EXEC_H
#define IL_SERVER_SRV_EXEC_H

#include "server/server.h"

void srv_exec_run(srv_req *rq);
/* The pool's `run` for requests. */
void srv_exec_job(srv_job *j);

#endif
