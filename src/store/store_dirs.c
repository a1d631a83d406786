/* Private directories of a data directory (store_dirs.h). The files in them are created
 * 0600 where they are made (wal_log.c, ckpt_file.c, backups); a directory that already
 * exists keeps the mode its owner chose, but a wider one is worth a warning: the log and
 * checkpoints hold every stored fact. */
#include "store/store_dirs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

bool store_private_dir(const char *path) {
    if (mkdir(path, 0700) == 0) return true;
    if (errno != EEXIST) return false;
    struct stat sb;
    if (stat(path, &sb) != 0) return false;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    if (sb.st_mode & 077)
        fprintf(stderr,
                "inputlayer: warning: %s has mode %04o: other users may read the stored data; "
                "0700 is recommended (chmod 700 %s)\n",
                path, (unsigned)(sb.st_mode & 07777), path);
    return true;
}
