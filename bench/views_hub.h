/* The subscribers of the views benchmark (bench/views_fixture.c): their connections, the
 * one thread that reads them all, and the check of every delta against the row the
 * current write must add to each subscriber's query. The writer sets the expectation of
 * a write before sending it and then waits until every delta it causes has come; any
 * other delta, a retraction, a frame that is neither a delta nor a push, or a lost
 * connection fails the hub (FX_INVALID or FX_FAILED), which ends the reader. */
#ifndef IL_BENCH_VIEWS_HUB_H
#define IL_BENCH_VIEWS_HUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture_rows.h"
#include "ws_client.h"

/* One standing query, named s<i> for subs[i]. */
typedef struct vh_sub {
    char name[24];
    long key; /* -1: unbound */
    uint64_t generation, next_seq;
    bool pending;   /* a delta with `expect` is due (guarded by the hub's mu) */
    fx_row expect;  /* the row the current write adds to this query */
    uint64_t at_ns; /* when that delta came; 0 before */
} vh_sub;

typedef struct vh_conn {
    ws_client *ws;
    long first, n; /* its subscribers: subs[first .. first + n) */
} vh_conn;

typedef struct vh_hub {
    pthread_mutex_t mu;     /* guards everything below but subs[].name, key, conns */
    pthread_cond_t arrived; /* outstanding fell to 0, or a failure */
    vh_sub *subs;
    long nsubs;
    vh_conn *conns;
    long nconns;
    long outstanding; /* deltas due for the current write */
    uint64_t frames;  /* read by the subscriber connections */
    atomic_bool stop; /* the reader ends */
    int status;       /* FX_OK until something fails */
    char why[512];
    pthread_t reader;
    bool reading;
} vh_hub;

/* nsubs subscribers (names set, keys -1) on ceil(nsubs / per_conn) connections, which the
 * caller opens and subscribes before vh_start. False on OOM. */
bool vh_init(vh_hub *h, long nsubs, long per_conn);
/* Stops the reader, closes the connections and frees them. */
void vh_destroy(vh_hub *h);

/* Starts the reader. FX_OK or FX_FAILED with the reason in why. */
int vh_start(vh_hub *h, char *why, size_t why_len);

/* Before a write: the row it adds to `key`'s query, and whether that reaches any view (a
 * key past the hot heads has none); every unbound subscriber and key's own are then due
 * exactly that delta. */
void vh_expect(vh_hub *h, long key, bool reaches, fx_row row);

/* Waits up to timeout_ms for the deltas vh_expect made due (a missing one is INVALID).
 * On FX_OK appends each one's time since sent_ns to deltas (when not NULL; *ndeltas
 * counts them) and sets *last to the latest (0 when none was due). Otherwise the hub's
 * failure, with its reason in why. */
int vh_wait(vh_hub *h, uint64_t sent_ns, long timeout_ms, uint64_t *deltas, size_t *ndeltas,
            uint64_t *last, char *why, size_t why_len);

/* The hub's status so far, with its reason in why. */
int vh_status(vh_hub *h, char *why, size_t why_len);

/* Frames read so far. */
uint64_t vh_frames(vh_hub *h);

#endif
