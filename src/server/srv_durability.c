/* The durability mode (srv_durability.h). In `batched` mode the engine syncs the log at a
 * commit when batch_sync_ms have passed since the last sync, so a burst's last writes
 * would wait for the next commit; a one-shot timer, armed when jobs ran and no sync is
 * due yet, syncs them in a job of its own. Nothing runs while no one writes. */
#include "server/srv_durability.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool srv_durability_start(srv_server *s, char *msg, size_t len) {
    const char *mode = s->cfg->durability_mode;
    il_durability d;
    if (strcmp(mode, "immediate") == 0) {
        d = IL_DURABILITY_IMMEDIATE;
    } else if (strcmp(mode, "batched") == 0) {
        d = IL_DURABILITY_BATCHED;
    } else if (strcmp(mode, "async") == 0) {
        d = IL_DURABILITY_ASYNC;
    } else {
        snprintf(msg, len,
                 "storage.persist.durability_mode must be immediate, batched or async, not "
                 "'%.64s'",
                 mode);
        return false;
    }
    s->batched = d == IL_DURABILITY_BATCHED;
    s->group_commit = d == IL_DURABILITY_IMMEDIATE;
    s->log_records_at_start = il_engine_log_written(s->engine);
    il_engine_set_durability(s->engine, d, (unsigned)s->cfg->batch_sync_ms);
    return true;
}

typedef struct sync_job {
    srv_job job;
    srv_server *srv;
} sync_job;

static void sync_run(srv_job *j) {
    char *err = NULL;
    if (!il_engine_sync(((sync_job *)j)->srv->engine, &err)) {
        fprintf(stderr, "ERROR: syncing the log: %s\n", err ? err : "unknown error");
        free(err);
    }
}

static void sync_done(srv_job *j) {
    ((sync_job *)j)->srv->syncing = false;
    free(j);
}

static void on_sync(uv_timer_t *t) {
    srv_server *s = t->data;
    if (s->stopping || s->syncing) return;
    sync_job *j = calloc(1, sizeof *j);
    j->job.run = sync_run;
    j->job.done = sync_done;
    j->srv = s;
    s->syncing = true;
    j->job.node.lane = SRV_LANE_BACKGROUND;
    srv_pool_submit(&s->pool, &j->job, true);
}

void srv_durability_after_jobs(srv_server *s) {
    if (!s->batched || s->stopping || s->syncing || uv_is_active((uv_handle_t *)&s->sync_timer) ||
        uv_is_closing((uv_handle_t *)&s->sync_timer))
        return;
    uv_timer_start(&s->sync_timer, on_sync, (uint64_t)s->cfg->batch_sync_ms, 0);
}
