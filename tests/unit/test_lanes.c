/* Tests of the admission lanes (src/server/srv_lanes.h): a write waits behind the read
 * that runs, not behind the reads queued; the fair share by weight over permit time;
 * min_permits and max_permits; an idle lane is levelled, not credited; the queue bounds
 * (forced work is never refused); removal counts; FIFO within a lane. */
#include <criterion/criterion.h>
#include <string.h>

#include "server/srv_lanes.h"

#define MS 1000000ull

typedef struct job {
    srv_lane_node n;
    int id;
} job;

static srv_lanes L;
static uint64_t now;

static void setup(unsigned permits, size_t max_queued, const srv_lane_limits *lim) {
    srv_lane_limits d[SRV_NLANES];
    srv_lanes_default_limits(d);
    srv_lanes_init(&L, permits, max_queued, lim ? lim : d);
    now = 1000 * MS;
}

static job *mk(job *j, int id, srv_lane_id lane) {
    memset(j, 0, sizeof *j);
    j->id = id;
    j->n.lane = (uint8_t)lane;
    return j;
}

static job *take(void) {
    return (job *)srv_lanes_take(&L, now);
}

/* Runs the next job for `ms` milliseconds; returns its id, or -1 when none may run. */
static int run_one(uint64_t ms) {
    job *j = take();
    if (!j) return -1;
    now += ms * MS;
    srv_lanes_finish(&L, &j->n, now);
    return j->id;
}

Test(lanes, a_write_waits_behind_the_running_read_not_the_queued_ones) {
    setup(1, 0, NULL);
    job reads[50], w;
    for (int i = 0; i < 50; i++)
        cr_assert(srv_lanes_push(&L, &mk(&reads[i], i, SRV_LANE_INTERACTIVE)->n, now));
    job *first = take(); /* a read holds the one permit */
    cr_assert_eq(first->id, 0);
    cr_assert(srv_lanes_push(&L, &mk(&w, 100, SRV_LANE_WRITE)->n, now));
    now += 2 * MS;
    srv_lanes_finish(&L, &first->n, now);
    cr_assert_eq(run_one(1), 100, "the write goes next, before 49 queued reads");
    cr_assert_eq(run_one(1), 1, "then the reads, in their order");
}

/* n reads (id 0) and n writes (id 1) queued alternately into js[0..2n). */
static void push_alternately(job *js, int n) {
    for (int i = 0; i < n; i++) {
        srv_lanes_push(&L, &mk(&js[i], 0, SRV_LANE_INTERACTIVE)->n, now);
        srv_lanes_push(&L, &mk(&js[n + i], 1, SRV_LANE_WRITE)->n, now);
    }
}

Test(lanes, permit_time_is_shared_by_weight) {
    srv_lane_limits lim[SRV_NLANES];
    srv_lanes_default_limits(lim);
    lim[SRV_LANE_INTERACTIVE].weight = 3;
    lim[SRV_LANE_WRITE].weight = 1;
    setup(1, 0, lim);
    static job js[800];
    push_alternately(js, 400);
    int ran[2] = {0, 0};
    for (int i = 0; i < 400; i++) ran[run_one(1)]++;
    /* equal hold times, weights 3:1: three reads to a write, give or take the estimate's
       warm-up */
    cr_assert(ran[0] >= 285 && ran[0] <= 315, "interactive %d of 400", ran[0]);
    /* longer jobs cost their lane more: 4 ms writes against 1 ms reads at weights 1:1 */
    srv_lanes_default_limits(lim);
    setup(1, 0, lim);
    push_alternately(js, 400);
    uint64_t held[2] = {0, 0};
    for (int i = 0; i < 300; i++) {
        job *j = take();
        uint64_t ms = j->id ? 4 : 1;
        now += ms * MS;
        held[j->id] += ms;
        srv_lanes_finish(&L, &j->n, now);
    }
    double share = (double)held[0] / (double)(held[0] + held[1]);
    cr_assert(share > 0.4 && share < 0.6, "interactive held %.2f of the permit time", share);
}

Test(lanes, min_permits_first_and_max_permits_never_exceeded) {
    srv_lane_limits lim[SRV_NLANES];
    srv_lanes_default_limits(lim);
    lim[SRV_LANE_BACKGROUND].min_permits = 1;
    lim[SRV_LANE_INTERACTIVE].max_permits = 2;
    setup(4, 0, lim);
    job js[10];
    for (int i = 0; i < 6; i++) srv_lanes_push(&L, &mk(&js[i], i, SRV_LANE_INTERACTIVE)->n, now);
    srv_lanes_push(&L, &mk(&js[6], 6, SRV_LANE_BACKGROUND)->n, now);
    job *a = take();
    cr_assert_eq(a->id, 6, "background is below its minimum: it goes first");
    job *b = take(), *c = take();
    cr_assert_eq(b->id, 0);
    cr_assert_eq(c->id, 1);
    cr_assert_null(take(), "interactive is at its max_permits: a permit stays free");
    srv_lane_stats st;
    srv_lanes_stats(&L, SRV_LANE_INTERACTIVE, &st);
    cr_assert_eq(st.running, 2);
    cr_assert_eq(st.queued, 4);
    srv_lanes_finish(&L, &b->n, now + MS);
    cr_assert_eq(take()->id, 2, "a finish frees the lane");
}

Test(lanes, an_idle_lane_is_levelled_not_credited) {
    setup(1, 0, NULL);
    static job js[200];
    for (int i = 0; i < 100; i++) srv_lanes_push(&L, &mk(&js[i], 0, SRV_LANE_INTERACTIVE)->n, now);
    for (int i = 0; i < 50; i++) cr_assert_eq(run_one(1), 0); /* writes idle meanwhile */
    for (int i = 0; i < 100; i++) srv_lanes_push(&L, &mk(&js[100 + i], 1, SRV_LANE_WRITE)->n, now);
    int writes = 0;
    for (int i = 0; i < 20; i++) writes += run_one(1);
    /* banked credit would run 20 writes in a row; levelled, they alternate */
    cr_assert(writes >= 8 && writes <= 12, "%d writes of 20", writes);
}

Test(lanes, queue_bounds_refuse_but_never_forced_work) {
    srv_lane_limits lim[SRV_NLANES];
    srv_lanes_default_limits(lim);
    lim[SRV_LANE_WRITE].max_queued = 2;
    setup(1, 5, lim);
    job js[10];
    cr_assert(srv_lanes_push(&L, &mk(&js[0], 0, SRV_LANE_WRITE)->n, now));
    cr_assert(srv_lanes_push(&L, &mk(&js[1], 1, SRV_LANE_WRITE)->n, now));
    cr_assert_not(srv_lanes_push(&L, &mk(&js[2], 2, SRV_LANE_WRITE)->n, now), "the lane is full");
    mk(&js[3], 3, SRV_LANE_WRITE)->n.forced = true;
    cr_assert(srv_lanes_push(&L, &js[3].n, now), "forced work is never refused");
    for (int i = 4; i < 7; i++)
        cr_assert(srv_lanes_push(&L, &mk(&js[i], i, SRV_LANE_INTERACTIVE)->n, now));
    cr_assert_not(srv_lanes_push(&L, &mk(&js[7], 7, SRV_LANE_BACKGROUND)->n, now),
                  "the pool's bound: five queued, not counting forced work");
    srv_lane_stats st;
    srv_lanes_stats(&L, SRV_LANE_WRITE, &st);
    cr_assert_eq(st.rejected_full, 1);
    srv_lanes_stats(&L, SRV_LANE_BACKGROUND, &st);
    cr_assert_eq(st.rejected_full, 1);
}

Test(lanes, removal_is_counted_and_keeps_the_order) {
    setup(1, 0, NULL);
    job js[4];
    for (int i = 0; i < 4; i++) srv_lanes_push(&L, &mk(&js[i], i, SRV_LANE_INTERACTIVE)->n, now);
    srv_lanes_remove(&L, &js[1].n, true);
    srv_lanes_remove(&L, &js[3].n, false);
    srv_lane_stats st;
    srv_lanes_stats(&L, SRV_LANE_INTERACTIVE, &st);
    cr_assert_eq(st.timed_out, 1);
    cr_assert_eq(st.stopped_waiting, 1);
    cr_assert_eq(st.queued, 2);
    cr_assert_eq(run_one(1), 0);
    cr_assert_eq(run_one(1), 2);
    cr_assert_eq(run_one(1), -1);
    cr_assert_not(srv_lanes_waiting(&L));
    srv_lanes_stats(&L, SRV_LANE_INTERACTIVE, &st);
    cr_assert_eq(st.admitted, 2);
    cr_assert_eq(st.held_ns, 2 * MS);
}

Test(lanes, names) {
    cr_assert_str_eq(srv_lane_name(SRV_LANE_INTERACTIVE), "interactive");
    cr_assert_str_eq(srv_lane_name(SRV_LANE_WRITE), "write");
    cr_assert_str_eq(srv_lane_name(SRV_LANE_BACKGROUND), "background");
}
