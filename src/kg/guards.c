/* Statement guards of a session (include/inputlayer.h, il_limits): the limits a session
 * applies to its next statements, the guard each statement runs under (exec/guard.h),
 * and how a stopped statement is reported. */
#include <string.h>

#include "kg/kg.h"

void il_session_set_limits(il_session *s, const il_limits *l) {
    if (l)
        s->limits = *l;
    else
        memset(&s->limits, 0, sizeof s->limits);
}

void kg_guard_begin(il_session *s, exec_guard *g) {
    const il_limits *l = &s->limits;
    exec_guard_init(g, l->cancel, l->deadline_ns, l->max_memory_bytes, l->budget);
    g->threads = l->threads ? l->threads : s->e->eval_threads;
    if (s->pinned_live) {
        g->pin = s->pin_seq;
        g->snap = &s->e->snap_watch;
    }
    s->guard = g;
}

il_result *kg_guard_end(il_session *s, exec_guard *g, il_result *r) {
    s->guard = NULL;
    if (g->stop) {
        il_result_free(r);
        r = res_error("%s", il_stop_message(g->stop));
        r->stop = g->stop;
    }
    r->peak_bytes = g->meter.peak;
    r->threads_used = g->threads_used;
    exec_guard_finish(g);
    return r;
}

const char *il_stop_message(il_stop why) {
    switch (why) {
    case IL_STOP_CANCELLED:
        return "Request cancelled before it began committing; nothing was applied";
    case IL_STOP_DEADLINE:
        return "Request deadline exceeded before it began committing; nothing was applied";
    case IL_STOP_MEMORY:
        return "Request exceeded the per-query memory limit "
               "(storage.performance.max_query_memory_bytes) before it began committing; "
               "nothing was applied. Narrow the query or bind more of its arguments";
    case IL_STOP_BUDGET:
        return "Request stopped: the queries running on the server hold their whole memory "
               "budget (storage.performance.max_total_query_memory_bytes); it was stopped "
               "before it began committing and nothing was applied. Retry later";
    case IL_STOP_SNAPSHOT_TOO_OLD:
        return "Request stopped: it read a revision that writes have since replaced past the "
               "memory kept for old revisions (storage.performance.max_snapshot_memory_bytes); "
               "nothing was applied. Retry: it will read the current revision";
    case IL_STOP_NONE:
        break;
    }
    return "";
}
