/* CORS and the WebSocket Origin check (srv_cors.h). The original answers CORS for the
 * listed origins (or any, with allow_all) and checks no Origin on /ws; a WebSocket is
 * exempt from CORS in browsers, so without a check any page a user visits could open one
 * to a server on their machine or network. The check here admits what CORS admits, plus
 * the server's own origin. */
#include <string.h>
#include <strings.h>

#include "server/server.h"
#include "server/srv_cors.h"

static bool configured(const srv_config *cfg) {
    return cfg->ncors_origins > 0 || cfg->cors_allow_all;
}

/* An origin a header may carry back: printable ASCII without spaces, bounded. */
static bool printable(const char *s, size_t n) {
    if (n == 0 || n > 512) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f) return false;
    return true;
}

/* Scheme and host compare without regard to case; a listed origin may end with '/'. */
static bool same_origin_text(const char *a, size_t alen, const char *b) {
    size_t blen = strlen(b);
    while (blen > 0 && b[blen - 1] == '/') blen--;
    return alen == blen && strncasecmp(a, b, alen) == 0;
}

static bool listed(const srv_config *cfg, const char *o, size_t n) {
    for (size_t i = 0; i < cfg->ncors_origins; i++)
        if (same_origin_text(o, n, cfg->cors_origins[i])) return true;
    return false;
}

/* What Access-Control-Allow-Origin says to this request: NULL for nothing, "*" with
 * allow_all and no list, else the request's own Origin when listed. */
static const char *allowed(const srv_conn *c) {
    const srv_config *cfg = c->srv->cfg;
    const char *o = c->origin.data;
    size_t n = c->origin.len;
    if (!c->has_origin || !printable(o, n)) return NULL;
    if (cfg->ncors_origins > 0) return listed(cfg, o, n) ? o : NULL;
    return cfg->cors_allow_all ? "*" : NULL;
}

void srv_cors_headers(const srv_conn *c, il_buf *h) {
    if (!configured(c->srv->cfg)) return;
    const char *a = allowed(c);
    if (a) il_buf_printf(h, "Access-Control-Allow-Origin: %s\r\n", a);
    il_buf_puts(h, "Vary: Origin\r\n");
}

/* Header names as a request lists them: tokens, commas and blanks only. */
static bool header_list(const char *s, size_t n) {
    if (n == 0 || n > 1024) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || strchr("-_.,! #$%&'*+^`|~", ch) != NULL;
        if (!ok || ch == 0) return false;
    }
    return true;
}

bool srv_cors_preflight(srv_conn *c) {
    if (!configured(c->srv->cfg) || !c->has_origin || !c->has_acr_method) return false;
    const char *a = allowed(c);
    il_buf h;
    il_buf_init(&h);
    if (!a) {
        static const char MSG[] = "Origin not allowed";
        il_buf_printf(&h,
                      "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nVary: Origin\r\nX-API-Version: v" SRV_VERSION
                      "\r\n%s\r\n%s",
                      sizeof MSG - 1, c->keep_alive ? "" : "Connection: close\r\n", MSG);
    } else {
        il_buf_printf(&h,
                      "HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: %s\r\n"
                      "Access-Control-Allow-Methods: GET, HEAD, POST, OPTIONS\r\n"
                      "Access-Control-Max-Age: 600\r\n",
                      a);
        if (header_list(c->acr_headers.data, c->acr_headers.len))
            il_buf_printf(&h, "Access-Control-Allow-Headers: %s\r\n", c->acr_headers.data);
        il_buf_printf(&h,
                      "Vary: Origin, Access-Control-Request-Method, "
                      "Access-Control-Request-Headers\r\nX-API-Version: v" SRV_VERSION "\r\n%s\r\n",
                      c->keep_alive ? "" : "Connection: close\r\n");
    }
    srv_conn_write(c, h.data, h.len);
    il_buf_free(&h);
    return true;
}

/* host[:port] with the scheme's default port dropped, into out. */
static bool authority(const char *s, size_t n, bool https, char *out, size_t cap) {
    if (n == 0 || n >= cap) return false;
    memcpy(out, s, n);
    out[n] = 0;
    const char *def = https ? ":443" : ":80";
    size_t dl = strlen(def);
    if (n > dl && strcmp(out + n - dl, def) == 0) out[n - dl] = 0;
    return true;
}

/* Origin "scheme://host[:port]" names the host the request was sent to (its Host). */
static bool same_origin(const srv_conn *c) {
    const char *o = c->origin.data;
    bool https;
    size_t skip;
    if (strncasecmp(o, "http://", 7) == 0) {
        https = false;
        skip = 7;
    } else if (strncasecmp(o, "https://", 8) == 0) {
        https = true;
        skip = 8;
    } else {
        return false;
    }
    char a[300], b[300];
    return authority(o + skip, c->origin.len - skip, https, a, sizeof a) &&
           authority(c->host.data ? c->host.data : "", c->host.len, https, b, sizeof b) &&
           strcasecmp(a, b) == 0;
}

bool srv_cors_ws_allowed(const srv_conn *c) {
    const srv_config *cfg = c->srv->cfg;
    if (!c->has_origin) return true; /* not sent by a browser */
    if (cfg->ncors_origins == 0 && cfg->cors_allow_all) return true;
    if (!printable(c->origin.data, c->origin.len)) return false;
    return same_origin(c) || listed(cfg, c->origin.data, c->origin.len);
}
