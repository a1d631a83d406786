/* storage.backup_dir (docs/durability.md, "Backup"): checked and created at start, then
 * handed to the engine together with a capture of the identity store, so that an export
 * holds the users, API keys and ACLs as they were when its snapshot was taken. */
#ifndef IL_SERVER_SRV_BACKUP_H
#define IL_SERVER_SRV_BACKUP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

/* The configured backup directory as an absolute path, created (owner-only) when
 * missing; *dir NULL when none is configured. False with a message when it cannot be
 * used, or lies inside the data directory (which need not exist yet): an export there
 * would be part of the data it exports. */
bool srv_backup_prepare(const srv_config *cfg, char **dir, char *err, size_t errlen);
/* Gives the engine the directory (NULL: `.backup` stays refused) and the capture of
 * the identity store. */
void srv_backup_attach(srv_server *s, const char *dir);

#endif
