/* A minimal blocking WebSocket client for the load generator: one TCP connection with
 * TCP_NODELAY and a per-call timeout, the RFC 6455 handshake (the accept key checked),
 * masked text frames out, and whole text messages in (fragments reassembled, pings
 * answered, pongs and binary messages skipped, a close frame reported as an error).
 * One thread per handle; nothing is shared between handles. */
#ifndef IL_BENCH_WS_CLIENT_H
#define IL_BENCH_WS_CLIENT_H

#include <stddef.h>

typedef struct ws_client ws_client;

/* Connects to host:port, upgrades `path_and_query` (e.g. "/ws?kg=perf"), and returns the
 * handle, or NULL with the reason in err. Every later send and receive gives up after
 * timeout_ms. */
ws_client *wsc_connect(const char *host, const char *port, const char *path_and_query,
                       int timeout_ms, char *err, size_t errlen);

/* Sends one text message as a single masked frame. Returns 0, or -1 (see wsc_error). */
int wsc_send_text(ws_client *c, const char *data, size_t len);

/* Waits for the next whole text message. On 0, *msg / *len point into the handle's
 * buffer and stay valid until the next call on the handle. Returns -1 on a timeout, a
 * closed connection, a close frame or a protocol error (see wsc_error). */
int wsc_recv_text(ws_client *c, const char **msg, size_t *len);

/* Waits up to timeout_ns for a message to begin: returns 1 when bytes are buffered or the
 * socket is readable (wsc_recv_text then reads the message, waiting for the rest of it),
 * 0 when the time ran out, -1 on an error (see wsc_error). Lets one thread both keep a
 * send schedule and read the replies of the same connection. */
int wsc_wait_readable(ws_client *c, long long timeout_ns);

/* The socket, for a poll() over many handles; and whether bytes of a message are already
 * received but not yet read (poll() would not report them). One thread reading many
 * connections waits on the sockets of those without buffered bytes, then reads each
 * ready one with wsc_recv_text. */
int wsc_fd(const ws_client *c);
int wsc_buffered(const ws_client *c);

/* Why the last call failed. */
const char *wsc_error(const ws_client *c);

/* Sends a close frame (best effort), closes the socket and frees the handle. NULL is
 * allowed. */
void wsc_close(ws_client *c);

#endif
