/* The writes of the durable-write fixtures (bench/fixture_insert.c): a connection to
 * knowledge graph `perf` that inserts facts `+event(i, i)`, one or many per `execute`, one
 * request in flight, and checks every reply: the result of that request, saying it
 * inserted exactly the facts sent, with a revision above the last one the connection saw.
 * Also the check that the graph holds exactly the facts written. */
#ifndef IL_BENCH_FIXTURE_FACTS_H
#define IL_BENCH_FIXTURE_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture_session.h"

typedef struct fx_fact_writer {
    ws_client *ws;
    char name[24]; /* in request ids and messages */
    long batch;    /* facts per execute */
    char *frame;   /* the request being sent */
    size_t frame_cap;
    long requests;         /* sent so far: the next id */
    int64_t last_revision; /* 0 before the first write */
    int64_t *revisions;    /* of the writes since fx_writer_take_revisions */
    size_t nrevisions, revisions_cap;
    int status; /* FX_OK until a write fails */
    char why[512];
} fx_fact_writer;

/* Opens a connection to `perf` for writes of `batch` facts each. FX_OK, or the status with
 * the reason in w->why. */
int fx_writer_open(fx_fact_writer *w, const fx_target *t, const char *name, long batch);

/* Writes facts first .. first + batch - 1 in one execute and checks the reply. With
 * sent_ns / acked_ns, the time just before the send and the time the reply was read.
 * FX_OK, or FX_FAILED / FX_INVALID with the reason in w->why (then every later call
 * returns it at once). */
int fx_writer_write(fx_fact_writer *w, int64_t first, uint64_t *sent_ns, uint64_t *acked_ns);

/* Moves the revisions of the writes so far to the end of *all (grown as needed; *n its
 * count). False when memory runs out. */
bool fx_writer_take_revisions(fx_fact_writer *w, int64_t **all, size_t *n, size_t *cap);

/* Closes the connection and frees what the writer holds. */
void fx_writer_close(fx_fact_writer *w);

/* Whether the n revisions (sorted here) are all different: each write is a commit of its
 * own. FX_OK, or FX_INVALID with the first repeat in why. */
int fx_check_distinct_revisions(int64_t *revisions, size_t n, char *why, size_t why_len);

/* Asks the graph, on the writer's connection, how many facts event(X, X) it holds; they
 * must be `expected`. FX_OK, or the status with the reason in w->why. */
int fx_check_fact_count(fx_fact_writer *w, int64_t expected);

#endif
