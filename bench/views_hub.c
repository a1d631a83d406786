/* The subscribers of the views benchmark; see views_hub.h. */
#include "views_hub.h"

#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture_session.h"

enum { POLL_MS = 20 };

bool vh_init(vh_hub *h, long nsubs, long per_conn) {
    *h = (vh_hub){.status = FX_OK, .nsubs = nsubs, .nconns = (nsubs + per_conn - 1) / per_conn};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->arrived, &ca);
    pthread_condattr_destroy(&ca);
    h->subs = calloc((size_t)(nsubs ? nsubs : 1), sizeof *h->subs);
    h->conns = calloc((size_t)(h->nconns ? h->nconns : 1), sizeof *h->conns);
    if (!h->subs || !h->conns) return false;
    for (long i = 0; i < nsubs; i++) {
        snprintf(h->subs[i].name, sizeof h->subs[i].name, "s%ld", i);
        h->subs[i].key = -1;
        h->subs[i].next_seq = 1;
    }
    for (long c = 0; c < h->nconns; c++) {
        h->conns[c].first = c * per_conn;
        h->conns[c].n = c * per_conn + per_conn <= nsubs ? per_conn : nsubs - c * per_conn;
    }
    return true;
}

void vh_destroy(vh_hub *h) {
    atomic_store(&h->stop, true);
    if (h->reading) pthread_join(h->reader, NULL);
    for (long c = 0; h->conns && c < h->nconns; c++) wsc_close(h->conns[c].ws);
    free(h->conns), free(h->subs);
    pthread_cond_destroy(&h->arrived);
    pthread_mutex_destroy(&h->mu);
}

/* Records the first failure and ends the reader; called with h->mu held. */
__attribute__((format(printf, 3, 4))) static void fail(vh_hub *h, int status, const char *fmt,
                                                       ...) {
    if (h->status != FX_OK) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->why, sizeof h->why, fmt, ap);
    va_end(ap);
    h->status = status;
    atomic_store(&h->stop, true);
    pthread_cond_broadcast(&h->arrived);
}

/* The subscriber of a delta to connection c, from its name s<i>; NULL when it is not one
 * of c's. */
static vh_sub *delta_owner(vh_hub *h, long c, const json_t *delta) {
    const char *name = json_string_value(json_object_get(delta, "subscription"));
    long i;
    if (!name || name[0] != 's' || !fx_parse_long(name + 1, 0, h->nsubs - 1, &i)) return NULL;
    const vh_conn *sc = &h->conns[c];
    return i >= sc->first && i < sc->first + sc->n ? &h->subs[i] : NULL;
}

/* Checks a delta against its subscriber's expectation; called with h->mu held. */
static void take_delta(vh_hub *h, long c, const json_t *delta, uint64_t t) {
    vh_sub *s = delta_owner(h, c, delta);
    char why[400];
    if (!s) {
        char *text = json_dumps(delta, JSON_COMPACT);
        fail(h, FX_INVALID, "connection %ld got a delta of no subscription of its own: %.300s", c,
             text ? text : "?");
        free(text);
        return;
    }
    if (fx_check_delta_header(delta, s->name, s->generation, &s->next_seq, why, sizeof why) !=
        FX_OK) {
        fail(h, FX_INVALID, "%s", why);
        return;
    }
    const json_t *ins = json_object_get(delta, "inserted"),
                 *ret = json_object_get(delta, "retracted");
    fx_row got;
    if (json_array_size(ret) != 0) {
        fx_read_row(json_array_get(ret, 0), &got);
        fail(h, FX_INVALID, "%s: a retracted row [%" PRId64 ",%" PRId64 "] (no write retracts)",
             s->name, got.head, got.tail);
    } else if (!s->pending) {
        fx_read_row(json_array_get(ins, 0), &got);
        fail(h, FX_INVALID,
             "%s: a foreign or repeated row [%" PRId64 ",%" PRId64 "] where none was due", s->name,
             got.head, got.tail);
    } else if (fx_check_rows(ins, &s->expect, 1, why, sizeof why) != FX_OK) {
        fail(h, FX_INVALID, "%s, the delta of the write of [%" PRId64 ",%" PRId64 "]: %s", s->name,
             s->expect.head, s->expect.tail, why);
    } else {
        s->pending = false;
        s->at_ns = t;
        if (--h->outstanding == 0) pthread_cond_broadcast(&h->arrived);
    }
}

/* Reads the next message of connection c, and any already received behind it. */
static bool read_conn(vh_hub *h, long c) {
    ws_client *ws = h->conns[c].ws;
    do {
        const char *msg;
        size_t len;
        if (wsc_recv_text(ws, &msg, &len) != 0) {
            pthread_mutex_lock(&h->mu);
            fail(h, FX_FAILED, "subscriber connection %ld: %s", c, wsc_error(ws));
            pthread_mutex_unlock(&h->mu);
            return false;
        }
        uint64_t t = fx_now_ns();
        json_t *frame;
        fx_frame_kind kind = fx_classify_text(msg, len, &frame);
        pthread_mutex_lock(&h->mu);
        h->frames++;
        if (kind == FX_FRAME_DELTA)
            take_delta(h, c, frame, t);
        else if (kind != FX_FRAME_PUSH)
            fail(h, FX_INVALID, "subscriber connection %ld got: %.*s", c,
                 (int)(len > 300 ? 300 : len), msg);
        bool ok = h->status == FX_OK;
        pthread_mutex_unlock(&h->mu);
        json_decref(frame);
        if (!ok) return false;
    } while (wsc_buffered(ws));
    return true;
}

/* The one thread that reads every subscriber connection: with up to thousands of them, a
 * thread each would cost the shared CPUs more than the server's work it measures. */
static void *reader_main(void *arg) {
    vh_hub *h = arg;
    struct pollfd *pfd = calloc((size_t)h->nconns, sizeof *pfd);
    if (!pfd) {
        pthread_mutex_lock(&h->mu);
        fail(h, FX_FAILED, "out of memory");
        pthread_mutex_unlock(&h->mu);
        return NULL;
    }
    bool ok = true;
    for (long c = 0; c < h->nconns; c++) {
        pfd[c] = (struct pollfd){.fd = wsc_fd(h->conns[c].ws), .events = POLLIN};
        /* Frames read along with the subscription replies wait in the handle, not the
         * socket. */
        if (ok && wsc_buffered(h->conns[c].ws)) ok = read_conn(h, c);
    }
    while (!atomic_load(&h->stop)) {
        int ready = poll(pfd, (nfds_t)h->nconns, POLL_MS);
        for (long c = 0; ready > 0 && c < h->nconns && !atomic_load(&h->stop); c++)
            if (pfd[c].revents) {
                ready--;
                if (!read_conn(h, c)) break;
            }
    }
    free(pfd);
    return NULL;
}

int vh_start(vh_hub *h, char *why, size_t why_len) {
    if (h->nconns == 0) return FX_OK;
    if (pthread_create(&h->reader, NULL, reader_main, h) != 0) {
        snprintf(why, why_len, "cannot start the reader thread");
        return FX_FAILED;
    }
    h->reading = true;
    return FX_OK;
}

void vh_expect(vh_hub *h, long key, bool reaches, fx_row row) {
    pthread_mutex_lock(&h->mu);
    h->outstanding = 0;
    for (long i = 0; reaches && i < h->nsubs; i++) {
        vh_sub *s = &h->subs[i];
        if (s->key >= 0 && s->key != key) continue;
        s->pending = true;
        s->expect = row;
        h->outstanding++;
    }
    pthread_mutex_unlock(&h->mu);
}

int vh_wait(vh_hub *h, uint64_t sent_ns, long timeout_ms, uint64_t *deltas, size_t *ndeltas,
            uint64_t *last, char *why, size_t why_len) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += timeout_ms % 1000 * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&h->mu);
    while (h->outstanding > 0 && h->status == FX_OK)
        if (pthread_cond_timedwait(&h->arrived, &h->mu, &deadline) != 0) break;
    if (h->status == FX_OK && h->outstanding > 0) {
        long i = 0;
        while (!h->subs[i].pending) i++;
        fail(h, FX_INVALID,
             "%ld of the deltas of the write of [%" PRId64 ",%" PRId64
             "] did not come within %ld ms; the first missing is %s's",
             h->outstanding, h->subs[i].expect.head, h->subs[i].expect.tail, timeout_ms,
             h->subs[i].name);
    }
    int rc = h->status;
    *last = 0;
    for (long i = 0; i < h->nsubs; i++) {
        vh_sub *s = &h->subs[i];
        if (s->at_ns == 0) continue;
        uint64_t d = s->at_ns - sent_ns;
        if (deltas && rc == FX_OK) deltas[(*ndeltas)++] = d;
        if (d > *last) *last = d;
        s->at_ns = 0;
    }
    if (rc != FX_OK) snprintf(why, why_len, "%s", h->why);
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int vh_status(vh_hub *h, char *why, size_t why_len) {
    pthread_mutex_lock(&h->mu);
    int rc = h->status;
    if (rc != FX_OK) snprintf(why, why_len, "%s", h->why);
    pthread_mutex_unlock(&h->mu);
    return rc;
}

uint64_t vh_frames(vh_hub *h) {
    pthread_mutex_lock(&h->mu);
    uint64_t n = h->frames;
    pthread_mutex_unlock(&h->mu);
    return n;
}
