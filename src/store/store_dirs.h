/* Directories of a data directory: created private to the server's user, and a warning
 * when an existing one lets other users in. */
#ifndef IL_STORE_DIRS_H
#define IL_STORE_DIRS_H

#include <stdbool.h>

/* Creates path with mode 0700, or accepts an existing directory, warning on stderr when
 * its mode gives the group or others any access. False (errno set) when it cannot be
 * created. */
bool store_private_dir(const char *path);

#endif
