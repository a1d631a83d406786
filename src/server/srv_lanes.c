/* Admission lanes: per-lane queues and the weighted fair share of the compute permits
 * (srv_lanes.h). */
#include "server/srv_lanes.h"

#include <string.h>

/* The hold time charged for a lane's first job, before anything was measured: 1 ms. */
#define FIRST_HOLD_ESTIMATE_NS 1000000u

const char *srv_lane_name(srv_lane_id id) {
    static const char *const names[SRV_NLANES] = {"interactive", "write", "background"};
    return id < SRV_NLANES ? names[id] : "unknown";
}

void srv_lanes_default_limits(srv_lane_limits lim[SRV_NLANES]) {
    for (int i = 0; i < SRV_NLANES; i++) lim[i] = (srv_lane_limits){4, 0, 0, 0};
    lim[SRV_LANE_BACKGROUND].weight = 1;
}

void srv_lanes_init(srv_lanes *L, unsigned permits, size_t max_queued,
                    const srv_lane_limits lim[SRV_NLANES]) {
    memset(L, 0, sizeof *L);
    L->permits = permits ? permits : 1;
    L->max_queued = max_queued;
    for (int i = 0; i < SRV_NLANES; i++) {
        L->lane[i].lim = lim[i];
        if (!L->lane[i].lim.weight) L->lane[i].lim.weight = 1;
        L->lane[i].est_ns = FIRST_HOLD_ESTIMATE_NS;
    }
}

static bool active(const srv_lane *l) {
    return l->nqueued || l->running;
}

static unsigned max_permits(const srv_lanes *L, const srv_lane *l) {
    return l->lim.max_permits && l->lim.max_permits < L->permits ? l->lim.max_permits : L->permits;
}

bool srv_lanes_push(srv_lanes *L, srv_lane_node *n, uint64_t now) {
    srv_lane *l = &L->lane[n->lane < SRV_NLANES ? n->lane : SRV_LANE_INTERACTIVE];
    n->lane = (uint8_t)(l - L->lane);
    if (!n->forced && ((L->max_queued && L->nqueued - L->nforced >= L->max_queued) ||
                       (l->lim.max_queued && l->nqueued - l->nforced >= l->lim.max_queued))) {
        l->st.rejected_full++;
        return false;
    }
    if (!active(l)) {
        /* Levelled to the busiest active lane: time spent idle is not credit. */
        for (int i = 0; i < SRV_NLANES; i++)
            if (active(&L->lane[i]) && L->lane[i].vtime > l->vtime) l->vtime = L->lane[i].vtime;
    }
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    n->at_ns = now;
    l->nqueued++;
    L->nqueued++;
    if (n->forced) {
        l->nforced++;
        L->nforced++;
    }
    return true;
}

static void unlink_node(srv_lanes *L, srv_lane *l, srv_lane_node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    n->next = n->prev = NULL;
    l->nqueued--;
    L->nqueued--;
    if (n->forced) {
        l->nforced--;
        L->nforced--;
    }
}

void srv_lanes_remove(srv_lanes *L, srv_lane_node *n, bool timed_out) {
    srv_lane *l = &L->lane[n->lane];
    unlink_node(L, l, n);
    if (timed_out)
        l->st.timed_out++;
    else
        l->st.stopped_waiting++;
}

srv_lane_node *srv_lanes_take(srv_lanes *L, uint64_t now) {
    int pick = -1;
    /* below its minimum first, then the least vtime; ties in lane order */
    for (int i = 0; i < SRV_NLANES && pick < 0; i++) {
        const srv_lane *l = &L->lane[i];
        if (l->nqueued && l->running < l->lim.min_permits && l->running < max_permits(L, l))
            pick = i;
    }
    if (pick < 0) {
        for (int i = 0; i < SRV_NLANES; i++) {
            const srv_lane *l = &L->lane[i];
            if (!l->nqueued || l->running >= max_permits(L, l)) continue;
            if (pick < 0 || l->vtime < L->lane[pick].vtime) pick = i;
        }
    }
    if (pick < 0) return NULL;
    srv_lane *l = &L->lane[pick];
    srv_lane_node *n = l->head;
    unlink_node(L, l, n);
    l->running++;
    l->st.admitted++;
    l->st.wait_ns += now > n->at_ns ? now - n->at_ns : 0;
    n->at_ns = now;
    n->charged = l->est_ns;
    l->vtime += (double)n->charged / l->lim.weight;
    return n;
}

void srv_lanes_finish(srv_lanes *L, srv_lane_node *n, uint64_t now) {
    srv_lane *l = &L->lane[n->lane];
    uint64_t held = now > n->at_ns ? now - n->at_ns : 0;
    l->running--;
    l->st.held_ns += held;
    /* the estimate charged at the grant, corrected to what it held */
    l->vtime += ((double)held - (double)n->charged) / l->lim.weight;
    l->est_ns = (l->est_ns * 7 + held) / 8;
}

bool srv_lanes_waiting(const srv_lanes *L) {
    return L->nqueued != 0;
}

void srv_lanes_stats(const srv_lanes *L, srv_lane_id id, srv_lane_stats *out) {
    const srv_lane *l = &L->lane[id];
    *out = l->st;
    out->running = l->running;
    out->queued = l->nqueued;
}
