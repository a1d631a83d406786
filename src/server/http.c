/* HTTP/1.1 on the server port (http-parser): the health endpoints, /metrics, and the
 * WebSocket upgrade of /ws with its connection limits and Origin check; the per-address
 * request rate; CORS preflights; and the web client's files for the paths left over.
 * Routes also answer under /v1. */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json_str.h"
#include "server/server.h"
#include "server/srv_cors.h"
#include "server/srv_static.h"

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

void srv_http_respond(srv_conn *c, int status, const char *reason, const char *ctype,
                      const char *body, size_t len) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(
        &b, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nX-API-Version: v" SRV_VERSION "\r\n%s%s%s%s",
        status, reason, len, ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "",
        c->keep_alive ? "" : "Connection: close\r\n");
    srv_cors_headers(c, &b);
    il_buf_puts(&b, "\r\n");
    il_buf_put(&b, body, len);
    srv_conn_write(c, b.data, b.len);
    il_buf_free(&b);
}

static void respond_json(srv_conn *c, int status, const char *reason, il_buf *body) {
    srv_http_respond(c, status, reason, "application/json", body->data ? body->data : "",
                     body->len);
}

void srv_http_not_found(srv_conn *c) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b,
                "{\"success\":false,\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"Not found\"}}");
    respond_json(c, 404, "Not Found", &b);
    il_buf_free(&b);
}

static void upgrade(srv_conn *c) {
    if (!c->upgrade_ok || !c->ws_key.data) {
        const char *msg = "Expected a WebSocket upgrade";
        c->keep_alive = false;
        srv_http_respond(c, 400, "Bad Request", "text/plain; charset=utf-8", msg, strlen(msg));
        srv_conn_close(c);
        return;
    }
    if (!c->ws_version_13) {
        /* RFC 6455 4.4: the versions served go back in the header. */
        static const char MSG[] = "Unsupported WebSocket version: only 13 is served";
        il_buf b;
        il_buf_init(&b);
        il_buf_printf(&b,
                      "HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n"
                      "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                      "X-API-Version: v" SRV_VERSION "\r\nConnection: close\r\n\r\n%s",
                      sizeof MSG - 1, MSG);
        srv_conn_write(c, b.data, b.len);
        il_buf_free(&b);
        c->keep_alive = false;
        srv_conn_close(c);
        return;
    }
    il_buf k;
    il_buf_init(&k);
    il_buf_printf(&k, "%s%s", c->ws_key.data, WS_GUID);
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)k.data, k.len, sha);
    il_buf_free(&k);
    char accept[64];
    EVP_EncodeBlock((unsigned char *)accept, sha, SHA_DIGEST_LENGTH);
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b,
                  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: "
                  "Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                  accept);
    srv_conn_write(c, b.data, b.len);
    il_buf_free(&b);
    /* From here on the connection counts as a WebSocket, not as an HTTP connection. */
    srv_server *s = c->srv;
    if (c->counted_http) s->nhttp--;
    c->counted_http = false;
    srv_peer_conn_release(c);
    s->nws++;
    c->counted_ws = true;
    if (!srv_ws_start(c)) srv_conn_close(c);
}

static void plain(srv_conn *c, int status, const char *reason, const char *msg) {
    srv_http_respond(c, status, reason, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* The limits checked before an upgrade: WebSocket connections in all, and
 * unauthenticated ones per client address. */
static bool ws_admitted(srv_conn *c) {
    srv_server *s = c->srv;
    int64_t limit = s->cfg->max_ws_connections;
    if (limit > 0 && s->nws >= (uint64_t)limit) {
        s->counters.rejections[SRV_REJ_WS_CONNECTIONS]++;
        il_buf b;
        il_buf_init(&b);
        il_buf_puts(&b, "{\"success\":false,\"error\":{\"code\":\"SERVICE_UNAVAILABLE\","
                        "\"message\":\"Too many WebSocket connections\"}}");
        respond_json(c, 503, "Service Unavailable", &b);
        il_buf_free(&b);
        return false;
    }
    if (!srv_preauth_take(c)) {
        s->counters.rejections[SRV_REJ_WS_PREAUTH]++;
        plain(c, 429, "Too Many Requests", "Too many unauthenticated WebSocket connections");
        return false;
    }
    return true;
}

bool srv_http_ws_query(srv_conn *c, const char *q) {
    snprintf(c->kg, sizeof c->kg, "default");
    c->kg_too_long = false;
    bool bad_seq = false;
    for (const char *t = q; *t;) {
        size_t n = strcspn(t, "&");
        if (n > 3 && strncmp(t, "kg=", 3) == 0) {
            /* A name too long to be a graph's is refused after authentication, as an
             * unknown graph is (not replaced by `default`). */
            c->kg_too_long = n - 3 >= sizeof c->kg;
            size_t k = c->kg_too_long ? sizeof c->kg - 1 : n - 3;
            memcpy(c->kg, t + 3, k);
            c->kg[k] = 0;
        } else if (n >= 9 && strncmp(t, "last_seq=", 9) == 0) {
            char digits[24];
            size_t dn = n - 9;
            bad_seq = dn == 0 || dn >= sizeof digits || strspn(t + 9, "0123456789") < dn;
            if (!bad_seq) {
                memcpy(digits, t + 9, dn);
                digits[dn] = 0;
                errno = 0;
                c->cursor_seq = strtoull(digits, NULL, 10);
                bad_seq = errno != 0;
                c->has_cursor = !bad_seq;
            }
        } else if (n > 6 && strncmp(t, "epoch=", 6) == 0 && n - 6 < sizeof c->cursor_epoch) {
            memcpy(c->cursor_epoch, t + 6, n - 6);
            c->cursor_epoch[n - 6] = 0;
        }
        t += n;
        if (*t == '&') t++;
    }
    return !bad_seq;
}

/* The path without the query string and without a leading /v1. */
static void route(srv_conn *c) {
    const char *url = c->url.data ? c->url.data : "/";
    size_t plen = strcspn(url, "?");
    char path[256];
    if (plen >= sizeof path) plen = sizeof path - 1;
    memcpy(path, url, plen);
    path[plen] = 0;
    const char *p = path;
    if (strncmp(p, "/v1/", 4) == 0) p += 3;
    bool get = c->parser.method == HTTP_GET || c->parser.method == HTTP_HEAD;
    /* Health probes are exempt from the per-address rate: refusing the orchestrator's
     * liveness probe during a flood would get a healthy server restarted. */
    bool probe =
        get && (strcmp(p, "/health") == 0 || strcmp(p, "/live") == 0 || strcmp(p, "/ready") == 0);
    if (!probe && c->probes_only) {
        c->srv->counters.rejections[SRV_REJ_HTTP_CONNECTIONS]++;
        c->keep_alive = false;
        plain(c, 503, "Service Unavailable", "Too many connections");
        return;
    }
    if (!probe && !srv_rate_http(c)) {
        c->srv->counters.rejections[SRV_REJ_PER_IP_RATE]++;
        plain(c, 429, "Too Many Requests", "Rate limit exceeded");
        return;
    }
    if (get && strcmp(p, "/ws") == 0) {
        const char *q = url[plen] == '?' ? url + plen + 1 : "";
        bool bad_seq = !srv_http_ws_query(c, q);
        if (bad_seq)
            plain(c, 400, "Bad Request", "Invalid last_seq: expected an unsigned integer");
        else if (!srv_cors_ws_allowed(c)) {
            c->srv->counters.rejections[SRV_REJ_WS_ORIGIN]++;
            plain(c, 403, "Forbidden", "Origin not allowed");
        } else if (ws_admitted(c))
            upgrade(c);
    } else if (get && strcmp(p, "/health") == 0) {
        il_buf b;
        il_buf_init(&b);
        /* Reads are still served when writes are not: degraded, not down (still 200). */
        const char *problem = il_engine_storage_problem(c->srv->engine);
        il_buf_printf(&b, "{\"success\":true,\"data\":{\"status\":\"%s\",",
                      problem ? "degraded" : "healthy");
        if (problem) {
            il_buf_puts(&b, "\"reason\":");
            il_json_str(&b, problem, strlen(problem));
            il_buf_putc(&b, ',');
        }
        il_buf_printf(&b, "\"version\":\"" SRV_VERSION "\",\"uptime_secs\":%llu}}",
                      (unsigned long long)((srv_now_ms() - c->srv->started_ms) / 1000));
        respond_json(c, 200, "OK", &b);
        il_buf_free(&b);
    } else if (get && (strcmp(p, "/live") == 0 || strcmp(p, "/ready") == 0)) {
        srv_http_respond(c, 200, "OK", NULL, "", 0);
    } else if (get && strcmp(p, "/metrics") == 0) {
        srv_metrics_json(c);
    } else if (get && strcmp(p, "/metrics/prometheus") == 0) {
        srv_metrics_prometheus(c);
    } else if (c->parser.method == HTTP_OPTIONS && srv_cors_preflight(c)) {
        /* answered */
    } else if (get && c->srv->gui && srv_static_claims(url, plen)) {
        srv_static_serve(c, c->srv->gui, url, plen, c->parser.method == HTTP_HEAD);
    } else {
        srv_http_not_found(c);
    }
}

static int on_url(http_parser *p, const char *at, size_t len) {
    srv_conn *c = p->data;
    il_buf_put(&c->url, at, len);
    return 0;
}

/* A header value kept whole: a NUL in it is part of what is compared (it matches no
 * origin or tag), not where it ends. */
static void set_header(il_buf *b, const char *v, size_t len) {
    il_buf_clear(b);
    il_buf_put(b, v, len);
    if (!b->data) il_buf_puts(b, "");
}

static void header_done(srv_conn *c) {
    if (!c->hname.data || !c->hval_started) return;
    const char *n = c->hname.data, *v = c->hval.data ? c->hval.data : "";
    if (strcasecmp(n, "Sec-WebSocket-Key") == 0) {
        il_buf_clear(&c->ws_key);
        il_buf_puts(&c->ws_key, v);
    } else if (strcasecmp(n, "Upgrade") == 0 && strcasecmp(v, "websocket") == 0) {
        c->upgrade_ok = true;
    } else if (strcasecmp(n, "Sec-WebSocket-Version") == 0) {
        c->ws_version_13 = strcmp(v, "13") == 0;
    } else if (strcasecmp(n, "Authorization") == 0) {
        il_buf_clear(&c->auth_hdr);
        il_buf_puts(&c->auth_hdr, v);
    } else if (strcasecmp(n, "X-Forwarded-For") == 0) {
        il_buf_clear(&c->forwarded_for);
        il_buf_puts(&c->forwarded_for, v);
    } else if (strcasecmp(n, "X-Real-IP") == 0) {
        il_buf_clear(&c->real_ip);
        il_buf_puts(&c->real_ip, v);
    } else if (strcasecmp(n, "Origin") == 0) {
        set_header(&c->origin, v, c->hval.len);
        c->has_origin = true;
    } else if (strcasecmp(n, "Host") == 0) {
        set_header(&c->host, v, c->hval.len);
    } else if (strcasecmp(n, "Access-Control-Request-Method") == 0) {
        set_header(&c->acr_method, v, c->hval.len);
        c->has_acr_method = true;
    } else if (strcasecmp(n, "Access-Control-Request-Headers") == 0) {
        set_header(&c->acr_headers, v, c->hval.len);
    } else if (strcasecmp(n, "If-None-Match") == 0) {
        set_header(&c->if_none_match, v, c->hval.len);
    } else if (strcasecmp(n, "If-Modified-Since") == 0) {
        set_header(&c->if_modified_since, v, c->hval.len);
    }
    il_buf_clear(&c->hname);
    il_buf_clear(&c->hval);
    c->hval_started = false;
}

static int on_header_field(http_parser *p, const char *at, size_t len) {
    srv_conn *c = p->data;
    if (c->hval_started) header_done(c);
    il_buf_put(&c->hname, at, len);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len) {
    srv_conn *c = p->data;
    c->hval_started = true;
    il_buf_put(&c->hval, at, len);
    return 0;
}

static int on_headers_complete(http_parser *p) {
    srv_conn *c = p->data;
    header_done(c);
    srv_timer_start(c, SRV_HTTP_IDLE_MS); /* the body, if any */
    return 0;
}

static int on_message_begin(http_parser *p) {
    srv_conn *c = p->data;
    il_buf_clear(&c->url);
    il_buf_clear(&c->ws_key);
    il_buf_clear(&c->auth_hdr);
    il_buf_clear(&c->forwarded_for);
    il_buf_clear(&c->real_ip);
    il_buf_clear(&c->origin);
    il_buf_clear(&c->host);
    il_buf_clear(&c->acr_method);
    il_buf_clear(&c->acr_headers);
    il_buf_clear(&c->if_none_match);
    il_buf_clear(&c->if_modified_since);
    c->has_origin = c->has_acr_method = false;
    c->upgrade_ok = false;
    c->ws_version_13 = false;
    /* The headers get http.request_header_timeout_ms from the request's first byte. */
    srv_timer_start(c, (uint64_t)c->srv->cfg->header_timeout_ms);
    return 0;
}

static int on_message_complete(http_parser *p) {
    srv_conn *c = p->data;
    c->keep_alive = http_should_keep_alive(p) && !p->upgrade && !c->probes_only;
    srv_client_ip(c);
    srv_timer_start(c, SRV_HTTP_IDLE_MS);
    route(c);
    if (c->state == SRV_HTTP && !c->keep_alive) srv_conn_close(c);
    /* After an upgrade the parser stops by itself: the bytes that follow are frames. */
    return 0;
}

static const http_parser_settings SETTINGS = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_message_complete = on_message_complete,
};

void srv_http_init(srv_conn *c) {
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
}

void srv_http_feed(srv_conn *c, const char *data, size_t len) {
    size_t n = http_parser_execute(&c->parser, &SETTINGS, data, len);
    if (c->state == SRV_WS) {
        if (n < len) srv_ws_feed(c, data + n, len - n);
        return;
    }
    if (c->state == SRV_HTTP && HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
        const char *msg = "Bad request";
        c->keep_alive = false;
        srv_http_respond(c, 400, "Bad Request", "text/plain; charset=utf-8", msg, strlen(msg));
        srv_conn_close(c);
    }
}
