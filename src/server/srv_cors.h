/* Cross-origin access (http.cors_origins, http.cors_allow_all): the CORS headers of HTTP
 * responses, preflight OPTIONS requests, and the Origin check of WebSocket upgrades, which
 * browsers do not subject to CORS and which therefore admits the same origins: no Origin
 * (not a browser), the server's own origin, a listed one, or any with allow_all. */
#ifndef IL_SERVER_SRV_CORS_H
#define IL_SERVER_SRV_CORS_H

#include <stdbool.h>

#include "base/buf.h"

struct srv_conn;

/* Appends to h the CORS header lines for the request's Origin: `Access-Control-Allow-
 * Origin` (the origin when listed, `*` with allow_all) and `Vary: Origin` whenever CORS
 * is configured; nothing when it is not. */
void srv_cors_headers(const struct srv_conn *c, il_buf *h);
/* An OPTIONS request: answers it as a preflight and returns true, or returns false when
 * CORS is off or it is not a preflight (no Origin or Access-Control-Request-Method). */
bool srv_cors_preflight(struct srv_conn *c);
/* Whether a WebSocket upgrade from the request's Origin may proceed. */
bool srv_cors_ws_allowed(const struct srv_conn *c);

#endif
