/* Delivering notifications to connections (srv_deliver.c): each session's cursor into the
 * log, its registration with its replay, the request's own notifications, and the paced
 * rounds that serve every other connection. */
#ifndef IL_SERVER_SRV_DELIVER_H
#define IL_SERVER_SRV_DELIVER_H

#include "server/server.h"
#include "server/srv_notify.h"

/* Creates the log and hooks it to the engine (before the loop runs), and undoes that.
 * The pacing timer (deliver_timer) is the loop's, opened and closed with its others. */
void srv_deliver_start(srv_server *s);
void srv_deliver_stop(srv_server *s);
/* With the engine lock held, when c's session has opened: reads c's replay (per its
 * cursor) and registers c for live notifications from there, in one step. */
void srv_deliver_register(srv_conn *c, srv_notify_replay *replay);
/* On the loop thread, once a session registered with its cursor at `through` (its
 * replay's through_seq, or less: srv_conn.notify_from): the next srv_deliver_kick
 * starts a round for what it has not read. */
void srv_deliver_registered(srv_server *s, uint64_t through);
/* With the engine lock held, before c's session closes. */
void srv_deliver_unregister(srv_conn *c);
/* On the loop thread: sends the replay (or the replay_gap notice) and frees it. */
void srv_deliver_replay(srv_conn *c, srv_notify_replay *replay);

/* In a request's job (engine lock held): the notifications of the request's connection
 * published so far, kept in the capture to follow its reply. */
void srv_deliver_own(srv_capture *cap);
/* In a job (engine lock held) that pushes a subscription delta to c, another connection
 * than the job's own: c's notifications published so far, when it has read all but the
 * last few, kept in the capture to go out in the same write as the delta. A watcher of a graph
 * written every few milliseconds would otherwise get each write's notification in a paced round of
 * its own a moment later: one more wake-up of the loop and one more write(2), each tens of
 * microseconds of CPU on loopback (delta_keyed with one agent). */
void srv_deliver_with_push(srv_capture *cap, srv_conn *c);
/* On the loop thread: sends batches (to connections still open and reading) and frees
 * them; a connection's batches still queued by a round go first. */
void srv_deliver_batches(srv_note_batch *b);
/* At shutdown: frees the batches rounds queued, unsent. */
void srv_deliver_drop_queue(srv_server *s);
void srv_deliver_batch_free(srv_note_batch *b);
/* On the loop thread, after jobs are done: starts a round, now or when the pacing
 * window ends, if anything was published that no round read. */
void srv_deliver_kick(srv_server *s);

#endif
