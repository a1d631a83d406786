/* Delivering notifications to connections (srv_deliver.c): the log's sink, a session's
 * registration with its replay, and the replay's frames. */
#ifndef IL_SERVER_SRV_DELIVER_H
#define IL_SERVER_SRV_DELIVER_H

#include "server/server.h"
#include "server/srv_notify.h"

/* Creates the log and hooks it to the engine (before the loop runs), and undoes that. */
void srv_deliver_start(srv_server *s);
void srv_deliver_stop(srv_server *s);
/* With the engine lock held, when c's session has opened: reads c's replay (per its
 * cursor) and registers c for live notifications, in one step. */
void srv_deliver_register(srv_conn *c, srv_notify_replay *replay);
/* With the engine lock held, before c's session closes. */
void srv_deliver_unregister(srv_conn *c);
/* On the loop thread: sends the replay (or the replay_gap notice) and frees it; live
 * notifications up to its through_seq are not sent again. */
void srv_deliver_replay(srv_conn *c, srv_notify_replay *replay);

#endif
