/* Standing queries over /ws (`.subscribe NAME ?query`, `.unsubscribe NAME`): each
 * subscription is the engine's (il_subscribe: a member of a family that shares one
 * maintained view of the connection's knowledge graph over persistent data only). After
 * every request the server publishes, to each subscriber whose rows changed, one
 * `subscription_delta` with the inserted and retracted rows, a per-graph revision and a
 * per-subscription seq. Switching graph or closing the connection drops the
 * subscriptions. Everything runs in jobs, with the engine lock held; deltas for other
 * connections leave as pushes of the job that caused them. Subscription groups
 * (srv_subgroup.h) share the name space, the count, the revisions and the publishing. */
#ifndef IL_SERVER_SRV_SUBS_H
#define IL_SERVER_SRV_SUBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/server.h"
#include "value/value.h"

/* Whether the statement is `.subscribe ...` or `.unsubscribe ...`. */
bool srv_subs_is_command(const char *text, size_t len);
/* Runs one such statement of connection c and sends its reply (or error) with `id`. */
void srv_subs_command(srv_conn *c, const char *id, const char *text, size_t len);
/* After a request of `own`: drops subscriptions whose connection left their graph, then sends
 * every subscriber the delta of each view that changed, in revision order. */
void srv_subs_publish(srv_server *s, srv_conn *own);
/* Closes every subscription of c (its views). */
void srv_subs_drop_all(srv_conn *c);
/* With the engine lock held, once c reads again (no longer over SRV_OUTBOUND_LIMIT):
 * each subscription that held changes while it did not sends them as one delta. */
void srv_subs_release(srv_conn *c);
/* On the loop thread, when c is no longer over SRV_OUTBOUND_LIMIT: srv_subs_release in
 * a job, if any subscription holds changes for it. */
void srv_subs_release_later(srv_conn *c);
/* Frees the per-graph revision counters (at shutdown). */
void srv_subs_free(srv_server *s);

/* ---- shared with subscription groups (srv_subgroup.h); engine lock held ---- */
/* What the ctx of an engine subscription (il_sub_ctx) points to: a single subscription
 * (srv_subs.c) or a group (srv_subgroup.c), each beginning with this. */
typedef enum srv_sub_owner { SRV_SUB_SINGLE, SRV_SUB_GROUP } srv_sub_owner;
/* Whether the name matches [A-Za-z0-9_.:-]{1,128}. */
bool srv_subs_name_ok(const char *name, size_t len);
/* Whether c has a subscription or a group of that name (one name space). */
bool srv_subs_name_taken(const srv_conn *c, const char *name, size_t len);
/* Whether c may open `more` subscriptions (a group counts once per member query); else
 * false with the error text in msg. */
bool srv_subs_room(const srv_conn *c, unsigned more, char *msg, size_t len);
/* Appends the subscription's column headers as a JSON array. */
void srv_subs_put_columns(il_buf *b, const il_sub *sub);
/* In a job with a delta for c: whether c is not reading (its subscriptions then hold
 * their changes until srv_subs_release). Marks c so that its next drain releases them. */
bool srv_subs_must_hold(srv_conn *c);
/* Whether c's user may read graph kg now (admins may read every graph). */
bool srv_subs_may_read(srv_conn *c, const char *kg);
/* Puts c on the list of connections that publishing visits. */
void srv_subs_watch(srv_conn *c);

#endif
