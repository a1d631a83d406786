/* Admission lanes of the compute pool (protocol-later.md, "Admission algorithm"): the
 * jobs waiting for a worker queue in one of three lanes, `interactive` (queries, `read`,
 * proofs, session work), `write` (programs that commit) and `background` (the server's
 * own rounds: notification delivery, held deltas, checkpoints), and a permit that frees
 * goes to the lane that has used the least permit time per unit of weight. So a write
 * never waits behind a queue of reads, only behind the one read running, and reads keep
 * their share while writes pour in.
 *
 * Fair share: each lane accumulates vtime += held time / weight. A lane below its
 * min_permits is served first; none exceeds its max_permits; a lane that was idle is
 * levelled to the busiest active lane's vtime when work arrives, so that it cannot bank
 * credit; a running estimate of a lane's hold time is charged at the grant and corrected
 * at the finish; ties go interactive, write, background. The pool is work-conserving:
 * a permit stays idle only while every lane with work is at its max_permits.
 *
 * Not thread-safe: the pool calls everything under its own mutex. */
#ifndef IL_SERVER_SRV_LANES_H
#define IL_SERVER_SRV_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { SRV_LANE_INTERACTIVE, SRV_LANE_WRITE, SRV_LANE_BACKGROUND, SRV_NLANES } srv_lane_id;

/* The lane's name in settings and metrics ("interactive", "write", "background"). */
const char *srv_lane_name(srv_lane_id id);

/* What a queued job carries for its lane (embedded in the pool's job). */
typedef struct srv_lane_node {
    struct srv_lane_node *next, *prev;
    uint8_t lane;     /* srv_lane_id */
    bool forced;      /* the server's own work: not counted against max_queued */
    uint64_t at_ns;   /* when it was queued; then when it was granted a permit */
    uint64_t charged; /* the hold time charged at the grant (ns) */
} srv_lane_node;

typedef struct srv_lane_limits {
    unsigned weight;      /* >= 1 */
    unsigned min_permits; /* served first while fewer run */
    unsigned max_permits; /* 0: the pool's size */
    size_t max_queued;    /* 0: no bound of its own */
} srv_lane_limits;

typedef struct srv_lane_stats {
    unsigned running;
    size_t queued;
    uint64_t admitted;        /* granted a permit */
    uint64_t rejected_full;   /* refused: the lane's queue (or the pool's) was full */
    uint64_t timed_out;       /* taken out of the queue: deadline or longest wait passed */
    uint64_t stopped_waiting; /* taken out of the queue: cancelled or disconnected */
    uint64_t wait_ns;         /* time granted jobs waited in the queue */
    uint64_t held_ns;         /* time finished jobs held a permit */
} srv_lane_stats;

typedef struct srv_lane {
    srv_lane_limits lim;
    srv_lane_node *head, *tail;
    size_t nqueued, nforced;
    unsigned running;
    double vtime;    /* permit time used per unit of weight (ns) */
    uint64_t est_ns; /* running estimate of one job's hold time */
    srv_lane_stats st;
} srv_lane;

typedef struct srv_lanes {
    srv_lane lane[SRV_NLANES];
    unsigned permits;
    size_t max_queued; /* the pool's bound over every lane; 0: none */
    size_t nqueued, nforced;
} srv_lanes;

/* The defaults: weights 4, 4 and 1, no minimum, no maximum but the pool's, no queue bound
 * of the lane's own. */
void srv_lanes_default_limits(srv_lane_limits lim[SRV_NLANES]);
void srv_lanes_init(srv_lanes *L, unsigned permits, size_t max_queued,
                    const srv_lane_limits lim[SRV_NLANES]);
/* Queues n in its lane (n->lane, n->forced set); false, queueing nothing, when the lane's
 * queue or the pool's is full (forced work is never refused). */
bool srv_lanes_push(srv_lanes *L, srv_lane_node *n, uint64_t now);
/* Takes a queued node out (cancel, deadline, disconnect); timed_out tells which count. */
void srv_lanes_remove(srv_lanes *L, srv_lane_node *n, bool timed_out);
/* The next job to run by the fair share, counted as running; NULL when no lane with work
 * may run one more. */
srv_lane_node *srv_lanes_take(srv_lanes *L, uint64_t now);
/* A job taken by srv_lanes_take finished. */
void srv_lanes_finish(srv_lanes *L, srv_lane_node *n, uint64_t now);
/* Whether some lane has queued work (a worker that found none eligible waits for a
 * finish). */
bool srv_lanes_waiting(const srv_lanes *L);
void srv_lanes_stats(const srv_lanes *L, srv_lane_id id, srv_lane_stats *out);

#endif
