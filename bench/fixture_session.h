/* Connections of the benchmark fixtures (bench/fixtures.c) to inputlayer-server over
 * /ws: open and authenticate with an API key, run a program and wait for its result
 * while skipping the pushes that every connection of a graph receives (notifications,
 * notices), and tell the frames apart. Also the clock and the server's CPU time. */
#ifndef IL_BENCH_FIXTURE_SESSION_H
#define IL_BENCH_FIXTURE_SESSION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ws_client.h"

enum { FX_OK = 0, FX_FAILED = 1, FX_USAGE = 2, FX_INVALID = 3 };

typedef struct fx_target {
    const char *host, *port, *api_key;
    int timeout_ms; /* per send and per receive */
} fx_target;

typedef enum fx_frame_kind {
    FX_FRAME_PUSH, /* a notification or a notice: not for the fixture */
    FX_FRAME_RESULT,
    FX_FRAME_ERROR,
    FX_FRAME_DELTA,
    FX_FRAME_SUBSCRIPTION_ERROR,
    FX_FRAME_UNKNOWN,
} fx_frame_kind;

uint64_t fx_now_ns(void);

/* Connects to /ws?kg=KG and authenticates. Returns the connection, or NULL with the
 * reason in why. */
ws_client *fx_open(const fx_target *t, const char *kg, char *why, size_t why_len);

fx_frame_kind fx_classify(const json_t *frame);

/* Sends execute{id, program} and waits for the reply with that id, skipping pushes. The
 * reply must be a `result` with no statement errors and not truncated. On FX_OK the
 * result is returned in *result (the caller frees it; result may be NULL). Otherwise
 * FX_FAILED (connection) or FX_INVALID (a wrong reply), with the reason in why. */
int fx_execute(ws_client *ws, const char *id, const char *program, json_t **result, char *why,
               size_t why_len);

/* The CPU time of every thread of process pid so far, in nanoseconds (the first field of
 * /proc/PID/task/TID/schedstat), or -1 when it cannot be read. */
int64_t fx_process_cpu_ns(pid_t pid);

#endif
