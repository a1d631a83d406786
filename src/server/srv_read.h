/* Snapshot reads (the protocol v5 `read` frame, protocol-later.md 1.3, 1.4, 1.11): named
 * queries over the connection's knowledge graph as stored (persistent rules and stored
 * facts; the session's own facts and rules take no part), every one taken at the same
 * revision of the graph (srv_revision.h) and answered together by one `snapshot`, or, over
 * 1 MiB, by `snapshot_start`, `snapshot_chunk`s and `snapshot_end`. A read fails as a
 * whole: when one query is refused none runs, and when one fails nothing else is sent. */
#ifndef IL_SERVER_SRV_READ_H
#define IL_SERVER_SRV_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

/* Packs a read frame's `queries` (an array of {name, query} objects) into *packed
 * (malloc'ed, *len bytes: per query, in order, its name and its text, each NUL-terminated), the
 * request's program. False with err (the `invalid_request` message) when the array or a
 * member is malformed; an empty array packs to nothing and is refused when the read runs. */
bool srv_read_pack(json_t *queries, char **packed, size_t *len, char *err, size_t errlen);
/* Runs a read request in its job (engine lock held, or its session pinned): checks,
 * evaluation, the reply. */
void srv_read_run(srv_req *rq);
/* Engine lock held: whether none of the read's queries would make a maintained view
 * (il_prepared_pinnable), so that it may run pinned. Prepares them for srv_read_run. */
bool srv_read_pinnable(srv_req *rq);

#endif
