/* The interference fixture's background load; see fixture_background.h. */
#include "fixture_background.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_data.h"
#include "fixture_rows.h"

enum { SLOW_READS = 8 };

static const char LONG_JOIN[] = "?two_hop(X, Z), edge(Z, X)";
static const char LARGE_READ[] = "?two_hop(X, Z)";

struct fx_background {
    ws_client *looper, *slow;
    fx_row *expected;
    size_t nexpected;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    uint64_t *samples;
    size_t nsamples, cap;
    int status;
    char why[512];
};

/* (X, Z) with X -> Y -> Z and Z -> X: for every edge Z -> X, the Y after X that reach Z. */
static fx_row *long_join_rows(const gg_edge *e, size_t n, size_t *nrows) {
    size_t cap = 1024, k = 0;
    fx_row *rows = malloc(cap * sizeof *rows);
    for (size_t i = 0; rows && i < n; i++) {
        int64_t z = e[i].src, x = e[i].dst;
        for (size_t j = fx_first_edge_from(e, n, x); j < n && e[j].src == x; j++) {
            if (!fx_has_edge(e, n, e[j].dst, z)) continue;
            if (k == cap) {
                fx_row *grown = realloc(rows, (cap *= 2) * sizeof *rows);
                if (!grown) {
                    free(rows);
                    return NULL;
                }
                rows = grown;
            }
            rows[k++] = (fx_row){x, z};
        }
    }
    if (rows) *nrows = fx_rows_sort_unique(rows, k);
    return rows;
}

static void *loop_main(void *arg) {
    fx_background *bg = arg;
    for (long i = 0; !atomic_load(&bg->stop); i++) {
        char id[32];
        snprintf(id, sizeof id, "long%ld", i);
        json_t *res = NULL;
        uint64_t t0 = fx_now_ns(), t1 = 0;
        int rc = fx_send_execute(bg->looper, id, LONG_JOIN, bg->why, sizeof bg->why);
        if (rc == FX_OK) rc = fx_await_result(bg->looper, id, &res, &t1, bg->why, sizeof bg->why);
        if (rc == FX_OK) {
            char diff[400];
            rc = fx_check_rows(json_object_get(res, "rows"), bg->expected, bg->nexpected, diff,
                               sizeof diff);
            if (rc != FX_OK) snprintf(bg->why, sizeof bg->why, "%s: %s", LONG_JOIN, diff);
        }
        json_decref(res);
        if (rc == FX_OK && bg->nsamples == bg->cap) {
            size_t cap = bg->cap ? 2 * bg->cap : 256;
            uint64_t *grown = realloc(bg->samples, cap * sizeof *grown);
            if (!grown) {
                rc = FX_FAILED;
                snprintf(bg->why, sizeof bg->why, "out of memory");
            } else {
                bg->samples = grown;
                bg->cap = cap;
            }
        }
        if (rc != FX_OK) {
            bg->status = rc;
            break;
        }
        bg->samples[bg->nsamples++] = t1 - t0;
    }
    return NULL;
}

fx_background *fx_background_start(const fx_target *t, const gg_edge *edges, size_t n, char *why,
                                   size_t why_len) {
    fx_background *bg = calloc(1, sizeof *bg);
    if (!bg || !(bg->expected = long_join_rows(edges, n, &bg->nexpected))) {
        snprintf(why, why_len, "out of memory");
        free(bg);
        return NULL;
    }
    bg->looper = fx_open(t, "perf", why, why_len);
    bg->slow = bg->looper ? fx_open(t, "perf", why, why_len) : NULL;
    bool ok = bg->slow != NULL;
    for (int i = 0; ok && i < SLOW_READS; i++) {
        char id[32];
        snprintf(id, sizeof id, "slow%d", i);
        ok = fx_send_execute(bg->slow, id, LARGE_READ, why, why_len) == FX_OK;
    }
    if (ok && pthread_create(&bg->thread, NULL, loop_main, bg) != 0) {
        snprintf(why, why_len, "cannot start the long join's thread");
        ok = false;
    }
    bg->started = ok;
    if (!ok) {
        fx_background_stop(bg, NULL, NULL, NULL, 0);
        return NULL;
    }
    return bg;
}

int fx_background_stop(fx_background *bg, uint64_t **samples, size_t *n, char *why,
                       size_t why_len) {
    atomic_store(&bg->stop, true);
    if (bg->started) pthread_join(bg->thread, NULL);
    int status = bg->status;
    if (status != FX_OK && why) snprintf(why, why_len, "%s", bg->why);
    if (samples) {
        *samples = bg->samples;
        *n = bg->nsamples;
        bg->samples = NULL;
    }
    wsc_close(bg->looper);
    wsc_close(bg->slow);
    free(bg->samples);
    free(bg->expected);
    free(bg);
    return status;
}
