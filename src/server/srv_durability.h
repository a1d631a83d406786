/* The durability mode of the server's engine (storage.persist.durability_mode,
 * docs/durability.md): `immediate` (the default) acknowledges a write once its log
 * record is synced; `batched` syncs at most every storage.persist.batch_sync_ms, and a
 * timer makes sure the last writes of a burst are synced within that time too; `async`
 * leaves the log to the kernel. */
#ifndef IL_SERVER_SRV_DURABILITY_H
#define IL_SERVER_SRV_DURABILITY_H

#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

/* Applies the configured mode to the engine. False with msg when the mode is unknown. */
bool srv_durability_start(srv_server *s, char *msg, size_t len);
/* On the loop thread after jobs ran: for `batched`, a sync within batch_sync_ms. */
void srv_durability_after_jobs(srv_server *s);

#endif
