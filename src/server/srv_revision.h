/* Per-graph revisions (protocol-later.md 1.8, 1.11): a knowledge graph's revision counts
 * the programs that changed its persistent state, from the log position the server
 * opened at (srv_server.revision_base). Every program that changes persistent state writes
 * at least one log record, so a revision issued before a restart is at most that
 * position, and equal to it only when the graph has not changed since: one revision never
 * names two states. So a subscription's snapshot and deltas and a read's snapshot can say
 * which state they are exact at, in one order. Engine lock held by
 * every caller: the engine's change hook runs in the job of the statement that changed
 * the graph, and whoever reads a revision reads the graph under the same lock. */
#ifndef IL_SERVER_SRV_REVISION_H
#define IL_SERVER_SRV_REVISION_H

#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

/* One program's changes (as the change hook receives them: once per statement, or once
 * per program that ran as a transaction): each graph they touch moves to its next
 * revision, once per call. */
void srv_revision_note(srv_server *s, const il_change *changes, size_t n);
/* The revision at which the graph's relation (its facts or schema) last changed in this
 * run, the revision at start when it did not; the creation or drop of the graph counts as a change
 * of all. */
uint64_t srv_revision_of_rel(srv_server *s, const char *kg, const char *rel);
/* The same for the graph's persistent rules (any of them). */
uint64_t srv_revision_of_rules(srv_server *s, const char *kg);
/* The graph's revision now. */
uint64_t srv_revision(srv_server *s, const char *kg);
/* For the reply to a program: `,"revision":N`, the revision at which its writes are
 * visible (that of the graph written last), when a statement since `statements_before`
 * (srv_server.revision_stmt then) changed a graph; nothing otherwise. */
void srv_revision_put_if_changed(srv_server *s, uint64_t statements_before, il_buf *b);
/* Frees the counters (at shutdown). */
void srv_revisions_free(srv_server *s);

#endif
