/* The identity commands the server answers itself, before statements reach the engine:
 * .user, .apikey and .kg acl, with the original's exact texts. Each changes the identity
 * store, writes it to disk, and ends the credentials it invalidates. */
#ifndef IL_SERVER_SRV_ADMIN_H
#define IL_SERVER_SRV_ADMIN_H

#include "server/server.h"
#include "server/srv_authz.h"

/* A reply: an error, message lines, or a table whose rows are pre-rendered JSON arrays. */
typedef struct srv_admin_reply {
    const char *error_code; /* non-NULL: an error frame with `message` */
    char *message;
    char **lines;
    size_t nlines;
    const char *cols[6];
    size_t ncols; /* > 0: a table */
    char **rows;
    size_t nrows;
} srv_admin_reply;

/* Runs one .user / .apikey / .kg acl statement (already authorized) for connection c. */
void srv_admin_run(srv_conn *c, const srv_stmt *st, srv_admin_reply *out);
void srv_admin_reply_free(srv_admin_reply *r);

#endif
