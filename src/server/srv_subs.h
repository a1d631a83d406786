/* Standing queries over /ws (`.subscribe NAME ?query`, `.unsubscribe NAME`): each
 * subscription is a member of a family that shares one maintained view (src/views,
 * srv_subfam.h) of the connection's knowledge graph over persistent data only. After
 * every request the server publishes, to each subscriber whose rows changed, one
 * `subscription_delta` with the inserted and retracted rows, a per-graph revision and a
 * per-subscription seq. Switching graph or closing the connection drops the
 * subscriptions. Everything runs in jobs, with the engine lock held; deltas for other
 * connections leave as pushes of the job that caused them. */
#ifndef IL_SERVER_SRV_SUBS_H
#define IL_SERVER_SRV_SUBS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

/* At most this many subscriptions per connection (ws_max_subscriptions' default). */
#define SRV_MAX_SUBSCRIPTIONS 64

/* Whether the statement is `.subscribe ...` or `.unsubscribe ...`. */
bool srv_subs_is_command(const char *text, size_t len);
/* Runs one such statement of connection c and sends its reply (or error) with `id`. */
void srv_subs_command(srv_conn *c, const char *id, const char *text, size_t len);
/* After a request: drops subscriptions whose connection left their graph, then sends
 * every subscriber the delta of each view that changed, in revision order. */
void srv_subs_publish(srv_server *s);
/* Closes every subscription of c (its views). */
void srv_subs_drop_all(srv_conn *c);

#endif
