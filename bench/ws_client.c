/* The blocking WebSocket client of the load generator; see ws_client.h. Written by hand
 * rather than on wslay so that a request costs the client two system calls and no
 * allocation: the client shares the machine's cores with the server it measures. */
#include "ws_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum {
    OP_CONTINUATION = 0x0,
    OP_TEXT = 0x1,
    OP_BINARY = 0x2,
    OP_CLOSE = 0x8,
    OP_PING = 0x9,
    OP_PONG = 0xA,
    NO_MESSAGE = -1,
    READ_CHUNK = 65536,
    MAX_HANDSHAKE_BYTES = 16384,
    /* The benchmark's replies are small; a larger one means something is wrong. */
    MAX_MESSAGE_BYTES = 64 << 20,
    CLOSE_DRAIN_MS = 1000,
};

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

typedef struct bytes {
    char *p;
    size_t len, cap;
} bytes;

struct ws_client {
    int fd;
    int timeout_ms;
    bytes in;            /* received bytes; those before in_pos are consumed */
    size_t in_pos;       /* in_pos <= in.len */
    bytes fragments;     /* the payload so far of a fragmented message */
    int fragments_op;    /* OP_TEXT or OP_BINARY while a fragmented message is open, else
                            NO_MESSAGE */
    bytes out;           /* the frame being sent */
    bool upgraded;       /* the handshake succeeded: frames may be sent */
    bool closed_by_peer; /* a close frame came: no close frame goes back */
    uint64_t mask_rng;   /* xorshift64 state, never 0 */
    char err[256];
};

static int bytes_reserve(bytes *b, size_t more) {
    if (b->cap - b->len >= more) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

__attribute__((format(printf, 2, 3))) static int fail(ws_client *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_io(ws_client *c, const char *doing, int err) {
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS)
        return fail(c, "%s: no progress in %d ms", doing, c->timeout_ms);
    return fail(c, "%s: %s", doing, strerror(err));
}

static int send_all(ws_client *c, const char *p, size_t n) {
    while (n) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return fail_io(c, "sending", errno);
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Appends what one recv() gives to c->in. */
static int recv_more(ws_client *c) {
    if (c->in_pos == c->in.len) {
        c->in.len = c->in_pos = 0;
    } else if (c->in_pos > 0 && c->in.cap - c->in.len < READ_CHUNK) {
        memmove(c->in.p, c->in.p + c->in_pos, c->in.len - c->in_pos);
        c->in.len -= c->in_pos;
        c->in_pos = 0;
    }
    if (bytes_reserve(&c->in, READ_CHUNK) != 0) return fail(c, "out of memory");
    ssize_t k;
    do k = recv(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len, 0);
    while (k < 0 && errno == EINTR);
    if (k == 0) return fail(c, "the peer closed the connection");
    if (k < 0) return fail_io(c, "waiting for the peer", errno);
    c->in.len += (size_t)k;
    return 0;
}

/* Masking keys only have to vary from frame to frame (they protect proxies that are not
 * on this path); a system call per frame for them would distort the client's cost. */
static uint32_t next_mask(ws_client *c) {
    uint64_t x = c->mask_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->mask_rng = x;
    return (uint32_t)(x >> 16);
}

static int send_frame(ws_client *c, int opcode, const char *data, size_t len) {
    if (bytes_reserve(&c->out, 14 + len) != 0) return fail(c, "out of memory");
    unsigned char *f = (unsigned char *)c->out.p;
    size_t h = 0;
    f[h++] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        f[h++] = (unsigned char)(0x80 | len);
    } else if (len <= 0xFFFF) {
        f[h++] = 0x80 | 126;
        f[h++] = (unsigned char)(len >> 8);
        f[h++] = (unsigned char)len;
    } else {
        f[h++] = 0x80 | 127;
        for (int shift = 56; shift >= 0; shift -= 8)
            f[h++] = (unsigned char)((uint64_t)len >> shift);
    }
    uint32_t m = next_mask(c);
    unsigned char key[4] = {(unsigned char)(m >> 24), (unsigned char)(m >> 16),
                            (unsigned char)(m >> 8), (unsigned char)m};
    memcpy(f + h, key, 4);
    h += 4;
    for (size_t i = 0; i < len; i++) f[h + i] = (unsigned char)data[i] ^ key[i & 3];
    return send_all(c, c->out.p, h + len);
}

/* The next whole frame: its payload points into c->in until the next recv_more(). */
static int next_frame(ws_client *c, bool *fin, int *opcode, const char **payload, size_t *len) {
    for (;;) {
        const unsigned char *h = (const unsigned char *)c->in.p + c->in_pos;
        size_t avail = c->in.len - c->in_pos;
        if (avail >= 2) {
            if (h[1] & 0x80) return fail(c, "the server sent a masked frame (RFC 6455 5.1)");
            if (h[0] & 0x70) return fail(c, "a frame has reserved bits set (no extension)");
            uint64_t n = h[1] & 0x7F;
            size_t head = n == 126 ? 4 : n == 127 ? 10 : 2;
            if (avail >= head) {
                /* A 16-bit length of 127 is a length, not the 64-bit marker. */
                if (n == 126)
                    n = (uint64_t)h[2] << 8 | h[3];
                else if (n == 127)
                    for (int i = 2, k = 0; k < 8; i++, k++) n = n << 8 | h[i];
                if (n > MAX_MESSAGE_BYTES)
                    return fail(c, "a frame of %llu bytes (over %d)", (unsigned long long)n,
                                MAX_MESSAGE_BYTES);
                if (avail - head >= n) {
                    *fin = h[0] & 0x80;
                    *opcode = h[0] & 0x0F;
                    *payload = (const char *)h + head;
                    *len = (size_t)n;
                    c->in_pos += head + (size_t)n;
                    return 0;
                }
            }
        }
        if (recv_more(c) != 0) return -1;
    }
}

static int close_frame_error(ws_client *c, const char *p, size_t n) {
    unsigned code = n >= 2 ? (unsigned)(unsigned char)p[0] << 8 | (unsigned char)p[1] : 1005;
    int reason = n > 2 ? (int)(n - 2) : 0;
    return fail(c, "the server closed the WebSocket (code %u%s%.*s)", code, reason ? ": " : "",
                reason, p + 2);
}

/* Adds a fragment to the open message; on its last fragment, a text message is
 * returned through msg/len (1), anything else is dropped (0). */
static int add_fragment(ws_client *c, bool fin, const char *p, size_t n, const char **msg,
                        size_t *len) {
    if (c->fragments.len + n > MAX_MESSAGE_BYTES)
        return fail(c, "a message over %d bytes", MAX_MESSAGE_BYTES);
    if (bytes_reserve(&c->fragments, n + 1) != 0) return fail(c, "out of memory");
    memcpy(c->fragments.p + c->fragments.len, p, n);
    c->fragments.len += n;
    if (!fin) return 0;
    int was = c->fragments_op;
    c->fragments_op = NO_MESSAGE;
    if (was != OP_TEXT) return 0;
    *msg = c->fragments.p;
    *len = c->fragments.len;
    return 1;
}

int wsc_recv_text(ws_client *c, const char **msg, size_t *len) {
    for (;;) {
        bool fin = false;
        int op = 0, got = 0;
        const char *p = NULL;
        size_t n = 0;
        if (next_frame(c, &fin, &op, &p, &n) != 0) return -1;
        switch (op) {
        case OP_PING:
            if (send_frame(c, OP_PONG, p, n) != 0) return -1;
            break;
        case OP_PONG:
            break;
        case OP_CLOSE:
            c->closed_by_peer = true;
            return close_frame_error(c, p, n);
        case OP_TEXT:
        case OP_BINARY:
            if (c->fragments_op != NO_MESSAGE)
                return fail(c, "a new message began inside a fragmented one");
            if (fin && op == OP_TEXT) {
                *msg = n ? p : "";
                *len = n;
                return 0;
            }
            if (fin) break;
            c->fragments_op = op;
            c->fragments.len = 0;
            got = add_fragment(c, fin, p, n, msg, len);
            break;
        case OP_CONTINUATION:
            if (c->fragments_op == NO_MESSAGE)
                return fail(c, "a continuation frame outside a message");
            got = add_fragment(c, fin, p, n, msg, len);
            break;
        default:
            return fail(c, "a frame with the unknown opcode %d", op);
        }
        if (got != 0) return got < 0 ? -1 : 0;
    }
}

int wsc_send_text(ws_client *c, const char *data, size_t len) {
    return send_frame(c, OP_TEXT, data, len);
}

int wsc_wait_readable(ws_client *c, long long timeout_ns) {
    if (c->in_pos < c->in.len) return 1;
    if (timeout_ns < 0) timeout_ns = 0;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000),
                          .tv_nsec = (long)(timeout_ns % 1000000000)};
    int rc;
    do rc = ppoll(&p, 1, &ts, NULL);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) return fail_io(c, "waiting for the peer", errno);
    return rc > 0;
}

int wsc_fd(const ws_client *c) {
    return c->fd;
}

int wsc_buffered(const ws_client *c) {
    return c->in_pos < c->in.len;
}

const char *wsc_error(const ws_client *c) {
    return c->err;
}

static void set_timeouts(int fd, int ms) {
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* On Linux the send timeout also bounds connect(). */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int dial(ws_client *c, const char *host, const char *port) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) return fail(c, "cannot resolve %s: %s", host, gai_strerror(rc));
    int err = 0;
    for (struct addrinfo *a = res; a && c->fd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        set_timeouts(fd, c->timeout_ms);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            c->fd = fd;
        } else {
            err = errno;
            close(fd);
        }
    }
    freeaddrinfo(res);
    if (c->fd < 0) {
        char doing[300];
        snprintf(doing, sizeof doing, "connecting to %s:%s", host, port);
        return fail_io(c, doing, err);
    }
    /* Small request and reply frames: Nagle would hold them back. */
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

/* The value of header `name` in a response head (NUL-terminated), trimmed, or NULL. */
static const char *header_value(const char *head, const char *name, size_t *len) {
    size_t nl = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line; line = strstr(line, "\r\n")) {
        line += 2;
        if (strncasecmp(line, name, nl) != 0 || line[nl] != ':') continue;
        const char *v = line + nl + 1;
        while (*v == ' ' || *v == '\t') v++;
        const char *end = strstr(v, "\r\n");
        while (end > v && (end[-1] == ' ' || end[-1] == '\t')) end--;
        *len = (size_t)(end - v);
        return v;
    }
    return NULL;
}

static int handshake(ws_client *c, const char *host, const char *port, const char *path) {
    unsigned char nonce[16];
    if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        return fail(c, "getrandom: %s", strerror(errno));
    char key[32];
    EVP_EncodeBlock((unsigned char *)key, nonce, sizeof nonce);
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n",
                     path, host, port, key);
    if (n < 0 || (size_t)n >= sizeof req) return fail(c, "the URL is too long");
    if (send_all(c, req, (size_t)n) != 0) return -1;
    const char *end;
    for (;;) {
        if (recv_more(c) != 0) return -1;
        end = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
        if (end) break;
        if (c->in.len > MAX_HANDSHAKE_BYTES) return fail(c, "the upgrade response has no end");
    }
    size_t head_len = (size_t)(end + 4 - c->in.p);
    char *head = strndup(c->in.p, head_len);
    if (!head) return fail(c, "out of memory");
    int status = 0, rc = 0;
    size_t accept_len = 0;
    const char *accept = header_value(head, "Sec-WebSocket-Accept", &accept_len);
    if (sscanf(head, "HTTP/1.%*d %d", &status) != 1 || status != 101) {
        rc = fail(c, "the upgrade of %s was refused: %.*s", path, (int)strcspn(head, "\r\n"), head);
    } else {
        char expected_src[128];
        snprintf(expected_src, sizeof expected_src, "%s%s", key, WS_GUID);
        unsigned char sha[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)expected_src, strlen(expected_src), sha);
        char expected[64];
        int elen = EVP_EncodeBlock((unsigned char *)expected, sha, SHA_DIGEST_LENGTH);
        if (!accept || accept_len != (size_t)elen || memcmp(accept, expected, accept_len) != 0)
            rc = fail(c, "the upgrade response has a wrong Sec-WebSocket-Accept");
    }
    free(head);
    c->in_pos = head_len; /* what follows the head are frames */
    c->upgraded = rc == 0;
    return rc;
}

ws_client *wsc_connect(const char *host, const char *port, const char *path_and_query,
                       int timeout_ms, char *err, size_t errlen) {
    ws_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = -1;
    c->timeout_ms = timeout_ms;
    c->fragments_op = NO_MESSAGE;
    if (getrandom(&c->mask_rng, sizeof c->mask_rng, 0) != (ssize_t)sizeof c->mask_rng ||
        c->mask_rng == 0)
        c->mask_rng = 0x9E3779B97F4A7C15ULL;
    if (dial(c, host, port) != 0 || handshake(c, host, port, path_and_query) != 0) {
        snprintf(err, errlen, "%s", c->err);
        wsc_close(c);
        return NULL;
    }
    return c;
}

/* Says goodbye properly: a close frame, then reading until the server closes too, so
 * that neither side's last bytes are lost to a reset. Bounded: a hung server costs at
 * most a few CLOSE_DRAIN_MS. */
static void close_politely(ws_client *c) {
    static const char NORMAL_CLOSURE[2] = {0x03, (char)0xE8};
    set_timeouts(c->fd, CLOSE_DRAIN_MS);
    if (c->upgraded && !c->closed_by_peer &&
        send_frame(c, OP_CLOSE, NORMAL_CLOSURE, sizeof NORMAL_CLOSURE) != 0)
        return;
    shutdown(c->fd, SHUT_WR);
    char sink[4096];
    for (int i = 0; i < 64; i++) {
        ssize_t k = recv(c->fd, sink, sizeof sink, 0);
        if (k == 0 || (k < 0 && errno != EINTR)) break;
    }
}

void wsc_close(ws_client *c) {
    if (!c) return;
    if (c->fd >= 0) {
        close_politely(c);
        close(c->fd);
    }
    free(c->in.p);
    free(c->fragments.p);
    free(c->out.p);
    free(c);
}
