/* The web client's files (http.gui): GET and HEAD of any path the server's own routes
 * leave free are answered from http.gui.static_dir, with client routes falling back to
 * index.html, validators (ETag, Last-Modified) and caching headers. No request names a
 * file outside the directory: the decoded path may hold no `.`/`..` segment, NUL,
 * backslash or control byte, and the file it resolves to (symbolic links followed) must
 * lie inside the directory's own resolved path. */
#ifndef IL_SERVER_SRV_STATIC_H
#define IL_SERVER_SRV_STATIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "server/srv_config.h"

struct srv_conn;
typedef struct srv_static srv_static;

/* A file over this is sent from a read-only mapping of it (page cache, shared by every
 * request for it) instead of a copy read into the response. */
#define SRV_STATIC_COPY_MAX (256u * 1024)
/* Address space all responses in progress may map at once; a request past it is
 * answered 503 (the pages are the page cache's; this bounds what slow readers hold). */
#define SRV_STATIC_MAPPED_MAX ((uint64_t)1 << 30)

/* The resolved directory when cfg enables the GUI and it exists (a line on `log` says
 * so); NULL otherwise, with a warning on `log` when it was enabled but is missing. */
srv_static *srv_static_open(const srv_config *cfg, FILE *log);
/* After the loop ended: every response's mapping is released by then. */
void srv_static_close(srv_static *st);
/* Whether a path (as in the URL, before `?`) is one the static files may answer: not
 * /ws, /health, /live, /ready, /metrics..., /api/... or /v1/... . */
bool srv_static_claims(const char *path, size_t len);
/* Answers GET (or HEAD, without the body) of path. */
void srv_static_serve(struct srv_conn *c, srv_static *st, const char *path, size_t len, bool head);

#endif
