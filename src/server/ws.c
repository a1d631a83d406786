/* WebSocket framing (wslay's event API) for a connection after its upgrade. Messages are
 * handed to proto.c whole; a message over 16 MiB (8 KiB before authentication) is refused
 * with a notice and close code 1009 without being buffered. */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_pipeline.h"

/* Before authentication: at a frame's start, its header must be whole in c->in; a frame
 * or message declared over SRV_MAX_PREAUTH_MESSAGE is refused there. Returns how much of
 * the input wslay may read now (0: wait for more input, or refused). */
static size_t preauth_window(srv_conn *c, size_t avail) {
    if (c->preauth_frame_left == 0) {
        const uint8_t *h = (const uint8_t *)c->in.data + c->in_pos;
        if (avail < 2) return 0;
        uint64_t n = h[1] & 0x7f;
        size_t hlen = 2 + (n == 126 ? 2 : n == 127 ? 8 : 0) + ((h[1] & 0x80) ? 4 : 0);
        if (avail < hlen) return 0;
        if (n == 126) {
            n = (uint64_t)h[2] << 8 | h[3];
        } else if (n == 127) {
            n = 0;
            for (int i = 0; i < 8; i++) n = n << 8 | h[2 + i];
        }
        uint8_t opcode = h[0] & 0x0f;
        if (!(opcode & 0x8) && opcode != WSLAY_CONTINUATION_FRAME) c->preauth_msg_len = 0;
        if (n > SRV_MAX_PREAUTH_MESSAGE ||
            (!(opcode & 0x8) && (c->preauth_msg_len += n) > SRV_MAX_PREAUTH_MESSAGE)) {
            c->preauth_too_big = true;
            return 0;
        }
        c->preauth_frame_left = hlen + n;
    }
    return avail < c->preauth_frame_left ? avail : (size_t)c->preauth_frame_left;
}

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user) {
    (void)flags;
    srv_conn *c = user;
    size_t avail = c->in.len - c->in_pos;
    /* Until authentication succeeds, wslay reads no further than the current frame, so
     * that the next header is checked once the frame before it has been acted on. */
    if (!c->authed && !c->too_big && !c->preauth_too_big) avail = preauth_window(c, avail);
    /* Once a message is too large, nothing more of it is read. */
    if (avail == 0 || c->too_big || c->preauth_too_big) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (len > avail) len = avail;
    if (!c->authed) c->preauth_frame_left -= len;
    memcpy(buf, c->in.data + c->in_pos, len);
    c->in_pos += len;
    return (ssize_t)len;
}

static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user) {
    (void)ctx;
    (void)flags;
    srv_conn *c = user;
    il_buf_put(&c->out, data, len);
    c->queued_bytes -= len < c->queued_bytes ? len : c->queued_bytes;
    return (ssize_t)len;
}

static void frame_start_cb(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_start_arg *arg, void *user) {
    (void)ctx;
    srv_conn *c = user;
    if (arg->opcode & 0x8) return; /* control frames are small and not part of a message */
    if (arg->opcode != WSLAY_CONTINUATION_FRAME) c->msg_len = 0;
    c->msg_len += arg->payload_length;
    if (c->msg_len > SRV_MAX_MESSAGE) c->too_big = true;
}

static void msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *user) {
    (void)ctx;
    srv_conn *c = user;
    if (c->too_big || c->state != SRV_WS) return;
    /* Binary frames are ignored, as in the original. */
    if (arg->opcode == WSLAY_TEXT_FRAME)
        srv_proto_message(c, (const char *)arg->msg, arg->msg_length);
}

static const struct wslay_event_callbacks CALLBACKS = {
    .recv_callback = recv_cb,
    .send_callback = send_cb,
    .on_frame_recv_start_callback = frame_start_cb,
    .on_msg_recv_callback = msg_cb,
};

bool srv_ws_start(srv_conn *c) {
    if (wslay_event_context_server_init(&c->ws, &CALLBACKS, c) != 0) return false;
    /* The size limit is ours (frame_start_cb), so that a notice can precede the close. */
    wslay_event_config_set_max_recv_msg_length(c->ws, UINT64_MAX >> 1);
    c->state = SRV_WS;
    srv_timer_start(c, (uint64_t)c->srv->cfg->ws_auth_timeout_ms);
    srv_tick_start(c);
    return true;
}

void srv_ws_flush(srv_conn *c) {
    /* wslay must not send from inside its own receive callbacks; srv_ws_feed flushes
     * when wslay_event_recv returns. */
    if (!c->ws || c->in_recv) return;
    wslay_event_send(c->ws);
    c->queued_bytes -= c->out_framed < c->queued_bytes ? c->out_framed : c->queued_bytes;
    c->out_framed = 0;
    if (c->out.len > SRV_CONN_BUF_KEEP) {
        /* A large reply's frames go out as they are, and the buffer goes with them: a
         * connection does not keep the capacity of the largest reply it ever had. */
        srv_conn_write_ref(c, c->out.data, c->out.len, free, c->out.data);
        il_buf_init(&c->out);
    } else if (c->out.len) {
        srv_conn_write(c, c->out.data, c->out.len);
        il_buf_clear(&c->out);
    }
}

/* Input consumed: the buffer is kept for the next messages unless a large one grew it. */
static void in_consumed(srv_conn *c) {
    if (c->in.cap > SRV_CONN_BUF_KEEP)
        il_buf_free(&c->in);
    else
        il_buf_clear(&c->in);
    c->in_pos = 0;
}

void srv_ws_send(srv_conn *c, const char *json, size_t len) {
    /* Frames of a request or job are kept until the pipeline releases them. */
    if (srv_tl_capture) {
        srv_capture_frame(srv_tl_capture, c, json, len);
        return;
    }
    /* The credential fence: once the connection's credential ended, no data frame. */
    if (!c->ws || c->fenced) return;
    /* With nothing in wslay's queues the frame is framed straight into the output, where
     * wslay would have put it: its queue would copy the payload once more, and an
     * allocation and a frame's state go with it, for each reply and push. Whatever wslay
     * holds (a pong, a close, an earlier frame) keeps it in the queue behind them. */
    if (wslay_event_get_queued_msg_count(c->ws) == 0 && !wslay_event_get_close_sent(c->ws) &&
        !wslay_event_get_close_received(c->ws)) {
        srv_ws_frame_text(&c->out, json, len);
        c->queued_bytes += len;
        c->out_framed += len;
        return;
    }
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)json, len};
    if (wslay_event_queue_msg(c->ws, &m) == 0) c->queued_bytes += len;
}

/* A server frame is unmasked and needs no state, so notifications are framed once, in
 * the job that reads them, and the same bytes go to every connection that sees them. */
void srv_ws_frame_text(il_buf *wire, const char *json, size_t len) {
    uint8_t head[10] = {0x81}; /* FIN, text */
    size_t hlen = 2;
    if (len < 126) {
        head[1] = (uint8_t)len;
    } else if (len <= 0xffff) {
        head[1] = 126;
        head[2] = (uint8_t)(len >> 8);
        head[3] = (uint8_t)len;
        hlen = 4;
    } else {
        head[1] = 127;
        for (int i = 0; i < 8; i++) head[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
        hlen = 10;
    }
    il_buf_put(wire, (const char *)head, hlen);
    il_buf_put(wire, json, len);
}

/* The payloads of frames made by srv_ws_frame_text, through wslay: for when wslay may
 * not send now (inside its receive callbacks) or frames are being captured. */
static void send_unframed(srv_conn *c, const char *wire, size_t len) {
    for (size_t at = 0; at + 2 <= len;) {
        const uint8_t *h = (const uint8_t *)wire + at;
        uint64_t n = h[1] & 0x7f;
        size_t hlen = 2;
        if (n == 126) {
            n = (uint64_t)h[2] << 8 | h[3];
            hlen = 4;
        } else if (n == 127) {
            n = 0;
            for (int i = 0; i < 8; i++) n = n << 8 | h[2 + i];
            hlen = 10;
        }
        srv_ws_send(c, wire + at + hlen, (size_t)n);
        at += hlen + (size_t)n;
    }
}

void srv_ws_send_wire(srv_conn *c, const char *wire, size_t len, void (*release)(void *ctx),
                      void *ctx) {
    if (srv_tl_capture || c->in_recv) {
        send_unframed(c, wire, len);
        srv_ws_flush(c);
        release(ctx);
        return;
    }
    if (!c->ws || c->fenced || wslay_event_get_close_sent(c->ws)) {
        release(ctx);
        return;
    }
    srv_ws_flush(c); /* what wslay holds goes first */
    srv_conn_write_ref(c, wire, len, release, ctx);
}

void srv_ws_ping(srv_conn *c) {
    if (!c->ws || c->state != SRV_WS) return;
    struct wslay_event_msg m = {WSLAY_PING, (const uint8_t *)"", 0};
    if (wslay_event_queue_msg(c->ws, &m) == 0) c->srv->counters.pings++;
    srv_ws_flush(c);
}

void srv_ws_close(srv_conn *c, uint16_t code) {
    if (!c->ws) return;
    if (c->in_recv) {
        /* Queued after the frames still waiting in wslay, once recv returns. */
        if (!c->pending_close) c->pending_close = code;
        return;
    }
    /* The close frame goes to wslay's control queue, which is sent before queued
     * messages: flush those first so that a final notice precedes the close. */
    srv_ws_flush(c);
    wslay_event_queue_close(c->ws, code, NULL, 0);
    srv_ws_flush(c);
}

void srv_ws_feed(srv_conn *c, const char *data, size_t len) {
    if (c->in_pos == c->in.len) in_consumed(c);
    if (len) il_buf_put(&c->in, data, len);
    c->in_recv = true;
    wslay_event_recv(c->ws);
    c->in_recv = false;
    if (c->too_big && c->state == SRV_WS) {
        srv_notice_close(c, SRV_N_MESSAGE_TOO_LARGE, "Message over 16777216 bytes; closing",
                         WSLAY_CODE_MESSAGE_TOO_BIG);
        return;
    }
    if (c->preauth_too_big && c->state == SRV_WS) {
        srv_notice_close(c, SRV_N_MESSAGE_TOO_LARGE,
                         "Message over 8192 bytes before authentication; closing",
                         WSLAY_CODE_MESSAGE_TOO_BIG);
        return;
    }
    if (c->in_pos == c->in.len) in_consumed(c);
    srv_ws_flush(c);
    /* Frames queued while wslay held the connection may have paused reading; written
       now (perhaps at once, with no write request to complete), they no longer hold it. */
    if (c->reading_paused && c->state == SRV_WS && srv_outbound(c) <= SRV_OUTBOUND_LIMIT)
        srv_pipe_pump(c);
    if (c->pending_close) {
        uint16_t code = c->pending_close;
        c->pending_close = 0;
        srv_ws_close(c, code);
    }
    if (c->state == SRV_WS && !wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws))
        srv_conn_close(c);
    else if (c->state == SRV_CLOSING)
        srv_conn_close(c); /* closed inside the callbacks: linger now that it is flushed */
}

void srv_ws_free(srv_conn *c) {
    if (c->ws) wslay_event_context_free(c->ws);
    c->ws = NULL;
}
