/* Subscription groups (protocol v5 `subscribe` frame): several named standing queries
 * under one subscription name. The reply is one `snapshot` in which every member is exact
 * at one revision; then every publish that changed any member sends one
 * `subscription_group_delta` listing all members in order. Each member is a family
 * member (il_subscribe) exactly like a `.subscribe`, so groups and single subscriptions
 * share views, revisions and the name space. Everything but srv_group_parse runs in
 * jobs with the engine lock held. */
#ifndef IL_SERVER_SRV_SUBGROUP_H
#define IL_SERVER_SRV_SUBGROUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

/* A `subscribe` frame as read: one allocation, released with free(). */
typedef struct srv_group_spec srv_group_spec;

/* Reads the frame's shape (loop thread, no engine): NULL with *why (an `Invalid message
 * format` text) when a field is missing or of the wrong type. Names and queries are
 * checked by srv_group_subscribe. */
srv_group_spec *srv_group_parse(json_t *root, char *why, size_t len);
/* Runs the request (its group field): checks names and queries, joins every member and
 * sends the snapshot with `subscribed`, or one error and registers nothing. */
void srv_group_subscribe(srv_req *rq);

/* Whether c has a group of that name. */
bool srv_group_exists(const srv_conn *c, const char *name, size_t len);
/* Ends c's group of that name; false when there is none. */
bool srv_group_unsubscribe(srv_conn *c, const char *name, size_t len);
/* Drops, silently, c's groups of graphs other than kg (the connection left them). */
void srv_groups_leave_graph(srv_conn *c, const char *kg);
/* After the families routed their rows: one group delta per group that changed, or one
 * subscription_error when a member's view failed. */
void srv_groups_publish(srv_conn *c);
/* A member of the group got rows: it is published by srv_groups_publish_touched. */
void srv_group_touched(srv_server *s, void *group);
void srv_groups_publish_touched(srv_server *s);
void srv_groups_drop_all(srv_conn *c);

#endif
